package db_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestBatchPagesAreEachParentsPage: a batch of parents read in one
// statement (a LIMIT per parent, a LATERAL join on PostgreSQL, a window
// past db's limit on SQLite, ranges of an index for dates) gives each
// parent the page it gets read alone, for paper lists and co-authors, in
// every order, forward and backward, after and before a cursor, with a
// category filter, with a parent named twice and parents with no list; no
// parents is no page. A year of the demo set's papers, their authors and
// citations.
func TestBatchPagesAreEachParentsPage(t *testing.T) {
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		var researchers, cited, citing []int64
		for q, ids := range map[string]*[]int64{
			"SELECT id FROM researchers ORDER BY paper_count DESC, id LIMIT 45":                                    &researchers,
			"SELECT id FROM papers ORDER BY archive_citation_count DESC, id LIMIT 100":                             &cited,
			"SELECT citing_id FROM paper_references GROUP BY citing_id ORDER BY COUNT(*) DESC, citing_id LIMIT 45": &citing,
		} {
			if err := bdb.NewRaw(q).Scan(ctx, ids); err != nil {
				t.Fatal(err)
			}
		}
		researchers = append(researchers, 1<<40) // nobody
		type ref struct {
			ID                  int64
			Next, Prev, Counted bool
			Total               int
		}
		pages := func(read func(parents []int64) (map[int64][]ref, error), parents []int64) map[int64][]ref {
			got, err := read(parents)
			if err != nil {
				t.Fatalf("%d parents: %v", len(parents), err)
			}
			return got
		}
		paperRead := func(list db.PaperList, a db.PageArgs) func([]int64) (map[int64][]ref, error) {
			return func(parents []int64) (map[int64][]ref, error) {
				m, err := db.PaperPages(ctx, bdb, list, parents, a)
				out := map[int64][]ref{}
				for p, pg := range m {
					for _, it := range pg.Items {
						out[p] = append(out[p], ref{it.ID, pg.HasNext, pg.HasPrev, pg.Counted, pg.Total})
					}
				}
				return out, err
			}
		}
		coauthorRead := func(a db.PageArgs) func([]int64) (map[int64][]ref, error) {
			return func(parents []int64) (map[int64][]ref, error) {
				m, err := db.CoauthorPages(ctx, bdb, parents, a)
				out := map[int64][]ref{}
				for p, pg := range m {
					for _, it := range pg.Items {
						out[p] = append(out[p], ref{it.ID, pg.HasNext, pg.HasPrev, pg.Counted, pg.Total})
					}
				}
				return out, err
			}
		}
		// The cursors: the third item of the first parent's page of five.
		paperCursor := func(list db.PaperList, parent int64, o db.PaperOrder) db.Cursor {
			m, err := db.PaperPages(ctx, bdb, list, []int64{parent}, db.PageArgs{First: 5, Order: o})
			if err != nil || len(m[parent].Items) < 3 {
				t.Fatalf("%v's page of %d: %v, %v", list, parent, m[parent], err)
			}
			return db.PaperCursor(m[parent].Items[2], o)
		}
		type read struct {
			name    string
			parents []int64
			read    func([]int64) (map[int64][]ref, error)
			least   int // parents with a page, at least
		}
		var reads []read
		for _, l := range []struct {
			name    string
			list    db.PaperList
			parents []int64
		}{{"researcher papers", db.ResearcherPapers, researchers}, {"citations", db.Citations, cited}, {"references", db.References, citing}} {
			for _, o := range []db.PaperOrder{db.Newest, db.Oldest, db.MostCited} {
				c := paperCursor(l.list, l.parents[0], o)
				for _, a := range []db.PageArgs{
					{First: 3}, {First: 2, After: c}, {Last: 2}, {Last: 2, Before: c}, {First: 4, After: c, Before: db.Cursor{}},
					{First: 3, Category: "hep-th"}, {First: 2, After: c, Category: "hep-th"},
				} {
					a.Order = o
					least := 10
					if a.After.Set || a.Before.Set { // the first parent's cursor: others' pages may be empty
						least = 1
					}
					reads = append(reads, read{fmt.Sprintf("%s %v %+v", l.name, o, a), l.parents, paperRead(l.list, a), least})
				}
			}
		}
		coauthors, err := db.CoauthorPages(ctx, bdb, researchers[:1], db.PageArgs{First: 5})
		if err != nil || len(coauthors[researchers[0]].Items) < 3 {
			t.Fatalf("co-authors of %d: %v, %v", researchers[0], coauthors, err)
		}
		cc := db.CoauthorCursor(coauthors[researchers[0]].Items[2])
		for _, a := range []db.PageArgs{{First: 3}, {First: 2, After: cc}, {Last: 2}, {Last: 2, Before: cc}} {
			reads = append(reads, read{fmt.Sprintf("co-authors %+v", a), researchers, coauthorRead(a), 10})
		}
		for _, r := range reads {
			alone := map[int64][]ref{}
			for _, p := range r.parents {
				for k, v := range pages(r.read, []int64{p}) {
					alone[k] = v
				}
			}
			listed := 0
			for _, v := range alone {
				if len(v) > 0 {
					listed++
				}
			}
			if listed < r.least {
				t.Fatalf("%s: %d parents with a page, want %d or more", r.name, listed, r.least)
			}
			// A few parents (a SELECT each on SQLite), all of them (more
			// than SQLite's limit: the window, or for dates more than one
			// statement's ranges), and one named twice.
			for _, parents := range [][]int64{r.parents[:5], r.parents, append(slices.Clone(r.parents[:5]), r.parents[0])} {
				got := pages(r.read, parents)
				for _, p := range parents {
					if !slices.Equal(got[p], alone[p]) {
						t.Errorf("%s, %d parents: parent %d's page %v, alone %v", r.name, len(parents), p, got[p], alone[p])
					}
				}
				if len(got) > len(uniq(parents)) {
					t.Errorf("%s: pages of %d parents for %d", r.name, len(got), len(uniq(parents)))
				}
			}
			if got := pages(r.read, nil); len(got) != 0 {
				t.Errorf("%s: no parents, %d pages", r.name, len(got))
			}
		}
	})
}

func uniq(xs []int64) []int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return slices.Compact(s)
}
