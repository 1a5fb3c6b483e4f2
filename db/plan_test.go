package db_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// sqlLog keeps the statements bun sends.
type sqlLog struct {
	mu   sync.Mutex
	sqls []string
	args map[string][]any // the parameters a statement bound (db.Bound), by its text
}

func (l *sqlLog) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (l *sqlLog) AfterQuery(ctx context.Context, ev *bun.QueryEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sqls = append(l.sqls, ev.Query)
	if l.args == nil {
		l.args = map[string][]any{}
	}
	l.args[ev.Query] = db.Bound(ctx)
}

// want returns the statements sent, failing the test unless there are n.
func (l *sqlLog) want(t *testing.T, n int) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.sqls) != n {
		t.Fatalf("got %d statements, want %d:\n%s", len(l.sqls), n, strings.Join(l.sqls, "\n"))
	}
	return l.sqls
}

// TestCategoryProbeUsesPaperKey checks SQLite's plan for the statements
// that keep a list's or a search's papers of one category: each paper's
// categories are probed by the paper's id (the primary key), never along
// the category index, whose (category, published, paper_id) order makes a
// probe walk the whole category for every paper (minutes for a common
// word in hep-th over the demo set). The plan is SQLite's alone:
// PostgreSQL plans the probe from its statistics.
func TestCategoryProbeUsesPaperKey(t *testing.T) {
	ctx := context.Background()
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	log := &sqlLog{}
	bdb.AddQueryHook(log)
	q, err := db.ParseSearchQuery("the")
	if err != nil {
		t.Fatal(err)
	}
	s := db.PaperSearch{Query: q, Categories: []string{"hep-th"}}
	if _, err := db.SearchCandidates(ctx, bdb, s, true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SearchPapers(ctx, bdb, s, db.PageArgs{First: 5, Order: db.MostCited}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PaperPages(ctx, bdb, db.ResearcherPapers, []int64{1}, db.PageArgs{First: 5, Order: db.Newest, Category: "hep-th"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PaperTotals(ctx, bdb, db.ResearcherPapers, []int64{1}, "hep-th"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CategoryFacets[int64](ctx, bdb, db.ListSet(bdb, db.ResearcherPapers, []int64{1}, "hep-th")); err != nil {
		t.Fatal(err)
	}
	sqls := log.want(t, 5)
	for _, sql := range sqls {
		plan := sqlitePlan(t, bdb, sql, log.args[sql]...)
		probe := false
		for _, step := range plan {
			if strings.Contains(step, "pc EXISTS") || strings.Contains(step, "SEARCH pc ") {
				probe = true
				if !strings.Contains(step, "PRIMARY KEY (paper_id=?)") {
					t.Errorf("probe %q, want by the primary key (paper_id=?), in:\n%s\nfor %s", step, strings.Join(plan, "\n"), sql)
				}
			}
		}
		if !probe {
			t.Errorf("no probe of paper_categories in:\n%s\nfor %s", strings.Join(plan, "\n"), sql)
		}
	}
}

// TestDeriveReadsAddedPapersByPaper checks SQLite's plan for the derive
// statements that read the authors of the papers an import added
// (derive_added): by paper, from the few queued ones, never along the
// authorships' researcher index, which walks every authorship of the
// archive to find a day's few papers.
func TestDeriveReadsAddedPapersByPaper(t *testing.T) {
	ctx := context.Background()
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	log := &sqlLog{}
	bdb.AddQueryHook(log)
	if _, err := db.NameCandidates(ctx, bdb, true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddedAuthorships(ctx, bdb, 0, 1<<40); err != nil {
		t.Fatal(err)
	}
	sqls := log.want(t, 2)
	for _, sql := range sqls {
		plan := sqlitePlan(t, bdb, sql, log.args[sql]...)
		byPaper := false
		for _, step := range plan {
			if strings.Contains(step, " a ") && !strings.Contains(step, "(paper_id=?)") {
				t.Errorf("authorships read by %q, want by paper (paper_id=?), in:\n%s\nfor %s", step, strings.Join(plan, "\n"), sql)
			}
			byPaper = byPaper || strings.Contains(step, "SEARCH a ") && strings.Contains(step, "(paper_id=?)")
		}
		if !byPaper {
			t.Errorf("no read of authorships by paper in:\n%s\nfor %s", strings.Join(plan, "\n"), sql)
		}
	}
}
