package ingest_test

import (
	"cmp"
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// BenchmarkImportListing imports the daily-listing set (74,728 papers) into
// a fresh database per iteration and reports papers/s for the write alone
// and for the whole import with derived figures, and the time of the
// derive's longest steps. Give the file in
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
				bdb := dbtest.Open(b, dbtest.NewMigrated(b, kind))
				timer := &statementTimer{total: map[string]time.Duration{}}
				bdb = db.WithQueryHook(bdb, timer)
				b.StartTimer()
				sum, err := ingest.Import(context.Background(), bdb, ingest.Options{Format: ingest.Listing, Paths: []string{path}})
				if err != nil {
					b.Fatal(err)
				}
				write := sum.Elapsed - sum.Derive
				b.ReportMetric(float64(sum.Inserted)/write.Seconds(), "papers/s-write")
				b.ReportMetric(float64(sum.Inserted)/sum.Elapsed.Seconds(), "papers/s-total")
				b.ReportMetric(sum.Derive.Seconds(), "derive-s")
				// The search index's build alone is half of the
				// import's floor (with BenchmarkReadListing); on
				// PostgreSQL it runs beside the later steps.
				for _, st := range sum.DeriveSteps {
					if st.Name == "full-text" || st.Name == "researchers" || st.Name == "initials" || st.Name == "same-name" {
						b.ReportMetric(st.Elapsed.Seconds(), st.Name+"-s")
					}
				}
				timer.log(b)
			}
		})
	}
}

// statementTimer sums the time spent in each kind of statement, so that a
// benchmark run with -v shows where an import spends it.
type statementTimer struct {
	mu    sync.Mutex
	total map[string]time.Duration
}

func (st *statementTimer) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (st *statementTimer) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	// A statement of a batch holds its values: only its head names it.
	q := e.Query
	if len(q) > 200 {
		q = q[:200]
	}
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 70 {
		q = q[:70]
	}
	st.mu.Lock()
	st.total[q] += time.Since(e.StartTime)
	st.mu.Unlock()
}

func (st *statementTimer) log(b *testing.B) {
	type row struct {
		q string
		d time.Duration
	}
	var rows []row
	for q, d := range st.total {
		rows = append(rows, row{q, d})
	}
	slices.SortFunc(rows, func(x, y row) int { return cmp.Compare(y.d, x.d) })
	for _, r := range rows[:min(len(rows), 15)] {
		b.Logf("%8.2fs  %s", r.d.Seconds(), r.q)
	}
}
