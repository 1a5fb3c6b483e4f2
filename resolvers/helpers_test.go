package resolvers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/resolvers"
)

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

// signedInClient is a client of a writable schema over bdb, signed in
// with a key it makes, as the HTTP server signs in a request that sends
// one. It returns the key's row too.
func signedInClient(t testing.TB, bdb *bun.DB) *client.Client {
	c, _ := signedIn(t, bdb, bdb)
	return c
}

func signedIn(t testing.TB, read, write *bun.DB) (*client.Client, *db.APIKey) {
	t.Helper()
	_, key, err := db.CreateAPIKey(context.Background(), write, "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv := handler.New(resolvers.NewWritableSchema(read, write))
	srv.AddTransport(transport.POST{})
	srv.SetErrorPresenter(resolvers.ErrorPresenter)
	srv.SetRecoverFunc(resolvers.Recover)
	return client.New(withViewer(resolvers.Middleware(read)(srv), key)), key
}

// withViewer signs every request to h in with key.
func withViewer(h http.Handler, key *db.APIKey) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(resolvers.WithViewer(r.Context(), key)))
	})
}

// scalar reads one value with a direct SQL statement.
func scalar[T any](t testing.TB, bdb bun.IDB, query string, args ...any) T {
	t.Helper()
	var v T
	if err := bdb.NewRaw(query, args...).Scan(context.Background(), &v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

// postJSON posts request (query, variables) to h as a JSON body and
// returns the recorded answer.
func postJSON(t testing.TB, h http.Handler, request map[string]any) *httptest.ResponseRecorder {
	t.Helper()
	body, err := json.Marshal(request)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
