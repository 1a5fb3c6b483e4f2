package db_test

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// statementLog records the SQL text of every statement.
type statementLog struct {
	mu   sync.Mutex
	text []string
}

func (l *statementLog) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text = append(l.text, e.Query)
	return ctx
}

func (l *statementLog) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestBatchReadsBindTheirKeys: on PostgreSQL a batch read sends its keys
// as one bound array, so that its SQL text is the same for any keys (one
// prepared statement, planned once); on SQLite as one bound JSON array,
// or a parameter a parent for pages (a statement each connection compiles
// once, see stmtcache.go). Either way it answers the keys asked for.
func TestBatchReadsBindTheirKeys(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		papers := []*db.Paper{{ArxivID: "2101.00001", Title: "One"}, {ArxivID: "2101.00002", Title: "Two", DOI: "10.1/two"}, {ArxivID: "2101.00003", Title: "Three"}}
		if _, err := bdb.NewInsert().Model(&papers).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		log := &statementLog{}
		logged := bdb.WithQueryHook(log)
		for _, ids := range [][]int64{{papers[0].ID}, {papers[1].ID, papers[2].ID, papers[1].ID + 1000}} {
			got, err := db.PapersByIDs(ctx, logged, ids)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != min(len(ids), 2) || got[ids[0]] == nil || got[ids[0]].ID != ids[0] {
				t.Errorf("PapersByIDs(%v) = %v", ids, got)
			}
		}
		// Two lists in one statement (byArxiv holds the paper found by DOI
		// too), and the same list twice (a feed).
		byArxiv, byDOI, err := db.PapersByRefs(ctx, logged, []string{"2101.00001", "2101.00003"}, []string{"10.1/two"})
		if err != nil || len(byArxiv) != 3 || byArxiv["2101.00003"].Title != "Three" || byDOI["10.1/two"].Title != "Two" {
			t.Errorf("PapersByRefs = %v, %v, %v", byArxiv, byDOI, err)
		}
		if _, err := db.PaperPages(ctx, logged, db.FeedPapers, []int64{1, 2}, db.PageArgs{First: 5}); err != nil {
			t.Errorf("feed pages: %v", err)
		}
		if len(log.text) != 4 {
			t.Fatalf("%d statements, want 4: %q", len(log.text), log.text)
		}
		if db.IsPostgres(bdb) {
			if log.text[0] != log.text[1] || !strings.Contains(log.text[0], "= ANY($1::bigint[])") {
				t.Errorf("PapersByIDs' statements differ or bind no array:\n%s\n%s", log.text[0], log.text[1])
			}
			if !strings.Contains(log.text[2], "arxiv_id = ANY($1::text[]) OR doi = ANY($2::text[])") {
				t.Errorf("PapersByRefs: %s", log.text[2])
			}
			// A page per key, each key's read in a LATERAL join over the
			// array (see limitPages).
			if strings.Count(log.text[3], "unnest($1::bigint[])") != 1 || strings.Contains(log.text[3], "$2") {
				t.Errorf("feed pages bind their keys once: %s", log.text[3])
			}
		} else {
			if log.text[0] != log.text[1] || !strings.Contains(log.text[0], "IN (SELECT value FROM json_each($1))") {
				t.Errorf("PapersByIDs' statements differ or bind no JSON array:\n%s\n%s", log.text[0], log.text[1])
			}
			if !strings.Contains(log.text[2], "arxiv_id IN (SELECT value FROM json_each($1)) OR doi IN (SELECT value FROM json_each($2))") {
				t.Errorf("PapersByRefs: %s", log.text[2])
			}
			// A SELECT per key joined by UNION ALL, each key its own
			// parameter.
			if !strings.Contains(log.text[3], "$1") || !strings.Contains(log.text[3], "$2") || strings.Contains(log.text[3], "$3") {
				t.Errorf("feed pages bind each key once: %s", log.text[3])
			}
		}
	})
}

// TestWritesBindTheirKeys: a write by a list of keys binds the list as
// one array, as the batch reads do, so that its text is the same for any
// number of keys; it changes the rows of those keys alone.
func TestWritesBindTheirKeys(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		papers := []*db.Paper{{ArxivID: "2101.00001", Title: "One"}, {ArxivID: "2101.00002", Title: "Two"},
			{ArxivID: "2101.00003", Title: "Three"}, {ArxivID: "2101.00004", Title: "Four"}}
		if _, err := bdb.NewInsert().Model(&papers).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var bylines []db.Authorship
		for _, p := range papers {
			bylines = append(bylines, db.Authorship{PaperID: p.ID, Position: 1, Name: "A. Author"}, db.Authorship{PaperID: p.ID, Position: 2, Name: "B. Author"})
		}
		if _, err := bdb.NewInsert().Model(&bylines).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		log := &statementLog{}
		logged := bdb.WithQueryHook(log)
		if err := db.DeleteBylines(ctx, logged, []int64{papers[0].ID}); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteBylines(ctx, logged, []int64{papers[1].ID, papers[2].ID}); err != nil {
			t.Fatal(err)
		}
		var left []int64
		if err := bdb.NewSelect().Model((*db.Authorship)(nil)).Column("paper_id").Order("paper_id", "position").Scan(ctx, &left); err != nil {
			t.Fatal(err)
		}
		if len(left) != 2 || left[0] != papers[3].ID || left[1] != papers[3].ID {
			t.Errorf("authorships left of papers %v, want the two of paper %d", left, papers[3].ID)
		}
		// Two statements a call: affiliations, then authorships.
		if len(log.text) != 4 {
			t.Fatalf("%d statements, want 4: %q", len(log.text), log.text)
		}
		for i := range 2 {
			if log.text[i] != log.text[i+2] || !strings.Contains(log.text[i], "$1") {
				t.Errorf("DeleteBylines of one paper and of two differ or bind nothing:\n%s\n%s", log.text[i], log.text[i+2])
			}
		}
	})
}

// TestListsOnAPlainPool: on a pool that Open did not make, which binds
// nothing, a list of keys is written into the statement as one array
// literal, and reads and writes by it answer as on Open's pools.
func TestListsOnAPlainPool(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		papers := []*db.Paper{{ArxivID: "2101.00001", Title: "One"}, {ArxivID: "2101.00002", Title: "Two", DOI: "10.1/two"}, {ArxivID: "2101.00003", Title: "Three"}}
		if _, err := bdb.NewInsert().Model(&papers).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var plain *bun.DB
		if db.IsPostgres(bdb) {
			sqldb, err := sql.Open("pgx", dsn)
			if err != nil {
				t.Fatal(err)
			}
			plain = bun.NewDB(sqldb, pgdialect.New())
		} else {
			sqldb, err := sql.Open("sqlite", strings.TrimPrefix(dsn, "sqlite:"))
			if err != nil {
				t.Fatal(err)
			}
			plain = bun.NewDB(sqldb, sqlitedialect.New())
		}
		defer plain.Close()
		log := &statementLog{}
		logged := plain.WithQueryHook(log)
		got, err := db.PapersByIDs(ctx, logged, []int64{papers[0].ID, papers[2].ID, papers[2].ID + 1000})
		if err != nil || len(got) != 2 || got[papers[2].ID].Title != "Three" {
			t.Errorf("PapersByIDs = %v, %v", got, err)
		}
		byArxiv, byDOI, err := db.PapersByRefs(ctx, logged, []string{"2101.00001"}, []string{"10.1/two"})
		if err != nil || len(byArxiv) != 2 || byDOI["10.1/two"].Title != "Two" {
			t.Errorf("PapersByRefs = %v, %v, %v", byArxiv, byDOI, err)
		}
		if err := db.DeleteBylines(ctx, logged, []int64{papers[0].ID}); err != nil {
			t.Fatal(err)
		}
		want := "= ANY('{"
		if !db.IsPostgres(bdb) {
			want = "json_each('["
		}
		if len(log.text) == 0 || !strings.Contains(log.text[0], want) || strings.Contains(log.text[0], "$1") {
			t.Errorf("PapersByIDs on a plain pool: %q", log.text)
		}
	})
}
