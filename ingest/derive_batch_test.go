package ingest

import (
	"context"
	"testing"

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
				bdb := dbtest.Open(t, dbtest.New(t, kind))
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
