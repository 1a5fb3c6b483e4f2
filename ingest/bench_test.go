package ingest_test

import (
	"context"
	"os"
	"testing"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// BenchmarkImportListing imports the daily-listing set (74,728 papers) into
// a fresh database per iteration and reports papers/s for the write alone
// and for the whole import with derived figures. Give the file in
// PAPERGRAPH_BENCH_LISTING (../shared/data/daily-arxiv-cs/papers.jsonl.gz
// in the development tree); PostgreSQL runs too when
// PAPERGRAPH_TEST_POSTGRES is set.
func BenchmarkImportListing(b *testing.B) {
	path := os.Getenv("PAPERGRAPH_BENCH_LISTING")
	if path == "" {
		b.Skip("set PAPERGRAPH_BENCH_LISTING to the listing papers.jsonl.gz")
	}
	for _, kind := range dbtest.Kinds() {
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				bdb := dbtest.Open(b, dbtest.New(b, kind))
				b.StartTimer()
				sum, err := ingest.Import(context.Background(), bdb, ingest.Options{Format: ingest.Listing, Paths: []string{path}})
				if err != nil {
					b.Fatal(err)
				}
				write := sum.Elapsed - sum.Derive
				b.ReportMetric(float64(sum.Inserted)/write.Seconds(), "papers/s-write")
				b.ReportMetric(float64(sum.Inserted)/sum.Elapsed.Seconds(), "papers/s-total")
				b.ReportMetric(sum.Derive.Seconds(), "derive-s")
			}
		})
	}
}
