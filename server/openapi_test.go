package server

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// openAPIPaths reads the document's operations, "get /export/search" and
// so on, with the names of each one's path parameters.
func openAPIPaths(t *testing.T, body []byte) map[string][]string {
	t.Helper()
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			Parameters []struct{ Name, In string } `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Errorf("openapi %q, want 3.1.x", doc.OpenAPI)
	}
	ops := map[string][]string{}
	for path, methods := range doc.Paths {
		for method, op := range methods {
			var names []string
			for _, p := range op.Parameters {
				if p.In == "path" {
					names = append(names, p.Name)
				}
			}
			ops[method+" "+path] = names
		}
	}
	return ops
}

// openAPIPath writes a ServeMux pattern as the document's operation:
// "GET /{$}" is "get /", a wildcard {name...} is {name}, and a pattern
// ending in a slash, which matches every path under it, is <prefix>{file}.
func openAPIPath(pattern string) string {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		return "any " + pattern
	}
	path = strings.TrimSuffix(path, "{$}")
	if strings.HasSuffix(path, "/") && path != "/" {
		path += "{file}"
	}
	return strings.ToLower(method) + " " + strings.ReplaceAll(path, "...}", "}")
}

// TestOpenAPIDescribesEveryRoute walks the routes the server registers
// and fails when /openapi.json leaves one out, or describes one the
// server does not have, or names path parameters its path does not.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	s := sqliteServer(t, Config{SiteURL: "https://papers.example.org"})
	rec := serve(s.Handler(), httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	ops := openAPIPaths(t, rec.Body.Bytes())
	if len(s.routes) < 15 {
		t.Fatalf("the server registers %d routes: %v", len(s.routes), s.routes)
	}
	routes := map[string]bool{}
	for _, pattern := range s.routes {
		op := openAPIPath(pattern)
		routes[op] = true
		if _, ok := ops[op]; !ok {
			t.Errorf("the server serves %q, which /openapi.json does not describe (as %q)", pattern, op)
		}
	}
	param := regexp.MustCompile(`\{([^}]+)\}`)
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		if !routes[op] {
			t.Errorf("/openapi.json describes %q, which the server does not serve", op)
		}
		var want []string
		for _, m := range param.FindAllStringSubmatch(op, -1) {
			want = append(want, m[1])
		}
		if got := ops[op]; !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("%s: path parameters %v, want %v", op, got, want)
		}
	}
}

// TestOpenAPIPath: the test above is only as good as its reading of the
// patterns.
func TestOpenAPIPath(t *testing.T) {
	for pattern, want := range map[string]string{
		"GET /{$}":                            "get /",
		"GET /graphiql/":                      "get /graphiql/{file}",
		"POST /graphql":                       "post /graphql",
		"GET /export/papers/{path...}":        "get /export/papers/{path}",
		"GET /export/researchers/{id}/{file}": "get /export/researchers/{id}/{file}",
		"/export/":                            "any /export/",
	} {
		if got := openAPIPath(pattern); got != want {
			t.Errorf("openAPIPath(%q) = %q, want %q", pattern, got, want)
		}
	}
}
