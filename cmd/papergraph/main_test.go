package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

func TestImportThenStats(t *testing.T) {
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			dsn := dbtest.New(t, kind)
			ctx := context.Background()
			var out, errOut bytes.Buffer
			if err := run(ctx, []string{"import", "--db", dsn, "paperscape", "../../ingest/testdata/paperscape.csv"}, &out, &errOut); err != nil {
				t.Fatalf("import: %v\n%s", err, errOut.String())
			}
			if !strings.Contains(out.String(), "paperscape: read 4, inserted 4, updated 0, unchanged 0") {
				t.Errorf("import summary = %q", out.String())
			}
			if !regexp.MustCompile(`\npaperscape: derived figures by step: bulk indexes [0-9.]+[µm]?s( \(cpu [0-9.]+[µm]?s\))?, citations [0-9.]+[µm]?s( \(cpu [0-9.]+[µm]?s\))?, .*researchers [0-9.]+[µm]?s \(2 transactions(, cpu [0-9.]+[µm]?s)?\), .*queue [0-9.]+[µm]?s`).MatchString(out.String()) {
				t.Errorf("import summary = %q, want the derive's steps", out.String())
			}
			out.Reset()
			if err := run(ctx, []string{"stats", "--db", dsn, "--json"}, &out, &errOut); err != nil {
				t.Fatal(err)
			}
			var got db.Stats
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("stats --json printed %q: %v", out.String(), err)
			}
			if got.Papers != 4 || got.Authorships == 0 || got.Researchers == 0 {
				t.Errorf("stats = %+v, want 4 papers with authors", got)
			}
		})
	}
}

// Formats joined by + load in one run that derives once, at its end, and
// leave the archive that one import a format leaves.
func TestImportFormatsInOneRun(t *testing.T) {
	const kaggle = "../../ingest/testdata/kaggle.jsonl"
	// The Paperscape fixture and one more record, which cites two of the
	// Kaggle fixture's papers.
	fixture, err := os.ReadFile("../../ingest/testdata/paperscape.csv")
	if err != nil {
		t.Fatal(err)
	}
	paperscape := filepath.Join(t.TempDir(), "paperscape.csv")
	citing := "2501.00001;hep-th;2;2;0704.0001,0704.0002;A.Citer;Citing two Kaggle papers\n"
	if err := os.WriteFile(paperscape, append(fixture, citing...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			one := dbtest.New(t, kind)
			var out, errOut bytes.Buffer
			if err := run(ctx, []string{"import", "--db", one, "kaggle", kaggle, "+", "paperscape", paperscape}, &out, &errOut); err != nil {
				t.Fatalf("import: %v\n%s", err, errOut.String())
			}
			summary := out.String()
			if !regexp.MustCompile(`(?m)^kaggle: read [1-9][0-9]*, inserted [1-9][0-9]*, .* \(derived figures 0s\)\npaperscape: read 5, `).MatchString(summary) {
				t.Errorf("import summary = %q, want the Kaggle records read and not derived, then Paperscape's", summary)
			}
			if strings.Count(summary, "derived figures by step") != 1 || !strings.Contains(summary, "paperscape: derived figures by step: bulk indexes") {
				t.Errorf("import summary = %q, want one derive, after the last format", summary)
			}
			apart := dbtest.New(t, kind)
			for _, args := range [][]string{{"kaggle", kaggle}, {"paperscape", paperscape}} {
				if err := run(ctx, append([]string{"import", "--db", apart}, args...), &out, &errOut); err != nil {
					t.Fatalf("import %s: %v\n%s", args[0], err, errOut.String())
				}
			}
			oneDB, apartDB := dbtest.Open(t, one), dbtest.Open(t, apart)
			want := dbtest.Dump(t, apartDB)
			if len(want) == 0 {
				t.Fatal("the imports one at a time left nothing to compare")
			}
			dbtest.SameDump(t, dbtest.Dump(t, oneDB), want)
			var cited int
			if err := oneDB.NewSelect().Table("papers").ColumnExpr("count(*)").Where("citation_count > 0").Scan(ctx, &cited); err != nil || cited != 2 {
				t.Errorf("papers cited after the run: %d, %v; want the two the new record cites", cited, err)
			}
		})
	}
}

func TestCommandLineErrors(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "x.db")
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    []string
		want    error
		message string // in the error or on stderr
	}{
		{nil, errUsage, "Commands:"},
		{[]string{"frobnicate"}, errUsage, `unknown command "frobnicate"`},
		{[]string{"import", "--db", dsn}, errUsage, "import needs a FORMAT"},
		{[]string{"import", "--db", dsn, "bibtex", "x.bib"}, errUsage, `unknown format "bibtex"`},
		{[]string{"import", "--db", dsn, "kaggle"}, errUsage, "needs at least one PATH"},
		{[]string{"import", "--db", dsn, "demo", "x"}, errUsage, "takes no paths"},
		{[]string{"import", "--db", dsn, "kaggle", empty, "+"}, errUsage, `"+" must stand between two FORMAT PATH... groups`},
		{[]string{"import", "--db", dsn, "+", "kaggle", empty}, errUsage, `"+" must stand between two FORMAT PATH... groups`},
		{[]string{"import", "--db", dsn, "kaggle", empty, "+", "+", "paperscape", empty}, errUsage, `"+" must stand between`},
		{[]string{"import", "--db", dsn, "kaggle", empty, "+", "bibtex", "x.bib"}, errUsage, `unknown format "bibtex"`},
		{[]string{"import", "--db", dsn, "kaggle", empty, "+", "paperscape"}, errUsage, "import paperscape needs at least one PATH"},
		{[]string{"import", "--db", dsn, "kaggle", empty}, errReported, "file is empty"},
		{[]string{"import", "--db", dsn, "kaggle", filepath.Join(dir, "missing.jsonl")}, errReported, "no such file"},
		{[]string{"stats", "--nope"}, errUsage, "flag provided but not defined"},
		{[]string{"import", "-h"}, errHelp, "paperscape"},
		{[]string{"serve", "--db", dsn, "--rate-limit", "-1"}, errUsage, "--rate-limit -1"},
		{[]string{"serve", "--db", dsn, "--redis", "http://user:secret@localhost:6379"}, errUsage, "--redis http://user:***@localhost:6379"},
		{[]string{"serve", "--db", dsn, "--trusted-documents", filepath.Join(dir, "missing.json")}, errUsage, "no such file"},
		{[]string{"serve", "--db", dsn, "--db-replica", "postgres://replica/db"}, errUsage, "--db-replica needs a PostgreSQL --db"},
		{[]string{"serve", "--db", dsn, "--otlp-endpoint", "::not a url"}, errUsage, "--otlp-endpoint"},
		{[]string{"serve", "--db", dsn, "--trusted-documents", empty}, errUsage, "want a JSON object"},
		{[]string{"serve", "-h"}, errHelp, "--trusted-documents"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tt.args, &out, &errOut)
		if !errors.Is(err, tt.want) {
			t.Errorf("run(%q) = %v, want %v", tt.args, err, tt.want)
			continue
		}
		if text := err.Error() + errOut.String(); !strings.Contains(text, tt.message) {
			t.Errorf("run(%q) said %q, want it to mention %q", tt.args, text, tt.message)
		}
	}
}

// An import stopped part way leaves what it wrote underived and, into an
// empty archive, a bulk load open (the readers' indexes dropped); migrate
// ends it: the archive is then the one an uninterrupted import of the
// same records gives.
func TestMigrateEndsAStoppedImport(t *testing.T) {
	// The import stops once the writer has committed its first two
	// batches, as one killed between two transactions does.
	const file, batch, stopAt = "../../demo/data/pscp-1991.csv.gz", 50, 100
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			dsn := dbtest.New(t, kind)
			bdb := dbtest.Open(t, dsn)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stopped := firstRecords(ingest.Paperscape, stopAt, func() {
				defer cancel()
				for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if s, err := db.ReadStats(ctx, bdb); err != nil || s.Papers == stopAt {
						return
					}
				}
			})
			if _, err := ingest.Import(ctx, bdb, ingest.Options{Format: stopped, Paths: []string{file}, BatchSize: batch}); !errors.Is(err, context.Canceled) {
				t.Fatalf("the stopped import returned %v, want %v", err, context.Canceled)
			}
			stored, err := db.ReadStats(context.Background(), bdb)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Papers != stopAt {
				t.Fatalf("the stopped import stored %d papers, want its first %d", stored.Papers, stopAt)
			}
			if open, err := db.BulkOpen(context.Background(), bdb); err != nil || !open {
				t.Fatalf("after the stopped import BulkOpen = %v, %v; the test needs an open bulk load", open, err)
			}

			var out, errOut bytes.Buffer
			if err := prepareToServe(context.Background(), dsn, false, &out, &errOut); err != nil {
				t.Fatal(err)
			}
			if hint := "run `papergraph migrate`"; !strings.Contains(errOut.String(), hint) {
				t.Errorf("serve said %q, want it to say %s", errOut.String(), hint)
			}
			out.Reset()
			if err := run(context.Background(), []string{"migrate", "--db", dsn}, &out, &errOut); err != nil {
				t.Fatalf("migrate: %v\n%s", err, errOut.String())
			}
			// The stopped bulk load's indexes are built now, and said so.
			if !strings.Contains(out.String(), "derived figures by step: bulk indexes ") {
				t.Errorf("migrate said %q, want the derive's steps", out.String())
			}
			clean := dbtest.Open(t, dbtest.NewMigrated(t, kind))
			uninterrupted := firstRecords(ingest.Paperscape, stored.Papers, nil)
			if _, err := ingest.Import(context.Background(), clean, ingest.Options{Format: uninterrupted, Paths: []string{file}, BatchSize: batch}); err != nil {
				t.Fatal(err)
			}
			dbtest.SameDump(t, dbtest.Dump(t, bdb), dbtest.Dump(t, clean))
		})
	}
}

// firstRecords is f reading only its first n records. At record n+1 it
// calls stop, if given, and fails as the import stopped by it does.
func firstRecords(f ingest.Format, n int, stop func()) ingest.Format {
	read := f.Read
	f.Read = func(ctx context.Context, e ingest.Entry, s ingest.Sink) error {
		record, seen := s.Record, 0
		s.Record = func(r ingest.Record, p ingest.Position) error {
			if seen++; seen <= n {
				return record(r, p)
			}
			if stop != nil {
				stop()
				return context.Canceled
			}
			return nil
		}
		return read(ctx, e, s)
	}
	return f
}

func TestProgressLine(t *testing.T) {
	var out bytes.Buffer
	p := &progressLine{w: &out, label: "listing"}
	p.draw(ingest.Progress{Bytes: 512 << 10, TotalBytes: 1 << 20, Records: 1000, Elapsed: 2 * time.Second})
	p.draw(ingest.Progress{Bytes: 1 << 20, TotalBytes: 1 << 20, Records: 2000, Elapsed: 4 * time.Second, Deriving: true, DeriveStart: 3 * time.Second})
	p.draw(ingest.Progress{Bytes: 1 << 20, TotalBytes: 1 << 20, Records: 2000, Elapsed: 64 * time.Second, Deriving: true, DeriveStart: 3 * time.Second, DeriveStep: "researchers"})
	want := "\r\033[Klisting: 1000 records (500/s) [============------------]  50.0% 0.5 MB/1.0 MB ETA 2s" +
		"\r\033[Klisting: 2000 records written; building indexes and derived figures (1s)" +
		"\r\033[Klisting: 2000 records written; building indexes and derived figures (1m1s): researchers"
	if got := out.String(); got != want {
		t.Errorf("progress lines = %q, want %q", got, want)
	}
}

func TestNewRateLimiter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "redis://" + ln.Addr().String() + "/0"
	ln.Close()
	tests := []struct {
		name      string
		limit     int
		redis     string
		wantNil   bool
		wantWarns int
	}{
		{"off", 0, closed, true, 0},
		{"in memory", 10, "", false, 0},
		{"redis down: each process its own budgets", 10, closed, false, 2}, // at start, at the first spend
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			l, closeLimiter, err := newRateLimiter(t.Context(), tt.limit, tt.redis, slog.New(slog.NewTextHandler(&log, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer closeLimiter()
			if (l == nil) != tt.wantNil {
				t.Fatalf("limiter %v, want nil %v", l, tt.wantNil)
			}
			if l != nil {
				res, err := l.Spend(t.Context(), "ip:192.0.2.1", 1)
				if err != nil || !res.Allowed || res.Remaining != tt.limit-1 {
					t.Errorf("Spend: allowed %v, remaining %d, error %v; want allowed, %d, nil", res.Allowed, res.Remaining, err, tt.limit-1)
				}
			}
			if got := strings.Count(log.String(), "level=WARN"); got != tt.wantWarns {
				t.Errorf("%d warnings, want %d:\n%s", got, tt.wantWarns, log.String())
			}
		})
	}
}

// import --cpuprofile and --memprofile leave pprof profiles (gzipped
// protocol buffers) and say what the heap peaked at.
func TestImportProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	var out, errOut bytes.Buffer
	args := []string{"import", "--db", filepath.Join(dir, "x.db"), "--cpuprofile", cpu, "--memprofile", mem, "paperscape", "../../ingest/testdata/paperscape.csv"}
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("import: %v\n%s", err, errOut.String())
	}
	for _, path := range []string{cpu, mem} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: %d bytes, not a gzipped profile", path, len(b))
		}
	}
	if !strings.Contains(errOut.String(), "heap profile "+mem+": Go heap peaked at") {
		t.Errorf("import's stderr does not report the heap's peak:\n%s", errOut.String())
	}
}

// Each step of the derive gives its CPU time beside its wall time, where
// the system says it, and leaves it out where it does not.
func TestStepTimesGiveCPU(t *testing.T) {
	got := stepTimes([]ingest.DeriveStep{
		{Name: "bulk indexes", Elapsed: 1500 * time.Millisecond, CPU: 1200 * time.Millisecond, Transactions: 1},
		{Name: "researchers", Elapsed: 19 * time.Second, CPU: 18 * time.Second, Transactions: 2},
		{Name: "queue", Elapsed: time.Millisecond, Transactions: 1},
	})
	want := "bulk indexes 1.5s (cpu 1.2s), researchers 19s (2 transactions, cpu 18s), queue 1ms"
	if got != want {
		t.Errorf("stepTimes = %q, want %q", got, want)
	}
}
