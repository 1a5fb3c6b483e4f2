package db_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestPapersToEnrich walks papers batch by batch as enrich does: newest
// first (the same day by id), then the undated ones, leaving out papers
// already asked about and those with nothing to ask by; a refresh age
// brings back those asked about before it.
func TestPapersToEnrich(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		day := func(d int) time.Time { return time.Date(2020, 1, d, 0, 0, 0, 0, time.UTC) }
		papers := []db.Paper{
			{ArxivID: "2001.00001", Title: "a", Published: day(1)},
			{ArxivID: "2001.00002", Title: "b", Published: day(3)},
			{ArxivID: "2001.00003", Title: "c", Published: day(3)},
			{ArxivID: "2001.00004", Title: "d"},
			{DOI: "10.1/e", Title: "e"},
			{Title: "nothing to ask by", Published: day(5)},
			{ArxivID: "2001.00007", Title: "asked", Published: day(9)},
		}
		if _, err := bdb.NewInsert().Model(&papers).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.MarkEnriched(ctx, bdb, "s", []int64{papers[6].ID}, day(10)); err != nil {
			t.Fatal(err)
		}
		walk := func(staleBefore time.Time) []string {
			var got []string
			var last *db.EnrichPaper
			for {
				ps, err := db.PapersToEnrich(ctx, bdb, "s", staleBefore, last, 2)
				if err != nil {
					t.Fatal(err)
				}
				if len(ps) == 0 {
					return got
				}
				for _, p := range ps {
					got = append(got, p.ArxivID+p.DOI)
				}
				last = &ps[len(ps)-1]
			}
		}
		want := []string{"2001.00003", "2001.00002", "2001.00001", "10.1/e", "2001.00004"}
		if got := walk(time.Time{}); !slices.Equal(got, want) {
			t.Errorf("walk = %q, want %q", got, want)
		}
		if got := walk(day(11)); !slices.Equal(got, append([]string{"2001.00007"}, want...)) {
			t.Errorf("walk with a refresh = %q, want 2001.00007 then %q", got, want)
		}
	})
}
