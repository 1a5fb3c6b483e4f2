package ingest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// A derive names every step it runs as it starts it and returns them in
// the order they ended, with times that add up to no more than its own;
// an import's summary carries them.
func TestDeriveReportsItsSteps(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		if _, err := ingest.Import(ctx, bdb, ingest.Options{Format: ingest.Kaggle, Paths: []string{"testdata/kaggle.jsonl"}, SkipDerive: true}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex // the full-text build tells of its start from a goroutine of its own
		var started []string
		start := time.Now()
		steps, err := ingest.DeriveSteps(ctx, bdb, func(step string) {
			mu.Lock()
			defer mu.Unlock()
			started = append(started, step)
		})
		if err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)

		want := []string{"bulk indexes", "citations", "full-text", "initials", "researchers", "added", "cited", "same-name", "affiliations", "list sizes", "queue"}
		if db.IsPostgres(bdb) {
			// A bulk load's papers are vacuumed after the citations;
			// the full-text indexes build beside the steps after that
			// and end among them; the tables are vacuumed last.
			want = slices.Insert(want, 2, "vacuum papers")
			want = append(want, "vacuum")
		}
		names := stepNames(steps)
		if db.IsPostgres(bdb) {
			if i := slices.Index(names, "full-text"); i < 3 || i == len(names)-1 {
				t.Errorf("steps %q: want the full-text build to end after the citations and before the vacuum", names)
			}
			// Which of the two starts first is the scheduler's choice.
			names, started = withoutFullText(names), withoutFullText(started)
			want = withoutFullText(want)
		}
		if !slices.Equal(names, want) {
			t.Errorf("steps ended %q, want %q", names, want)
		}
		if !slices.Equal(started, want) {
			t.Errorf("steps started %q, want %q", started, want)
		}
		var total time.Duration
		for _, s := range steps {
			if s.Elapsed <= 0 {
				t.Errorf("step %s took %v", s.Name, s.Elapsed)
			}
			if !db.IsPostgres(bdb) { // where the full-text build runs beside the others
				total += s.Elapsed
			}
			// A batched step runs a transaction per batch and one that
			// finds no more; a bulk load queues every researcher.
			if s.Name == "researchers" && s.Transactions < 2 {
				t.Errorf("step %s ran %d transactions, want a batch and the one that finds no more", s.Name, s.Transactions)
			}
		}
		if total > elapsed {
			t.Errorf("the steps took %v in all, the derive %v", total, elapsed)
		}

		// An increment's summary lists the same steps, but the papers'
		// vacuum, which follows a bulk load only.
		sum := importFiles(t, bdb, ingest.Kaggle, "testdata/kaggle.jsonl")
		got := stepNames(sum.DeriveSteps)
		if db.IsPostgres(bdb) {
			got = withoutFullText(got)
			want = slices.DeleteFunc(want, func(s string) bool { return s == "vacuum papers" })
		}
		if !slices.Equal(got, want) {
			t.Errorf("the second import's summary has steps %q, want %q", got, want)
		}
	})
}

func stepNames(steps []ingest.DeriveStep) []string {
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	return names
}

func withoutFullText(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "full-text" })
}

// An import vacuums the PostgreSQL tables it only inserted into, so that
// the researcher index can answer a researcher's papers from itself on
// the first request: 1,500 papers of two authors each leave 3,000
// authorships and no dead row. (Whether the vacuum marks every page
// all-visible depends on the oldest transaction open on the server, other
// tests' included, so the test asks for the vacuum.)
func TestImportVacuumsInsertedTables(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		if !db.IsPostgres(bdb) {
			t.Skip("SQLite has no visibility map to set")
		}
		lines := make([]string, 1500)
		for i := range lines {
			lines[i] = kaggleLine(fmt.Sprintf("1101.%04d", i+1), fmt.Sprintf("Ann Lee%d, Bob Ray%d", i, i), "")
		}
		importFiles(t, bdb, ingest.Kaggle, linesFile(t, "many.jsonl", lines...))
		var vacuumed bool
		if err := bdb.NewRaw(`SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables
			WHERE schemaname = current_schema() AND relname = 'authorships'`).
			Scan(context.Background(), &vacuumed); err != nil {
			t.Fatal(err)
		}
		if !vacuumed {
			t.Error("authorships was not vacuumed by the import")
		}
	})
}
