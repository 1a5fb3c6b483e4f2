package db_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// TestSearchWalkRanksAsTheStatement checks SQLite's walk of the citation
// order for a common query's candidates (db.SearchCandidates): forced at
// a small archive (two years of the demo set's titles), it finds the same
// candidates with the same scores, and so the same relevance page, as the
// candidates statement that ranks every match; a walk that gives up
// (forced to after one probe) falls back to that statement. The walk is
// SQLite's alone: PostgreSQL plans the walk itself.
func TestSearchWalkRanksAsTheStatement(t *testing.T) {
	ctx := context.Background()
	bdb := dbtest.Open(t, dbtest.New(t, "sqlite"))
	for _, f := range []string{"../demo/data/pscp-1992.csv.gz", "../demo/data/pscp-1993.csv.gz"} {
		if _, err := ingest.Import(ctx, bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{f}}); err != nil {
			t.Fatal(err)
		}
	}
	type ranked struct {
		ID    int64
		Score float64
	}
	read := func(t *testing.T, s db.PaperSearch) (c db.Candidates, page []ranked, sqls []string) {
		sqls = statements(t, bdb, func() error {
			var err error
			c, err = db.SearchCandidates(ctx, bdb, s, true)
			return err
		})
		pg, err := db.SearchPapers(ctx, bdb, s.WithCandidates(c), db.PageArgs{First: db.RelevanceCandidates, Order: db.Relevance})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pg.Items {
			page = append(page, ranked{p.ID, p.Score})
		}
		return c, page, sqls
	}
	walked := func(sqls []string) bool {
		return slices.ContainsFunc(sqls, func(s string) bool { return strings.Contains(s, "papers_fts.rowid = w.id") })
	}
	ranksAll := func(sqls []string) bool {
		return slices.ContainsFunc(sqls, func(s string) bool { return strings.Contains(s, "FROM papers_fts JOIN papers AS p") })
	}
	common := 0
	for _, q := range []string{"the", "of the", "field", "th*", "quantum", "string theory", "xyzzyplugh"} {
		sq, err := db.ParseSearchQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		s := db.PaperSearch{Query: sq}
		want, wantPage, sqls := read(t, s)
		if walked(sqls) || !ranksAll(sqls) {
			t.Fatalf("%q at this size: walked %v, ranked every match %v:\n%s", q, walked(sqls), ranksAll(sqls), strings.Join(sqls, "\n"))
		}
		if want.More {
			common++
		}
		for _, m := range []struct {
			name               string
			cost, least, slack int64
			walks, ranks       bool
		}{
			{"walked", 0, 1, 2, true, false},
			{"given up", 0, 1, 0, true, true},
		} {
			restore := db.SetWalk(m.cost, m.least, m.slack)
			got, gotPage, sqls := read(t, s)
			restore()
			if len(want.IDs) == 0 { // no match: the count says so, nothing is walked
				m.walks, m.ranks = false, true
			}
			if walked(sqls) != m.walks || ranksAll(sqls) != m.ranks {
				t.Errorf("%q %s: walked %v, ranked every match %v, want %v, %v:\n%s", q, m.name, walked(sqls), ranksAll(sqls), m.walks, m.ranks, strings.Join(sqls, "\n"))
			}
			if !slices.Equal(got.IDs, want.IDs) || got.More != want.More {
				t.Errorf("%q %s: %d candidates (more: %v), want %d (more: %v)", q, m.name, len(got.IDs), got.More, len(want.IDs), want.More)
			}
			if !slices.Equal(gotPage, wantPage) {
				t.Errorf("%q %s: the relevance page differs from the statement's (%d and %d papers)", q, m.name, len(gotPage), len(wantPage))
			}
			if m.name != "walked" || len(want.IDs) == 0 {
				continue
			}
			// The walk reads papers along the citation index; the scores'
			// statement reads the full-text index as its outer loop, not by
			// id (a lookup by id counts the matches again for every id: 862
			// against 25 ms for a thousand ids at 750,000 papers).
			for _, sql := range sqls {
				plan := strings.Join(sqlitePlan(t, bdb, sql), "\n")
				switch {
				case strings.Contains(sql, "papers_fts.rowid = w.id") && !strings.Contains(plan, "SCAN papers USING INDEX papers_citation_count"):
					t.Errorf("%q: the walk's plan:\n%s", q, plan)
				case strings.Contains(sql, "bm25") && (!strings.HasPrefix(plan, "SCAN papers_fts VIRTUAL TABLE INDEX") ||
					strings.Contains(strings.SplitN(plan, "\n", 2)[0], "=")): // FTS5's "=": by rowid
					t.Errorf("%q: the scores' plan:\n%s", q, plan)
				}
			}
		}
	}
	if common < 3 {
		t.Errorf("%d queries with more than %d matches, want 3", common, db.RelevanceCandidates)
	}
}
