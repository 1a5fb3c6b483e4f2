package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/server"
)

// synthFiles writes a corpus of n papers with seed into a new directory
// and returns the directory and what synth printed.
func synthFiles(t *testing.T, n int, seed string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"synth", "--papers", itoa(n), "--seed", seed, "--out", dir}, &out, &errOut); err != nil {
		t.Fatalf("synth: %v\n%s", err, errOut.String())
	}
	return dir, out.String()
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// One seed gives one corpus, byte for byte; another seed another.
func TestSynthDeterministic(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	a, out := synthFiles(t, n, "42")
	b, _ := synthFiles(t, n, "42")
	c, _ := synthFiles(t, n, "43")
	for _, name := range []string{papersFile, citationsFile, manifestFile} {
		if !bytes.Equal(read(t, filepath.Join(a, name)), read(t, filepath.Join(b, name))) {
			t.Errorf("%s differs between two runs of seed 42", name)
		}
		if name != manifestFile && bytes.Equal(read(t, filepath.Join(a, name)), read(t, filepath.Join(c, name))) {
			t.Errorf("%s is the same for seeds 42 and 43", name)
		}
	}
	if !strings.Contains(out, "SYNTHETIC") {
		t.Errorf("synth's output does not say the corpus is synthetic:\n%s", out)
	}
	for _, cmd := range importCommands(a) {
		if !strings.Contains(out, "\n"+cmd+"\n") {
			t.Errorf("synth's output lacks the line %q:\n%s", cmd, out)
		}
	}
}

// TestSynthImports imports a corpus with the commands synth prints and
// finds in the database every paper, authorship and citation it wrote.
func TestSynthImports(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 500
	}
	dir, _ := synthFiles(t, n, "3")
	var papers, authorships, refs int
	for line := range strings.Lines(string(read(t, filepath.Join(dir, citationsFile)))) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, ";", 7)
		papers++
		authorships += strings.Count(f[5], ",") + 1
		if f[4] != "" {
			refs += strings.Count(f[4], ",") + 1
		}
	}
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		importCorpus(t, bdb, dir)
		for _, c := range []struct {
			table string
			want  int
		}{{"papers", papers}, {"authorships", authorships}, {"paper_references", refs}} {
			got, err := bdb.NewSelect().Table(c.table).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if int(got) != c.want {
				t.Errorf("%s: %d rows, want %d", c.table, got, c.want)
			}
		}
		var synthetic int
		if err := bdb.NewSelect().Table("papers").ColumnExpr("COUNT(*)").Where("comments LIKE 'synthetic record%'").Scan(ctx, &synthetic); err != nil {
			t.Fatal(err)
		}
		if synthetic != papers {
			t.Errorf("%d papers say they are synthetic, want all %d", synthetic, papers)
		}
	})
}

// importCorpus runs the imports synth prints, each as the papergraph
// command does: its formats (FORMAT PATH... joined by +) one after the
// other, deriving once, after the last.
func importCorpus(t *testing.T, bdb *bun.DB, dir string) {
	t.Helper()
	for _, cmd := range importCommands(dir) {
		groups := strings.Split(strings.TrimPrefix(cmd, "papergraph import "), " + ")
		for i, g := range groups {
			f := strings.Fields(g)
			format, ok := ingest.FormatByName(f[0])
			if !ok {
				t.Fatalf("%s: unknown format %q", cmd, f[0])
			}
			o := ingest.Options{Format: format, Paths: f[1:], SkipDerive: i < len(groups)-1}
			if _, err := ingest.Import(context.Background(), bdb, o); err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
		}
	}
}

// TestRun drives a server over a small corpus with the whole mix and
// reads its JSON: every operation at each concurrency, answered without
// an error.
func TestRun(t *testing.T) {
	n := 1200
	if testing.Short() {
		n = 400
	}
	dir, _ := synthFiles(t, n, "5")
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	importCorpus(t, bdb, dir)
	srv, err := server.New(server.Config{DB: bdb})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	sources := map[string]bool{}
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			mu.Lock()
			sources[host] = true
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	var out, errOut bytes.Buffer
	// Each cell sends at least one request whatever its duration, which
	// is all the assertions below need; the full run attacks longer.
	d := 200 * time.Millisecond
	if testing.Short() {
		d = 20 * time.Millisecond
	}
	args := []string{"run", "--url", ts.URL, "--corpus", dir, "--clients", "1,2", "--duration", d.String(), "--label", "SQLite"}
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	var got struct {
		Synthetic bool
		Label     string
		Results   []result
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("run's output is not JSON: %v\n%s", err, out.String())
	}
	if !got.Synthetic {
		t.Error("run's JSON does not say the corpus is synthetic")
	}
	if got.Label != "SQLite" {
		t.Errorf("run's JSON has label %q, want the --label SQLite", got.Label)
	}
	const ops = 10
	if len(got.Results) != 2*ops {
		t.Fatalf("%d results, want %d operations at 2 concurrencies", len(got.Results), ops)
	}
	for _, r := range got.Results {
		if r.Requests == 0 || r.Errors > 0 || r.P50Ms <= 0 || r.P99Ms < r.P50Ms {
			t.Errorf("%+v: want requests, no errors, 0 < p50 <= p99", r)
		}
	}
	// The path's pair is three hops apart, whatever the corpus's size.
	if !regexp.MustCompile(`collaboration-path: researcher \S+ to researcher \S+, 3 hops\n`).MatchString(errOut.String()) {
		t.Errorf("standard error does not name a path's pair three hops apart:\n%s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "export-search-10k") {
		t.Errorf("no table on standard error:\n%s", errOut.String())
	}
	// Two clients are two addresses to the server's per-client share.
	if len(sources) < 2 {
		t.Errorf("the load came from %v; want a loopback address per connection", sources)
	}
}
