package resolvers_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/resolvers"
)

// importFixtures fills bdb from the files in testdata through the real
// import pipeline.
func importFixtures(t testing.TB, bdb *bun.DB) {
	t.Helper()
	for _, in := range []struct {
		format ingest.Format
		path   string
	}{
		{ingest.ROR, "testdata/ror.jsonl"},
		{ingest.Paperscape, "testdata/pscp-odintsov.csv"},
		{ingest.Kaggle, "testdata/kaggle-first20.jsonl"},
		{ingest.OpenAlex, "testdata/openalex.jsonl"},
		{ingest.S2AG, "testdata/s2ag.jsonl"},
	} {
		sum, err := ingest.Import(context.Background(), bdb, ingest.Options{Format: in.format, Paths: []string{in.path}})
		if err != nil {
			t.Fatalf("import %s: %v", in.path, err)
		}
		if !sum.OK() {
			t.Fatalf("import %s: %d bad records, %d file errors", in.path, sum.Bad, sum.FileErrors)
		}
	}
}

// newHandler serves the schema over bdb as the HTTP server does, parsed
// documents cached included.
func newHandler(bdb bun.IDB) http.Handler {
	srv := handler.New(resolvers.NewSchema(bdb))
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](100))
	srv.SetErrorPresenter(resolvers.ErrorPresenter)
	srv.SetRecoverFunc(resolvers.Recover)
	return resolvers.Middleware(bdb)(srv)
}

func newClient(bdb bun.IDB) *client.Client { return client.New(newHandler(bdb)) }

// scalar reads one value with a direct SQL statement.
func scalar[T any](t testing.TB, bdb bun.IDB, query string, args ...any) T {
	t.Helper()
	var v T
	if err := bdb.NewRaw(query, args...).Scan(context.Background(), &v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}
