package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/papergraph/papergraph/resolvers"
)

// cacheMaxAge is how long browsers and proxies may reuse a GET answer. The
// data changes only when an import runs, so a minute costs little
// freshness and saves repeated work for notebooks and dashboards. An
// answer that states its client's budget (a rate limit is on) or answers
// an API key is the client's own: only its browser may keep it. One that
// answers a signed-in user changes with the user's mutations: the browser
// must ask again before it reuses it.
const (
	cacheMaxAge        = "public, max-age=60"
	cacheMaxAgePrivate = "private, max-age=60"
	cacheSignedIn      = "private, no-cache"
)

type responseHeaderKey struct{}

// cacheableGET lets the cacheHeaders extension mark the answer to a GET
// request as cacheable; POST answers never are. The media type of the
// answer follows the request's Accept header (application/json or
// application/graphql-response+json, with different status codes), so a
// cache must keep one copy per Accept.
func cacheableGET(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept, Authorization, X-API-Key")
		ctx := context.WithValue(r.Context(), responseHeaderKey{}, w.Header())
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// cacheHeaders sets Cache-Control on GET answers without errors, before the
// transport writes them.
type cacheHeaders struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = cacheHeaders{}

func (cacheHeaders) ExtensionName() string                   { return "CacheHeaders" }
func (cacheHeaders) Validate(graphql.ExecutableSchema) error { return nil }

func (cacheHeaders) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if h, ok := ctx.Value(responseHeaderKey{}).(http.Header); ok && resp != nil && len(resp.Errors) == 0 {
		if ex := exchangeFrom(ctx); resolvers.SignedIn(ctx) {
			h.Set("Cache-Control", cacheSignedIn)
		} else if ex.latestRate() != nil || strings.HasPrefix(ex.client, "key:") {
			h.Set("Cache-Control", cacheMaxAgePrivate)
		} else {
			h.Set("Cache-Control", cacheMaxAge)
		}
	}
	return resp
}
