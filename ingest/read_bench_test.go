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
	path := os.Getenv("PAPERGRAPH_BENCH_LISTING")
	if path == "" {
		b.Skip("set PAPERGRAPH_BENCH_LISTING to the listing papers.jsonl.gz")
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
		err := readAll(context.Background(), Options{Format: Listing, Paths: []string{path}, BatchSize: 2000}, out, &read, &records, &bad, &fileErrors)
		close(out)
		<-done
		if err != nil || fileErrors > 0 || bad.Load() > 0 {
			b.Fatalf("read: %v, %d file errors, %d bad records", err, fileErrors, bad.Load())
		}
		n = records.Load()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "papers/s")
}
