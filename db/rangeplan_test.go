package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestDatePagesAreIndexRanges checks SQLite's plan for a page of a
// category's papers, of a paper's citations and of a researcher's papers
// by date, with and without a cursor: each is a range of its list's index
// (paper_categories' category index, paper_references' cited index, the
// authorships' researcher index), the papers looked up by
// id, so that a page reads the rows it shows however long the list is and
// wherever the cursor is (a cursor's date bounds the range); no
// list is scanned, sorted, deduplicated or counted whole (the window that
// pages every other list does all four). PostgreSQL plans from its statistics;
// TestPaginationWalk checks the pages' contents on both databases.
func TestDatePagesAreIndexRanges(t *testing.T) {
	ctx := context.Background()
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	cursor := db.Cursor{Set: true, Key: 1_000_000_000_000_000_000, ID: 7}
	for _, c := range []struct {
		name, index, date string
		read              func(a db.PageArgs) error
	}{
		{"category papers", "paper_categories_category (category=?", "published", func(a db.PageArgs) error {
			_, err := db.PaperPages(ctx, bdb, db.CategoryPapers, []string{"hep-th", "hep-ph"}, a)
			return err
		}},
		{"citations", "paper_references_cited (cited_id=?", "citing_published", func(a db.PageArgs) error {
			_, err := db.PaperPages(ctx, bdb, db.Citations, []int64{1, 2}, a)
			return err
		}},
		{"researcher papers", "authorships_researcher (researcher_id=?", "published", func(a db.PageArgs) error {
			_, err := db.PaperPages(ctx, bdb, db.ResearcherPapers, []int64{1, 2}, a)
			return err
		}},
	} {
		for _, a := range []db.PageArgs{
			{First: 5, Order: db.Newest}, {First: 5, Order: db.Oldest},
			{First: 5, Order: db.Newest, After: cursor}, {First: 5, Order: db.Oldest, After: cursor},
		} {
			sqls, args := statements(t, bdb, func() error { return c.read(a) })
			if len(sqls) != 1 {
				t.Fatalf("%s %+v: %d statements, want 1", c.name, a, len(sqls))
			}
			plan := sqlitePlan(t, bdb, sqls[0], args[sqls[0]]...)
			// A cursor bounds the dated rows' range at both ends (NOT NULL
			// is the other end), not only the rows kept along it.
			ranges, bounded := 0, 0
			for _, step := range plan {
				switch {
				case strings.HasPrefix(step, "SEARCH pc "):
					ranges++
					if strings.Contains(step, c.date+">? AND "+c.date+"<?") {
						bounded++
					}
					if !strings.Contains(step, "USING COVERING INDEX "+c.index) {
						t.Errorf("%s %+v: %q, want a range of %s)", c.name, a, step, c.index)
					}
				case strings.HasPrefix(step, "SCAN pc"), strings.HasPrefix(step, "SCAN p "), strings.Contains(step, "DISTINCT"),
					strings.HasPrefix(step, "SEARCH p ") && !strings.Contains(step, "PRIMARY KEY"):
					t.Errorf("%s %+v: %q in the plan:\n%s", c.name, a, step, strings.Join(plan, "\n"))
				}
			}
			// Two parents, two branches each; the lists' lengths are kept,
			// not counted.
			if ranges != 4 {
				t.Errorf("%s %+v: %d ranges read, want 4:\n%s", c.name, a, ranges, strings.Join(plan, "\n"))
			}
			// Oldest first, the cursor's bound and NOT NULL are both lower
			// bounds, which the plan's text does not tell apart.
			if want := map[bool]int{false: 0, true: 2}[a.After.Set && a.Order == db.Newest]; bounded != want {
				t.Errorf("%s %+v: %d ranges bounded by the cursor's date, want %d:\n%s", c.name, a, bounded, want, strings.Join(plan, "\n"))
			}
		}
	}
}

// statements runs f and returns the statements bdb sent for it.
func statements(t *testing.T, bdb *bun.DB, f func() error) ([]string, map[string][]any) {
	t.Helper()
	log := &sqlLog{}
	bdb.AddQueryHook(log)
	defer bdb.ResetQueryHooks()
	if err := f(); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	return log.sqls, log.args
}

// sqlitePlan is SQLite's EXPLAIN QUERY PLAN of sql, run with the
// parameters it bound, a step a line.
func sqlitePlan(t *testing.T, bdb *bun.DB, sql string, args ...any) []string {
	t.Helper()
	rows, err := bdb.DB.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+sql, args...)
	if err != nil {
		t.Fatalf("%v: %s", err, sql)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestResearcherFilterProbesBylines checks SQLite's plan for a search
// kept to a researcher's papers: each paper's byline is probed by its
// primary key. By the researcher index, which since migration 0018 is
// (researcher, date, paper), the probe walked the researcher's whole range
// for each paper, a cost of papers times the researcher's range.
func TestResearcherFilterProbesBylines(t *testing.T) {
	ctx := context.Background()
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	sqls, args := statements(t, bdb, func() error {
		_, err := db.SearchTotal(ctx, bdb, db.PaperSearch{ResearcherID: 7})
		return err
	})
	if len(sqls) != 1 {
		t.Fatalf("%d statements, want 1", len(sqls))
	}
	probed := false
	for _, step := range sqlitePlan(t, bdb, sqls[0], args[sqls[0]]...) {
		if strings.HasPrefix(step, "SEARCH a ") {
			if !strings.Contains(step, "PRIMARY KEY (paper_id=?)") {
				t.Errorf("%q, want a probe of the byline's primary key", step)
			}
			probed = true
		}
	}
	if !probed {
		t.Errorf("no probe of the bylines in the plan of %s", sqls[0])
	}
}
