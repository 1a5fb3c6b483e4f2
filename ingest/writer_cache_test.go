package ingest

import (
	"context"
	"testing"

	"github.com/papergraph/papergraph/db/dbtest"
)

// The writer's researcher cache starts again past its bound: with a bound
// of two, a batch a record and the cache emptied after nearly every one,
// an import leaves exactly the data of one that caches everything.
func TestResearcherCacheBound(t *testing.T) {
	sources := []struct {
		format Format
		path   string
	}{
		{Kaggle, "testdata/kaggle.jsonl"},
		{OpenAlex, "testdata/openalex.jsonl"},
		{Paperscape, "testdata/paperscape.csv"},
		{Kaggle, "testdata/kaggle.jsonl"},
	}
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			load := func(bound int) []string {
				saved := maxCachedResearchers
				maxCachedResearchers = bound
				defer func() { maxCachedResearchers = saved }()
				bdb := dbtest.Open(t, dbtest.NewMigrated(t, kind))
				for _, s := range sources {
					if _, err := Import(context.Background(), bdb, Options{Format: s.format, Paths: []string{s.path}, BatchSize: 1}); err != nil {
						t.Fatal(err)
					}
				}
				return dbtest.Dump(t, bdb)
			}
			dbtest.SameDump(t, load(2), load(1_000_000))
		})
	}
}
