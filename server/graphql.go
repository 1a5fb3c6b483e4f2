package server

import (
	"mime"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/resolvers"
)

// newGraphQL builds the /graphql handler over the resolvers' schema: GraphQL
// over HTTP by GET and POST, parsed documents and persisted queries cached,
// and operations refused for their size, depth, node count or cost before
// any resolver runs.
// The resolvers' loaders must be put in each request's context around it.
func newGraphQL(cfg Config) *handler.Server {
	srv := handler.New(resolvers.NewSchema(cfg.DB))
	srv.AddTransport(transport.Options{AllowedMethods: []string{"GET", "POST", "OPTIONS"}})
	srv.AddTransport(overHTTP{transport.GET{}})
	srv.AddTransport(overHTTP{transport.POST{}})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	// First, so that it sees the name of every operation, even those a
	// later extension refuses.
	srv.Use(exchangeRecorder{})
	srv.Use(cacheHeaders{})
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.SetParserTokenLimit(cfg.MaxTokens)
	// After persisted queries, so that it sees the document a hash names;
	// its shape check runs before validation, its pricing after depth.
	costs := newCostLimit(cfg)
	srv.Use(depthLimit{max: cfg.MaxDepth})
	srv.Use(costs)
	srv.SetErrorPresenter(resolvers.ErrorPresenter)
	srv.SetRecoverFunc(resolvers.Recover)
	return srv
}

// overHTTP corrects the one status code where gqlgen's GET and POST
// transports part from the GraphQL-over-HTTP specification
// (https://graphql.github.io/graphql-over-http/draft/): gqlgen answers
// application/json clients with 422 for documents that fail to parse or
// validate, where the specification asks for 200, since such clients read
// errors from the body. Content negotiation, the 400 for
// application/graphql-response+json clients and the refusal of mutations
// sent by GET are gqlgen's own.
type overHTTP struct{ graphql.Transport }

func (t overHTTP) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.Transport.Do(legacyStatus{w}, r, exec)
}

// legacyStatus turns 422 into 200 for application/json responses.
type legacyStatus struct{ http.ResponseWriter }

func (w legacyStatus) WriteHeader(code int) {
	if code == http.StatusUnprocessableEntity {
		if mt, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type")); mt == "application/json" {
			code = http.StatusOK
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w legacyStatus) Unwrap() http.ResponseWriter { return w.ResponseWriter }
