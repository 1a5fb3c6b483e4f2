package resolvers_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/demo"
	"github.com/papergraph/papergraph/ingest"
)

// demoDB is a fresh database of kind holding the demo set (an import of
// a minute or two).
func demoDB(t testing.TB, kind string) *bun.DB {
	t.Helper()
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, kind))
	for _, opts := range demo.Imports() {
		if _, err := ingest.Import(context.Background(), bdb, opts); err != nil {
			t.Fatal(err)
		}
	}
	return bdb
}
