package server

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/resolvers"
)

// TestSchemaSDL checks that /schema.graphql is the executed schema: it
// loads as a schema with the same types and fields, descriptions kept.
func TestSchemaSDL(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	rec := serve(h, httptest.NewRequest(http.MethodGet, "/schema.graphql", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" || rec.Header().Get("Cache-Control") == "" {
		t.Fatalf("GET /schema.graphql = %d, %q, %q; want 200 cacheable text", rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Cache-Control"))
	}
	got, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: rec.Body.String()})
	if err != nil {
		t.Fatalf("SDL does not load: %v", err)
	}
	want := resolvers.NewSchema(nil).Schema()
	for name, def := range want.Types {
		if def.BuiltIn {
			continue
		}
		g := got.Types[name]
		if g == nil {
			t.Errorf("type %s missing", name)
			continue
		}
		if g.Description != def.Description {
			t.Errorf("type %s: description %q, want %q", name, g.Description, def.Description)
		}
		for _, f := range def.Fields {
			if gf := g.Fields.ForName(f.Name); gf == nil || gf.Type.String() != f.Type.String() || len(gf.Arguments) != len(f.Arguments) {
				t.Errorf("field %s.%s differs", name, f.Name)
			}
		}
	}

	off := sqliteServer(t, Config{DisableIntrospection: true}).Handler()
	if rec := serve(off, httptest.NewRequest(http.MethodGet, "/schema.graphql", nil)); rec.Code != http.StatusNotFound {
		t.Errorf("--introspection=false: GET /schema.graphql = %d, want 404", rec.Code)
	}
}

// TestLLMsTxt checks that every query in /llms.txt validates against the
// schema and answers without errors on a few imported papers, and that
// its limits are the server's.
func TestLLMsTxt(t *testing.T) {
	bdb := paperscapeDB(t)
	h := newTestServer(t, bdb, Config{MaxNodes: 123_456}).Handler()
	rec := serve(h, httptest.NewRequest(http.MethodGet, "/llms.txt", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("GET /llms.txt = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	text := rec.Body.String()
	for _, want := range []string{"123,456", "1,000", "5,000", "/schema.graphql", "/graphql"} {
		if !strings.Contains(text, want) {
			t.Errorf("llms.txt does not say %q", want)
		}
	}

	schema := resolvers.NewSchema(nil).Schema()
	queries := regexp.MustCompile("(?s)```graphql\n(.*?)```").FindAllStringSubmatch(text, -1)
	if len(queries) < 3 {
		t.Fatalf("llms.txt has %d example queries, want the main ones", len(queries))
	}
	for _, q := range queries {
		if _, errs := gqlparser.LoadQuery(schema, q[1]); len(errs) > 0 {
			t.Errorf("example does not validate: %v\n%s", errs, q[1])
			continue
		}
		resp := decode(t, serve(h, post(t, map[string]string{"query": q[1]}, mediaResponse)))
		if len(resp.Errors) > 0 || string(resp.Data) == "" {
			t.Errorf("example answers errors %+v\n%s", resp.Errors, q[1])
		}
	}
}
