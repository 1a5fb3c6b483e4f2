package server

import (
	_ "embed"
	"net/http"
)

// openAPIDocument describes every route the server registers (OpenAPI
// 3.1); TestOpenAPIDescribesEveryRoute holds it to the routes, and CI
// lints it with Redocly's strict rules (.ci/site-audit).
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPI serves GET /openapi.json.
func openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", docsMaxAge)
	w.Write(openAPIDocument) //nolint:errcheck // a client gone is not an error here
}

// routeMux is a ServeMux that keeps the patterns registered on it, so
// that the OpenAPI document can be checked against the routes.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func newRouteMux() *routeMux { return &routeMux{ServeMux: http.NewServeMux()} }

// Handle registers handler for pattern and keeps the pattern.
func (m *routeMux) Handle(pattern string, handler http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, handler)
}

// HandleFunc registers handler for pattern and keeps the pattern.
func (m *routeMux) HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(handler))
}

// mount serves handler, which routes with sub, under the prefix pattern,
// keeping sub's patterns as the routes rather than the prefix.
func (m *routeMux) mount(prefix string, handler http.Handler, sub *routeMux) {
	m.patterns = append(m.patterns, sub.patterns...)
	m.ServeMux.Handle(prefix, handler)
}
