package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP endpoint (/mcp) serves the Model Context Protocol over
// Streamable HTTP, statelessly: every POST is a whole exchange, so any
// instance behind a balancer answers it. Each tool and resource is a fixed
// GraphQL document run through the /graphql handler with the request's
// context, so API keys, the cost model, rate limits, answer bounds and
// timeouts apply to an MCP call exactly as to the same query sent to
// /graphql.

// mcpVersion is the version the endpoint states in its initialize answer.
const mcpVersion = "1.0.0"

// Resource URIs of the MCP endpoint's templates.
const (
	paperURIPrefix      = "papergraph://paper/"
	researcherURIPrefix = "papergraph://researcher/"
)

// gqlRunner runs a GraphQL document with variables through /graphql.
type gqlRunner struct{ api http.Handler }

// gqlAnswer is a /graphql answer as the MCP tools read it.
type gqlAnswer struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code string `json:"code"`
		} `json:"extensions"`
	} `json:"errors"`
}

// errorText is the answer's errors as one line, each with its code.
func (a *gqlAnswer) errorText() string {
	var parts []string
	for _, e := range a.Errors {
		if e.Extensions.Code != "" {
			parts = append(parts, e.Extensions.Code+": "+e.Message)
		} else {
			parts = append(parts, e.Message)
		}
	}
	return strings.Join(parts, "; ")
}

// run sends doc with vars to /graphql as a POST of the request whose
// context ctx is, and decodes the answer.
func (g gqlRunner) run(ctx context.Context, doc string, vars any) (*gqlAnswer, error) {
	body, err := json.Marshal(map[string]any{"query": doc, "variables": vars})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	w := &bufferWriter{header: http.Header{}}
	g.api.ServeHTTP(w, req)
	var a gqlAnswer
	if err := json.Unmarshal(w.body.Bytes(), &a); err != nil {
		return nil, fmt.Errorf("the GraphQL answer (status %d) did not decode", w.status)
	}
	return &a, nil
}

// bufferWriter is the http.ResponseWriter a tool's GraphQL request is
// answered into.
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferWriter) Header() http.Header { return w.header }
func (w *bufferWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *bufferWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

// toolResult is a tool's answer: the data as JSON text (and as structured
// content), or a tool error that names the GraphQL errors' codes, such as
// RATE_LIMITED when the client's budget is spent.
func toolResult(a *gqlAnswer, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return nil, nil, err
	}
	if len(a.Errors) > 0 {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: a.errorText()}}}, nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(a.Data)}}}, nil, nil
}

// mcpTool adds a tool that runs doc with the tool's arguments as its
// variables.
func mcpTool[In any](s *mcp.Server, g gqlRunner, name, description, doc string) {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: description},
		func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
			return toolResult(g.run(ctx, doc, in))
		})
}

// newMCPServer is the MCP server whose tools and resources run through g.
func newMCPServer(g gqlRunner) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "papergraph", Title: "papergraph: the arXiv scholarly graph", Version: mcpVersion},
		&mcp.ServerOptions{Instructions: "Tools and resources over papergraph's GraphQL API (papers, researchers, " +
			"co-authors, citations). Each call spends the API key's hourly budget as the same GraphQL query would; " +
			"a spent budget answers with a RATE_LIMITED tool error."})
	addMCPTools(s, g)
	resource := func(uriTemplate, name, description, prefix, doc, field string) {
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: uriTemplate, Name: name, Description: description, MIMEType: "application/json"},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return readResource(ctx, g, req.Params.URI, prefix, doc, field)
			})
	}
	resource(paperURIPrefix+"{+id}", "paper", "A paper by arXiv id, DOI or global id, as the get_paper tool gives it.",
		paperURIPrefix, mcpPaperDoc, "paper")
	resource(researcherURIPrefix+"{+id}", "researcher", "A researcher by profile id, slug, ORCID or global id, as the get_researcher tool gives it.",
		researcherURIPrefix, mcpResearcherDoc, "researcher")
	return s
}

// readResource answers a resource URI of prefix with doc's answer's field,
// an MCP not-found error when that is null.
func readResource(ctx context.Context, g gqlRunner, uri, prefix, doc, field string) (*mcp.ReadResourceResult, error) {
	id, ok := strings.CutPrefix(uri, prefix)
	if !ok || id == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	a, err := g.run(ctx, doc, map[string]any{"id": id})
	if err != nil {
		return nil, err
	}
	if len(a.Errors) > 0 {
		return nil, errors.New(a.errorText())
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(a.Data, &data); err != nil {
		return nil, err
	}
	v := data[field]
	if len(v) == 0 || string(v) == "null" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(v)}}}, nil
}

// newMCP is the /mcp handler over api, the /graphql handler. A request
// with an API key the server did not issue is refused with 401, as
// /graphql refuses it; the budget is spent per tool call, inside api.
func newMCP(api http.Handler, maxBody int64) http.Handler {
	g := gqlRunner{api: api}
	s := newMCPServer(g)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: maxBody})
	return knownKey(h)
}

// knownKey refuses a request with an API key the server did not issue
// with 401, as /graphql does, before next sees it.
func knownKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if exchangeFrom(r.Context()).unknownKey {
			w.Header().Set("WWW-Authenticate", `Bearer realm="papergraph"`)
			http.Error(w, "unknown API key: send one the server issued, or none", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
