package server

import (
	"encoding/json"
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

// newGraphQL builds the /graphql handler over es: GraphQL over HTTP by GET
// and POST, parsed documents cached, persisted queries (APQ) or, when docs
// is set, only those trusted documents, introspection unless cfg turns it
// off, and operations refused for their size, depth, node count or cost
// before any resolver runs.
// The resolvers' loaders must be put in each request's context around it.
func newGraphQL(es graphql.ExecutableSchema, cfg Config, docs *trustedDocuments) *handler.Server {
	srv := handler.New(es)
	srv.AddTransport(transport.Options{AllowedMethods: []string{"GET", "POST", "OPTIONS"}})
	srv.AddTransport(overHTTP{Transport: transport.GET{}, documentIDs: docs != nil})
	srv.AddTransport(overHTTP{Transport: transport.POST{}, documentIDs: docs != nil})
	queries := newQueryCache(srv)
	// First, so that it sees the name of every operation, even those a
	// later extension refuses.
	srv.Use(exchangeRecorder{})
	srv.Use(cacheHeaders{})
	srv.Use(noSubscriptions{})
	useIntrospection(srv, cfg)
	if docs != nil {
		// Not APQ as well: it would let any client add a document.
		srv.Use(docs)
	} else {
		srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	}
	srv.SetParserTokenLimit(cfg.MaxTokens)
	// After persisted queries and trusted documents, so that it sees the
	// document a hash names; its shape check runs before validation, its
	// pricing after depth.
	costs := newCostLimit(cfg, queries)
	srv.Use(depthLimit{max: cfg.MaxDepth})
	srv.Use(costs)
	srv.Use(newMutationTurns())
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(resolvers.Recover)
	return srv
}

// parsedDocuments is how many parsed documents a handler keeps: gqlgen's
// own default, so that a client repeating an operation is parsed once.
const parsedDocuments = 1000

// newQueryCache gives srv the cache of parsed documents, which the cost
// limit reads too.
func newQueryCache(srv *handler.Server) *lru.LRU[*ast.QueryDocument] {
	queries := lru.New[*ast.QueryDocument](parsedDocuments)
	srv.SetQueryCache(queries)
	return queries
}

// useIntrospection lets srv answer introspection, or refuses it when cfg
// turns it off.
func useIntrospection(srv *handler.Server, cfg Config) {
	if cfg.DisableIntrospection {
		srv.Use(noIntrospection{})
		// "Did you mean …" in a validation error names fields as
		// introspection would.
		srv.SetDisableSuggestion(true)
		return
	}
	srv.Use(extension.Introspection{})
}

// overHTTP corrects gqlgen's GET and POST transports where they part from
// the GraphQL-over-HTTP specification
// (https://graphql.github.io/graphql-over-http/draft/) for requests that
// fail before execution (a document that does not parse or validate, an
// operation refused for its shape):
//   - gqlgen answers application/json clients with 422, where the
//     specification asks for 200, since such clients read errors from the
//     body;
//   - gqlgen's body carries "data": null, where a request error has no
//     data entry at all (the GraphQL specification's "request error").
//
// Content negotiation and the 400 for application/graphql-response+json
// clients are gqlgen's own.
//
// With documentIDs set it also reads the persisted documents draft's
// documentId parameter, which gqlgen does not, for trustedDocuments.
type overHTTP struct {
	graphql.Transport
	documentIDs bool
}

// Do serves the request with an operation of its own (see costLimit),
// which holds the answer's memory until the answer is written, and which
// charges a request that fails before it is priced before the answer's
// headers state its budget. An answer's data is written in place,
// not encoded again with its response (see streamingExecutor).
func (t overHTTP) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if t.documentIDs {
		r = withDocumentID(r)
	}
	ctx, op := withOperation(r.Context())
	defer op.release()
	r = r.WithContext(ctx)
	t.Transport.Do(&requestErrorWriter{ResponseWriter: w, get: r.Method == http.MethodGet, op: op,
		before: func() { op.settleUnpriced(ctx) }}, r, streamingExecutor{GraphExecutor: exec, op: op})
}

// requestErrorWriter turns 422 into 200 for application/json responses and
// drops the data entry from the body of every 4xx answer. gqlgen writes a
// response body in one Write call.
//
// gqlgen refuses a mutation sent by GET with 406; the specification asks
// for 405 (Method Not Allowed), which the writer answers with Allow: POST.
type requestErrorWriter struct {
	http.ResponseWriter
	get bool // the request is a GET
	// op holds the response of an answer, which Write writes in
	// place of the transport's encoding of it without its data.
	op           *operation
	requestError bool // the status was 4xx: the body is a request error
	// before runs once, before the status or body is written.
	before  func()
	written bool
}

func (w *requestErrorWriter) WriteHeader(code int) {
	w.start()
	if code >= 400 && code < 500 {
		w.requestError = true
	}
	if w.get && code == http.StatusNotAcceptable {
		w.Header().Set("Allow", "POST")
		code = http.StatusMethodNotAllowed
	}
	if code == http.StatusUnprocessableEntity {
		if mt, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type")); mt == "application/json" {
			code = http.StatusOK
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *requestErrorWriter) start() {
	if !w.written {
		w.written = true
		if w.before != nil {
			w.before()
		}
	}
}

func (w *requestErrorWriter) Write(b []byte) (int, error) {
	w.start()
	if resp := w.op.takeResponse(); resp != nil && !w.requestError {
		if err := writeResponse(w.ResponseWriter, resp); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	if !w.requestError {
		return w.ResponseWriter.Write(b)
	}
	var resp struct {
		Errors     json.RawMessage `json:"errors"`
		Extensions json.RawMessage `json:"extensions,omitempty"`
	}
	if json.Unmarshal(b, &resp) != nil || resp.Errors == nil {
		return w.ResponseWriter.Write(b)
	}
	out, err := json.Marshal(resp)
	if err != nil {
		return w.ResponseWriter.Write(b)
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *requestErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
