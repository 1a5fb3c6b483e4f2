// Package resolvers answers the GraphQL schema (schema.graphqls) from the
// database. NewSchema builds the executable schema; Middleware gives each
// request fresh loaders; ErrorPresenter and Recover keep internals out of
// responses. The HTTP server wires them into a gqlgen handler:
//
//	srv := handler.New(resolvers.NewSchema(bdb))
//	srv.AddTransport(transport.POST{})
//	srv.SetErrorPresenter(resolvers.ErrorPresenter)
//	srv.SetRecoverFunc(resolvers.Recover)
//	srv.Use(extension.FixedComplexityLimit(resolvers.ComplexityLimit))
//	http.Handle("/graphql", resolvers.Middleware(bdb)(srv))
package resolvers

import (
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/graph"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/network"
)

// ComplexityLimit is a complexity budget that the contract query of the
// researcher page (about 3,000 with 50 papers per profile) fits well
// within, while a query fanning out 100 × 100 × 100 does not.
const ComplexityLimit = 50_000

// NewSchema returns the executable schema over bdb. Its complexity
// function counts a connection's items as first (or last) times their own
// complexity, so that extension.FixedComplexityLimit bounds fan-out.
func NewSchema(bdb bun.IDB) graphql.ExecutableSchema {
	cfg := graph.Config{Resolvers: &Resolver{db: bdb}}
	c := &cfg.Complexity
	c.Paper.References = paperListComplexity
	c.Paper.Citations = paperListComplexity
	c.Researcher.Papers = func(child int, first *int, _ *string, last *int, _ *string, _ *string, _ *model.PaperSort) int {
		return pageSize(first, last) * child
	}
	c.Researcher.Coauthors = func(child int, first *int, _ *string, last *int, _ *string) int {
		return pageSize(first, last) * child
	}
	c.Institution.Papers = paperListComplexity
	c.Category.Papers = paperListComplexity
	c.Institution.Researchers = func(child int, first *int, _ *string, last *int, _ *string) int {
		return pageSize(first, last) * child
	}
	c.Category.TopResearchers = func(child int, first *int) int { return pageSize(first, nil) * child }
	c.Query.SearchPapers = func(child int, _ *string, _ *model.PaperFilter, _ *model.PaperSearchSort, first *int, _ *string, last *int, _ *string) int {
		return pageSize(first, last) * child
	}
	c.Query.SearchResearchers = func(child int, _ string, first *int, _ *string) int { return pageSize(first, nil) * child }
	c.Query.SearchInstitutions = func(child int, _ string, first *int, _ *string) int { return pageSize(first, nil) * child }
	c.Query.Suggest = func(child int, _ string, _ []model.SuggestType, first *int) int { return pageSize(first, nil) * child }
	c.Query.Nodes = func(child int, ids []string) int { return len(ids) * child }
	c.Researcher.Network = func(child int, _, maxNodes, _ *int) int { return networkSize(maxNodes) * child }
	c.Institution.Network = func(child int, _, maxNodes, _ *int) int { return networkSize(maxNodes) * child }
	c.Paper.CitationNetwork = func(child int, _, maxNodes *int) int { return networkSize(maxNodes) * child }
	c.Institution.Collaborators = func(child int, first *int) int { return pageSize(first, nil) * child }
	c.Query.CollaborationPath = func(child int, _, _ string, maxDepth *int) int {
		n := network.DefaultPathDepth
		if maxDepth != nil {
			n = min(max(*maxDepth, 1), network.MaxPathDepth)
		}
		return (n + 1) * child
	}
	c.Query.Papers = func(child int, ids []string) int { return len(ids) * child }
	return graph.NewExecutableSchema(cfg)
}

func paperListComplexity(child int, first *int, _ *string, last *int, _ *string, _ *model.PaperSort) int {
	return pageSize(first, last) * child
}

// networkSize is the most nodes a network field asks for: maxNodes,
// clamped to the range Validate accepts so that no argument makes the
// cost overflow.
func networkSize(maxNodes *int) int {
	if maxNodes == nil {
		return network.DefaultOptions.MaxNodes
	}
	return min(max(*maxNodes, 1), network.MaxNodesCap)
}

func pageSize(first, last *int) int {
	switch {
	case first != nil:
		return max(*first, 1)
	case last != nil:
		return max(*last, 1)
	}
	return defaultPage
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
