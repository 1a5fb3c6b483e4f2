package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/server"
)

// An example in README.md or a page of docs/ is one of:
//
//   - a fenced ```graphql block, run with the variables of the paragraph
//     after it when that paragraph says "with the variables `{…}`";
//   - a call written as code in the prose, `paper(id: "…")`,
//     `researcher(id: "…")`, `institution(id: "…")`,
//     `category(code: "…")` or `searchPapers(query: "…")` (and
//     searchResearchers, searchInstitutions);
//   - a curl command to localhost:8080: a POST of its -d body to /graphql,
//     or a GET of its URL (/graphql?query=…, /export/…), with its -H
//     headers, $KEY standing for an API key of the demo database; one that
//     sends a documentId goes to a server whose trusted documents are the
//     manual's ```json manifest.
//
// An example in schema.graphqls is a quoted value after "e.g." in a
// description ((e.g. "hep-th/9201001", "12-e-witten")); schemaChecks says
// how the description's place in the schema checks it.
//
// Each must answer on the demo set with 200: a GraphQL request with no
// errors and every root field of the answer neither null nor an empty
// list, an export whole.

var (
	graphqlBlock = regexp.MustCompile("(?s)```graphql\n(.*?)```")
	variables    = regexp.MustCompile("with the variables `(\\{[^`]*\\})`")
	proseCall    = regexp.MustCompile("`((?:paper|researcher|institution)\\(id|category\\(code|(search(?:Papers|Researchers|Institutions))\\(query): (\"[^\"`…]+\")\\)`")
	curlCommand  = regexp.MustCompile(`curl [^\n` + "`" + `]*`)
	curlURL      = regexp.MustCompile(`localhost:8080(/[^'\s]*)`)
	manifest     = regexp.MustCompile("(?s)```json\n\\s*(\\{\"sha256:.*?\\})\\s*```")
	curlBody     = regexp.MustCompile(`-d '([^']*)'`)
	curlHeader   = regexp.MustCompile(`-H '([^']*)'|-H "([^"]*)"`)
	example      = regexp.MustCompile(`e\.g\. ((?:"[^"]*"(?:,\s+|\s+or\s+)?)+)`)
	quoted       = regexp.MustCompile(`"([^"]*)"`)
)

// schemaChecks are the queries that check an example, by the schema
// coordinate of the description that gives it; $v is the example. A
// coordinate missing here fails the test, so that every example is run.
var schemaChecks = map[string]string{
	"Query.paper(id:)":                 `query($v: String!) { paper(id: $v) { id } }`,
	"Paper.arxivId":                    `query($v: String!) { paper(id: $v) { id } }`,
	"Paper.slug":                       `query($v: String!) { paper(id: $v) { id } }`,
	"Paper.doi":                        `query($v: String!) { paper(id: $v) { id } }`,
	"Query.researcher(id:)":            `query($v: String!) { researcher(id: $v) { id } }`,
	"Researcher.slug":                  `query($v: String!) { researcher(id: $v) { id } }`,
	"Researcher.orcid":                 `query($v: String!) { researcher(id: $v) { id } }`,
	"Researcher.openAlexId":            `query($v: String!) { researcher(id: $v) { id } }`,
	"Query.institution(id:)":           `query($v: String!) { institution(id: $v) { id } }`,
	"Institution.rorId":                `query($v: String!) { institution(id: $v) { id } }`,
	"Institution.rorUrl":               `query($v: String!) { institution(id: $v) { id } }`,
	"Query.category":                   `query($v: String!) { category(code: $v) { code } }`,
	"Category.code":                    `query($v: String!) { category(code: $v) { code } }`,
	"Query.searchPapers(query:)":       `query($v: String!) { searchPapers(query: $v, first: 1) { nodes { id } } }`,
	"Query.searchResearchers(query:)":  `query($v: String!) { searchResearchers(query: $v, first: 1) { nodes { id } } }`,
	"Query.searchInstitutions(query:)": `query($v: String!) { searchInstitutions(query: $v, first: 1) { nodes { id } } }`,
	"Query.suggest(prefix:)":           `query($v: String!) { suggest(prefix: $v, first: 1) { id } }`,
}

// docExample is one example: where it is, the request that runs it, and
// whether it needs the server with trusted documents.
type docExample struct {
	where   string
	req     *http.Request
	trusted bool
}

func graphqlRequest(query string, vars map[string]any) *http.Request {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		panic(err) // a string and a map of JSON values always encode
	}
	return rawGraphQLRequest(string(body))
}

func rawGraphQLRequest(body string) *http.Request {
	return rawRequest("/graphql", body)
}

// rawRequest is a POST of the JSON body to path.
func rawRequest(path, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

// manualPages are the files of the manual, README.md and docs/*.md, by
// their path from the repository's root.
func manualPages(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, name := range append([]string{"../../README.md"}, names...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		pages[strings.TrimPrefix(name, "../../")] = string(b)
	}
	return pages
}

// pageExamples extracts the examples of the manual's page named page
// (see above).
func pageExamples(t *testing.T, page, text, key string) []docExample {
	t.Helper()
	var out []docExample
	for i, m := range graphqlBlock.FindAllStringSubmatchIndex(text, -1) {
		after, _, _ := strings.Cut(text[m[1]:], "```")
		var vars map[string]any
		if v := variables.FindStringSubmatch(after); v != nil {
			if err := json.Unmarshal([]byte(v[1]), &vars); err != nil {
				t.Fatalf("%s graphql block %d: variables %s: %v", page, i+1, v[1], err)
			}
		}
		out = append(out, docExample{where: fmt.Sprintf("%s graphql block %d", page, i+1), req: graphqlRequest(text[m[2]:m[3]], vars)})
	}
	for _, m := range proseCall.FindAllStringSubmatch(text, -1) {
		selection := "__typename"
		if m[2] != "" {
			selection = "nodes { __typename }"
		}
		out = append(out, docExample{where: page + " " + m[0], req: graphqlRequest(fmt.Sprintf("{ x: %s: %s) { %s } }", m[1], m[3], selection), nil)})
	}
	for _, cmd := range curlCommand.FindAllString(strings.ReplaceAll(text, "\\\n", " "), -1) {
		cmd = strings.ReplaceAll(cmd, "$KEY", key)
		u := curlURL.FindStringSubmatch(cmd)
		if u == nil {
			t.Errorf("%s %q: no 'localhost:8080/…' URL", page, cmd)
			continue
		}
		var req *http.Request
		trusted := false
		if b := curlBody.FindStringSubmatch(cmd); b != nil {
			req, trusted = rawRequest(u[1], b[1]), strings.Contains(b[1], `"documentId"`)
		} else {
			req = httptest.NewRequest(http.MethodGet, u[1], nil)
		}
		for _, h := range curlHeader.FindAllStringSubmatch(cmd, -1) {
			name, value, _ := strings.Cut(h[1]+h[2], ":")
			req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
		}
		out = append(out, docExample{where: page + " " + cmd, req: req, trusted: trusted})
	}
	return out
}

// schemaExamples extracts the examples of the schema's descriptions (see
// above), failing t for one in a place schemaChecks lacks.
func schemaExamples(t *testing.T, sdl string) []docExample {
	t.Helper()
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: sdl})
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	add := func(coordinate, description string) {
		for _, m := range example.FindAllStringSubmatch(description, -1) {
			check, ok := schemaChecks[coordinate]
			if !ok {
				t.Errorf("schema %s: examples %s, but schemaChecks has no check for %s", coordinate, m[1], coordinate)
				continue
			}
			for _, v := range quoted.FindAllStringSubmatch(m[1], -1) {
				out = append(out, docExample{where: fmt.Sprintf("schema %s %q", coordinate, v[1]), req: graphqlRequest(check, map[string]any{"v": v[1]})})
			}
		}
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range schema.Types {
			if !yield(n) {
				return
			}
		}
	}) {
		def := schema.Types[name]
		if def.BuiltIn {
			continue
		}
		add(name, def.Description)
		for _, f := range def.Fields {
			add(name+"."+f.Name, f.Description)
			for _, a := range f.Arguments {
				add(name+"."+f.Name+"("+a.Name+":)", a.Description)
			}
		}
	}
	return out
}

// checkExamples runs every example of the manual (README.md and
// docs/*.md) and schema.graphqls on bdb, which holds the demo set.
func checkExamples(t *testing.T, bdb *bun.DB) {
	pages := manualPages(t)
	var documents map[string]string
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		if m := manifest.FindStringSubmatch(pages[name]); m != nil && documents == nil {
			if err := json.Unmarshal([]byte(m[1]), &documents); err != nil {
				t.Fatalf("%s's manifest %s: %v", name, m[1], err)
			}
		}
	}
	if documents == nil {
		t.Fatal("the manual has no ```json manifest of trusted documents")
	}
	handler := func(cfg server.Config) http.Handler {
		cfg.DB, cfg.Logger = bdb, slog.New(slog.NewTextHandler(io.Discard, nil))
		srv, err := server.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return srv.Handler()
	}
	// The signed-in examples send $KEY: a key of the demo database, and a
	// server that may write their follows.
	key, _, err := db.CreateAPIKey(t.Context(), bdb, "manual examples", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	vectors, built, err := embed.StartIndex(t.Context(), bdb, embed.Config{})
	if err != nil {
		t.Fatalf("the demo set's embeddings: %v", err)
	}
	<-built
	h := handler(server.Config{Writer: bdb, Vectors: vectors, SiteURL: "https://papers.example.org"})
	trusted := handler(server.Config{TrustedDocuments: documents})
	sdl, err := os.ReadFile("../../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	var fromManual []docExample
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		fromManual = append(fromManual, pageExamples(t, name, pages[name], key)...)
	}
	fromSchema := schemaExamples(t, string(sdl))
	// So that a change to the extraction or a move of the manual cannot
	// quietly drop examples.
	if len(fromManual) < 30 || len(fromSchema) < 20 {
		t.Fatalf("%d manual and %d schema examples, want at least 30 and 20", len(fromManual), len(fromSchema))
	}
	t.Logf("%d manual and %d schema examples", len(fromManual), len(fromSchema))
	for _, ex := range append(fromManual, fromSchema...) {
		rec := httptest.NewRecorder()
		if ex.trusted {
			trusted.ServeHTTP(rec, ex.req)
		} else {
			h.ServeHTTP(rec, ex.req)
		}
		if rec.Code != http.StatusOK {
			t.Errorf("%s: status %d: %.300s", ex.where, rec.Code, rec.Body.String())
			continue
		}
		if strings.HasPrefix(ex.req.URL.Path, "/export/") {
			if rec.Body.Len() == 0 || rec.Result().Trailer.Get("Papergraph-Export-Status") != "complete" {
				t.Errorf("%s: %d bytes, trailer %v; want a whole export", ex.where, rec.Body.Len(), rec.Result().Trailer)
			}
			continue
		}
		if ex.req.URL.Path != "/graphql" {
			continue // any other path: its 200 is the answer
		}
		var resp struct {
			Data   map[string]json.RawMessage
			Errors []json.RawMessage
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Errors) > 0 || len(resp.Data) == 0 {
			t.Errorf("%s: %.300s (%v)", ex.where, rec.Body.String(), err)
			continue
		}
		for field, v := range resp.Data {
			if empty(v) {
				t.Errorf("%s: %s is %.200s", ex.where, field, v)
			}
		}
	}
}

// empty says whether a root field's answer is null, an empty list or a
// connection with no nodes.
func empty(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	if string(v) == "null" || string(v) == "[]" {
		return true
	}
	var conn struct{ Nodes *[]json.RawMessage }
	return json.Unmarshal(v, &conn) == nil && conn.Nodes != nil && len(*conn.Nodes) == 0
}
