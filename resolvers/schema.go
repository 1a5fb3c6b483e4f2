// Package resolvers answers the GraphQL schema (schema.graphqls) from the
// database. NewSchema builds the executable schema; Middleware gives each
// request fresh loaders; ErrorPresenter and Recover keep internals out of
// responses. The HTTP server wires them into a gqlgen handler:
//
//	srv := handler.New(resolvers.NewSchema(bdb))
//	srv.AddTransport(transport.POST{})
//	srv.SetErrorPresenter(resolvers.ErrorPresenter)
//	srv.SetRecoverFunc(resolvers.Recover)
//	http.Handle("/graphql", resolvers.Middleware(bdb)(srv))
package resolvers

import (
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/graph"
	"github.com/papergraph/papergraph/notify"
)

// NewSchema returns the executable schema over bdb. Operations are priced
// by the cost package from Bounds, not by gqlgen's complexity functions.
// Its mutations are refused with READ_ONLY.
func NewSchema(bdb bun.IDB) graphql.ExecutableSchema {
	return graph.NewExecutableSchema(graph.Config{Resolvers: &Resolver{db: bdb}})
}

// NewWritableSchema is NewSchema whose mutations write through writer: on
// SQLite the one writer connection, since bdb's connections are read-only.
func NewWritableSchema(bdb, writer bun.IDB) graphql.ExecutableSchema {
	return graph.NewExecutableSchema(graph.Config{Resolvers: &Resolver{db: bdb, writer: writer}})
}

// NewLiveSchema is NewWritableSchema (writer may be nil: read-only) whose
// subscriptions hear bus.
func NewLiveSchema(bdb, writer bun.IDB, bus *notify.Bus) graphql.ExecutableSchema {
	return graph.NewExecutableSchema(graph.Config{Resolvers: &Resolver{db: bdb, writer: writer, bus: bus}})
}

// Middleware puts fresh loaders for bdb into every request's context.
// Loaders cache for their request's lifetime, so each request needs its
// own.
func Middleware(bdb bun.IDB) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(WithLoaders(r.Context(), NewLoaders(bdb))))
		})
	}
}
