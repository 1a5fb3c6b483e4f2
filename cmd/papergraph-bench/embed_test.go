package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// TestEmbedBenchOnCorpus: embed imports synth's papers, embeds every one
// and reports what a paper costs on disk.
func TestEmbedBenchOnCorpus(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 150
	}
	dir, _ := synthFiles(t, n, "5")
	r := runEmbedBench(t, "--corpus", dir)
	if r.Papers != int64(n) || !r.Synthetic || r.Dim == 0 || r.Words == 0 || r.LearnDocs != n {
		t.Errorf("report %+v, want %d synthetic papers learned from and a model", r, n)
	}
	// A vector is 4 bytes a dimension, and its row more.
	if r.BytesPerPaper < float64(4*r.Dim) || r.ModelBytes < 4*r.Dim*r.Words {
		t.Errorf("%.0f B a paper, model %d B; want at least the vectors' %d and %d", r.BytesPerPaper, r.ModelBytes, 4*r.Dim, 4*r.Dim*r.Words)
	}
}

// TestEmbedBenchQueries: a query that is a paper's own text finds it
// first, on both databases.
func TestEmbedBenchQueries(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 150
	}
	dir, _ := synthFiles(t, n, "6")
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		o := ingest.Options{Format: ingest.Kaggle, Paths: []string{filepath.Join(dir, papersFile)}}
		if _, err := ingest.Import(context.Background(), bdb, o); err != nil {
			t.Fatal(err)
		}
		queries := filepath.Join(t.TempDir(), "queries.tsv")
		if err := os.WriteFile(queries, []byte(selfQueries(t, filepath.Join(dir, papersFile), 3)), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runEmbedBench(t, "--db", dsn, "--queries", queries)
		if r.Papers != int64(n) || r.Quality == nil || r.Quality.Queries != 4 || r.Quality.Missing != 1 ||
			r.Quality.Top10 != 1 || r.Quality.MRR != 1 {
			t.Errorf("report %+v, quality %+v; want 3 queries found first, 1 paper missing", r, r.Quality)
		}
	})
}

// selfQueries makes a query of each of the first n papers' abstracts, and
// one for a paper not in the corpus.
func selfQueries(t *testing.T, papers string, n int) string {
	f, err := os.Open(papers)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	b.WriteString("# self queries\n9999.99999\tno such paper\n")
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		var p struct{ ID, Title, Abstract string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		b.WriteString(p.ID + "\t" + strings.Join(strings.Fields(p.Title+" "+p.Abstract), " ") + "\n")
	}
	return b.String()
}

func runEmbedBench(t *testing.T, args ...string) embedReport {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), append([]string{"embed"}, args...), &out, &errOut); err != nil {
		t.Fatalf("embed %q: %v\n%s", args, err, errOut.String())
	}
	var r embedReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("embed printed %q: %v", out.String(), err)
	}
	return r
}
