package ingest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
)

// Derive recomputes the queue a batch of researchers at a time: batches of
// three researchers must leave exactly the data one batch of all leaves,
// co-authors, fields, figures and same-name links across batches included.
func TestDeriveBatchesAgree(t *testing.T) {
	sources := []struct {
		format Format
		path   string
	}{
		{Paperscape, "testdata/paperscape.csv"},
		{Kaggle, "testdata/kaggle.jsonl"},
		{OpenAlex, "testdata/openalex.jsonl"},
	}
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			load := func(batch int) []string {
				saved := deriveBatchSize
				deriveBatchSize = batch
				defer func() { deriveBatchSize = saved }()
				bdb := dbtest.Open(t, dbtest.NewMigrated(t, kind))
				for _, s := range sources {
					if _, err := Import(context.Background(), bdb, Options{Format: s.format, Paths: []string{s.path}}); err != nil {
						t.Fatal(err)
					}
				}
				var queued int
				if err := bdb.NewRaw("SELECT (SELECT COUNT(*) FROM derive_queue) + (SELECT COUNT(*) FROM derive_batch)").Scan(t.Context(), &queued); err != nil {
					t.Fatal(err)
				}
				if queued != 0 {
					t.Errorf("batches of %d: %d researchers left queued", batch, queued)
				}
				return dbtest.Dump(t, bdb)
			}
			dbtest.SameDump(t, load(3), load(1_000_000))
		})
	}
}

// mergeInitials decides a few profiles at a time: batches of
// one profile must make the merges one batch of all makes, decided on the
// authorships before any move.
func TestInitialsBatchesAgree(t *testing.T) {
	line := func(id, authors string) string {
		return `{"id":"` + id + `","authors":"` + authors + `","title":"Paper ` + id + `","categories":"hep-th",` +
			`"versions":[{"version":"v1","created":"Mon, 4 Jan 2010 10:00:00 GMT"}]}` + "\n"
	}
	extra := filepath.Join(t.TempDir(), "initials.jsonl")
	if err := os.WriteFile(extra, []byte(line("1001.0001", "Claude Itzykson, Jean-Bernard Zuber")+
		line("1001.0002", "C. Itzykson, Jean-Bernard Zuber")+ // joins Claude Itzykson
		line("1001.0003", "Anna Kowalska, Piotr Nowak")+
		line("1001.0004", "A. Kowalska, Piotr Nowak")+ // joins Anna Kowalska
		line("1001.0005", "Adam Kowalski, Ewa Lis")+
		line("1001.0006", "Anna Kowalski, Ewa Lis")+
		line("1001.0007", "A. Kowalski, Ewa Lis")), 0o644); err != nil { // two matches: stays
		t.Fatal(err)
	}
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			load := func(batch int) []string {
				saved := initialsBatchSize
				initialsBatchSize = batch
				defer func() { initialsBatchSize = saved }()
				bdb := dbtest.Open(t, dbtest.NewMigrated(t, kind))
				for _, path := range []string{"testdata/kaggle.jsonl", extra} {
					if _, err := Import(context.Background(), bdb, Options{Format: Kaggle, Paths: []string{path}}); err != nil {
						t.Fatal(err)
					}
				}
				var left []string
				if err := bdb.NewSelect().Table("researchers").Column("name").Where("name IN (?)", bun.List([]string{"C. Itzykson", "A. Kowalska", "A. Kowalski"})).
					Order("name").Scan(t.Context(), &left); err != nil {
					t.Fatal(err)
				}
				if want := []string{"A. Kowalski"}; !slices.Equal(left, want) {
					t.Errorf("batches of %d: initials profiles left %q, want %q", batch, left, want)
				}
				return dbtest.Dump(t, bdb)
			}
			dbtest.SameDump(t, load(1), load(1_000_000))
		})
	}
}
