package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/99designs/gqlgen/graphql/playground"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/reqid"
)

// ExampleQuery is the query GraphiQL opens with: a paper, its authors, and
// each author's closest co-authors.
const ExampleQuery = `# A paper, its byline and each author's five closest co-authors.
{
  paper(id: "hep-th/9201001") {
    title
    published
    authors {
      name
      researcher {
        name
        paperCount
        coauthors(first: 5) {
          nodes {
            researcher { name }
            sharedPaperCount
          }
        }
      }
    }
  }
}
`

// readyTimeout bounds the database check behind /readyz.
const readyTimeout = 2 * time.Second

// graphiql serves GraphiQL, opening on ExampleQuery. gqlgen's page reads
// its starting query from the URL, so a visit to the bare page is sent to
// one that names the example; after that the URL follows the editor.
// The page loads GraphiQL from a CDN (see pageCSP), so it needs a network.
func graphiql(endpoint string) http.HandlerFunc {
	page := playground.Handler("papergraph", endpoint, playground.WithGraphiqlPersistStateInURL(true))
	csp := pageCSP(page)
	example := "?" + url.Values{"query": {ExampleQuery}}.Encode()
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		if r.URL.RawQuery == "" {
			http.Redirect(w, r, example, http.StatusFound)
			return
		}
		page(w, r)
	}
}

// noGraphiQL answers / when GraphiQL is turned off, pointing people and
// probes at the API.
func noGraphiQL(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "GraphiQL is turned off on this server; the GraphQL API is at /graphql", http.StatusNotFound)
}

// healthz reports that the process is up and serving.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// readyz reports whether the database answers with its schema up to date.
// The reason for a failure is logged, never sent: it may name hosts.
func readyz(bdb *bun.DB, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := db.Ping(ctx, bdb); err != nil {
			log.WarnContext(ctx, "not ready", "request_id", reqid.From(ctx), "err", err)
			http.Error(w, "database not ready", http.StatusServiceUnavailable)
			return
		}
		healthz(w, r)
	}
}
