package db_test

import (
	"context"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestListSizes: an empty archive has no list sizes; an import's derive
// measures every kind, each at the 99th percentile of the lengths of the
// whole archive's lists of that kind (a year of the demo set is under the
// sample size, so every list is measured), and ReadListSizes reads them
// back.
func TestListSizes(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		if got, err := db.ReadListSizes(ctx, bdb); err != nil || len(got) != 0 {
			t.Fatalf("ReadListSizes of an empty archive = %v, %v; want none", got, err)
		}
	})
	// The import of the seed measured them.
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		got, err := db.ReadListSizes(ctx, bdb)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(db.ListKinds()) {
			t.Errorf("ReadListSizes = %v, want every kind of %v", got, db.ListKinds())
		}
		for kind, query := range map[string]string{
			"authorsPerPaper":     "SELECT COUNT(*) FROM authorships GROUP BY paper_id",
			"papersPerResearcher": "SELECT COUNT(*) FROM authorships WHERE researcher_id IS NOT NULL GROUP BY researcher_id",
		} {
			var lengths []int64
			if err := bdb.NewRaw(query).Scan(ctx, &lengths); err != nil {
				t.Fatal(err)
			}
			slices.Sort(lengths)
			want := lengths[(len(lengths)*99+99)/100-1]
			if got[kind] != want || want < 2 {
				t.Errorf("%s = %d, want %d, the 99th percentile of %d lists", kind, got[kind], want, len(lengths))
			}
		}
		if err := db.SetListSizes(ctx, bdb, nil); err != nil {
			t.Fatal(err)
		}
		if got, err := db.ReadListSizes(ctx, bdb); err != nil || len(got) != 0 {
			t.Errorf("ReadListSizes after clearing = %v, %v; want none", got, err)
		}
	})
}
