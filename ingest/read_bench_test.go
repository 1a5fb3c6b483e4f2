package ingest

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
)

// BenchmarkReadListing reads and parses the daily-listing set without
// writing it: the ceiling of any import of it, since reading runs beside
// the writer on one core. Give the file in PAPERGRAPH_BENCH_LISTING.
func BenchmarkReadListing(b *testing.B) {
	benchmarkRead(b, Listing, "PAPERGRAPH_BENCH_LISTING", "the listing papers.jsonl.gz")
}

// BenchmarkReadKaggle reads and parses Kaggle JSON lines, such as the
// papers.jsonl of a corpus papergraph-bench synth wrote, without a
// database: the first half of an import's floor (issue 9), the other
// being the full-text build (BenchmarkImportListing's full-text-s, the
// import's "full-text" step).
//
//	PAPERGRAPH_BENCH_KAGGLE=c2700k/papers.jsonl go test ./ingest -run '^$' -bench ReadKaggle -benchtime 1x
func BenchmarkReadKaggle(b *testing.B) {
	benchmarkRead(b, Kaggle, "PAPERGRAPH_BENCH_KAGGLE", "a Kaggle JSON lines file")
}

func benchmarkRead(b *testing.B, f Format, env, what string) {
	path := os.Getenv(env)
	if path == "" {
		b.Skipf("set %s to %s", env, what)
	}
	var n int64
	for b.Loop() {
		out := make(chan []Record, 4)
		var read, records, bad atomic.Int64
		var fileErrors int
		done := make(chan struct{})
		go func() {
			for range out {
			}
			close(done)
		}()
		err := readAll(context.Background(), Options{Format: f, Paths: []string{path}, BatchSize: 2000}, out, &read, &records, &bad, &fileErrors)
		close(out)
		<-done
		if err != nil || fileErrors > 0 || bad.Load() > 0 {
			b.Fatalf("read: %v, %d file errors, %d bad records", err, fileErrors, bad.Load())
		}
		n = records.Load()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "papers/s")
}
