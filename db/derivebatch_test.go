package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestDeriveBatchPlansFromItsRows: on PostgreSQL a derive batch's
// statements are planned from the batch's rows, even when the table's
// statistics were taken while it was empty (as the analysis ending an
// import leaves them): planned from those, "DELETE FROM coauthors WHERE
// researcher_id IN (the batch)" scanned the batch once for every
// co-author pair, a cost of batch size times pairs. With the batch's rows
// counted, the batch is hashed or probed once. SQLite
// plans the IN from the batch's primary key either way.
func TestDeriveBatchPlansFromItsRows(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		const n = 5000
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = int64(i + 1)
		}
		// The state an import leaves: a batch that held rows, emptied, its
		// statistics taken empty.
		if err := db.QueueResearchers(ctx, bdb, ids); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.FillDeriveBatch(ctx, bdb, db.Recompute, 0, n); err != nil {
			t.Fatal(err)
		}
		if err := db.ClearDeriveQueue(ctx, bdb); err != nil {
			t.Fatal(err)
		}
		if db.IsPostgres(bdb) {
			if _, err := bdb.ExecContext(ctx, "ANALYZE derive_batch"); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.QueueResearchers(ctx, bdb, ids); err != nil {
			t.Fatal(err)
		}
		got, _, err := db.FillDeriveBatch(ctx, bdb, db.Recompute, 0, n)
		if err != nil || got != n {
			t.Fatalf("FillDeriveBatch = %d, %v; want %d", got, err, n)
		}
		if !db.IsPostgres(bdb) {
			return
		}
		var plan []string
		if err := bdb.NewRaw("EXPLAIN DELETE FROM coauthors WHERE researcher_id IN (SELECT researcher_id FROM derive_batch)").Scan(ctx, &plan); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		// A plan from an empty batch estimates one row of it and loops over
		// it for every pair (a nested loop, or a plain subplan per row).
		var est struct {
			Rows int64 `bun:"reltuples"`
		}
		if err := bdb.NewRaw("SELECT reltuples::bigint AS reltuples FROM pg_class WHERE relname = 'derive_batch' AND relkind = 'r'").Scan(ctx, &est); err != nil {
			t.Fatal(err)
		}
		if est.Rows != n {
			t.Errorf("the batch's statistics count %d rows, want %d; the DELETE's plan:\n%s", est.Rows, n, text)
		}
	})
}
