package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/cost"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph"
	"github.com/papergraph/papergraph/ratelimit"
)

// BenchmarkREADMEQuery serves the README's first query through the whole
// server on SQLite, and on PostgreSQL when the tests run there
// (dbtest.Kinds), from a reader pool as serve opens it, without and with
// an in-memory rate limiter. Compare its time with BenchmarkCostOverhead,
// the cost extension's own work per request:
//
//	go test ./server -run '^$' -bench 'READMEQuery|CostOverhead' -benchmem
func BenchmarkREADMEQuery(b *testing.B) {
	body, err := json.Marshal(map[string]any{"query": readmeQuery, "variables": map[string]any{"paper": "hep-th/9201001", "first": 5}})
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range dbtest.Kinds() {
		b.Run(kind, func(b *testing.B) {
			dsn := dbtest.NewSeeded(b, kind, largeBylines)
			bdb := dbtest.Open(b, dsn)
			if kind == "postgres" {
				reader, err := db.OpenReader(dsn, 0)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { reader.Close() })
				bdb = reader
			}
			benchREADMEQuery(b, bdb, body)
		})
	}
}

func benchREADMEQuery(b *testing.B, bdb *bun.DB, body []byte) {
	limiter, err := ratelimit.NewMemory(1<<30, 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name    string
		limiter ratelimit.Limiter
	}{{"no rate limit", nil}, {"rate limit in memory", limiter}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := New(Config{DB: bdb, RateLimiter: bc.limiter, Logger: discardLogger()})
			if err != nil {
				b.Fatal(err)
			}
			h := s.Handler()
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", mediaJSON)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
					b.Fatalf("status %d: %.300s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkCostOverhead is what the cost extension does for each request
// of the README's first query once its document is cached: find the
// document validated, price the operation, spend the points from an
// in-memory budget.
func BenchmarkCostOverhead(b *testing.B) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	doc, errs := gqlparser.LoadQuery(schema, readmeQuery)
	if errs != nil {
		b.Fatal(errs)
	}
	queries := lru.New[*ast.QueryDocument](1000)
	c := newCostLimit(Config{MaxTokens: DefaultMaxTokens, MaxFields: DefaultMaxFields, MaxAliases: DefaultMaxAliases,
		MaxRootFields: DefaultMaxRootFields, MaxDirectives: DefaultMaxDirectives, MaxConflicts: DefaultMaxConflicts}, queries)
	calc, err := cost.New(schema)
	if err != nil {
		b.Fatal(err)
	}
	c.calc = calc
	ctx := context.Background()
	params := &graphql.RawParams{Query: readmeQuery}
	queries.Add(ctx, readmeQuery, doc)
	if err := c.MutateOperationParameters(ctx, params); err != nil {
		b.Fatal(err)
	}
	limiter, err := ratelimit.NewMemory(1<<30, 0)
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]any{"paper": "hep-th/9201001", "first": int64(5)}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.queries.Get(ctx, params.Query); !ok {
			b.Fatal("document not cached")
		}
		m := c.calc.Measure(doc, doc.Operations[0], vars)
		if _, err := limiter.Spend(ctx, "ip:192.0.2.1", int(m.Points)); err != nil {
			b.Fatal(err)
		}
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
