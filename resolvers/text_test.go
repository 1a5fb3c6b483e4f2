package resolvers_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/resolvers"
)

// textArgs is every string argument of the schema, with a query that
// passes $v to it. TestTextArgsCoverSchema keeps it complete.
func textArgs(researcher, institution string) []struct{ field, arg, query string } {
	paper := `paper(id: "0704.0001")`
	res := `researcher(id: "` + researcher + `")`
	inst := `institution(id: "` + institution + `")`
	return []struct{ field, arg, query string }{
		{"Query.node", "id", `query($v: ID!) { node(id: $v) { id } }`},
		{"Query.nodes", "ids", `query($v: ID!) { nodes(ids: [$v]) { id } }`},
		{"Query.paper", "id", `query($v: String!) { paper(id: $v) { title } }`},
		{"Query.papers", "ids", `query($v: String!) { papers(ids: ["0704.0001", $v]) { title } }`},
		{"Query.researcher", "id", `query($v: String!) { researcher(id: $v) { name } }`},
		{"Query.institution", "id", `query($v: String!) { institution(id: $v) { name } }`},
		{"Query.category", "code", `query($v: String!) { category(code: $v) { name } }`},
		{"Query.searchPapers", "query", `query($v: String) { searchPapers(query: $v) { totalCount } }`},
		{"Query.searchPapers", "filter.categories", `query($v: String!) { searchPapers(filter: {categories: ["hep-th", $v]}) { totalCount } }`},
		{"Query.searchPapers", "filter.researcher", `query($v: String) { searchPapers(filter: {researcher: $v}) { totalCount } }`},
		{"Query.searchPapers", "filter.institution", `query($v: String) { searchPapers(filter: {institution: $v}) { totalCount } }`},
		{"Query.searchPapers", "after", `query($v: String) { searchPapers(after: $v) { nodes { title } } }`},
		{"Query.searchPapers", "before", `query($v: String) { searchPapers(before: $v) { nodes { title } } }`},
		{"Query.searchResearchers", "query", `query($v: String!) { searchResearchers(query: $v) { nodes { name } } }`},
		{"Query.searchResearchers", "after", `query($v: String) { searchResearchers(query: "a", after: $v) { nodes { name } } }`},
		{"Query.searchResearchers", "before", `query($v: String) { searchResearchers(query: "a", before: $v) { nodes { name } } }`},
		{"Query.searchInstitutions", "query", `query($v: String!) { searchInstitutions(query: $v) { nodes { name } } }`},
		{"Query.searchInstitutions", "after", `query($v: String) { searchInstitutions(query: "a", after: $v) { nodes { name } } }`},
		{"Query.searchInstitutions", "before", `query($v: String) { searchInstitutions(query: "a", before: $v) { nodes { name } } }`},
		{"Query.ask", "question", `query($v: String!) { ask(question: $v) { passages { number } } }`},
		{"Query.ask", "filter.categories", `query($v: String!) { ask(question: "x", filter: {categories: ["hep-th", $v]}) { passages { number } } }`},
		{"Query.ask", "filter.researcher", `query($v: String) { ask(question: "x", filter: {researcher: $v}) { passages { number } } }`},
		{"Query.ask", "filter.institution", `query($v: String) { ask(question: "x", filter: {institution: $v}) { passages { number } } }`},
		{"Query.suggest", "prefix", `query($v: String!) { suggest(prefix: $v) { label } }`},
		{"Query.collaborationPath", "from", `query($v: String!) { collaborationPath(from: $v, to: "` + researcher + `") { length } }`},
		{"Query.collaborationPath", "to", `query($v: String!) { collaborationPath(from: "` + researcher + `", to: $v) { length } }`},
		{"Paper.references", "after", `query($v: String) { ` + paper + ` { references(after: $v) { totalCount } } }`},
		{"Paper.references", "before", `query($v: String) { ` + paper + ` { references(before: $v) { totalCount } } }`},
		{"Paper.citations", "after", `query($v: String) { ` + paper + ` { citations(after: $v) { totalCount } } }`},
		{"Paper.citations", "before", `query($v: String) { ` + paper + ` { citations(before: $v) { totalCount } } }`},
		{"Category.papers", "after", `query($v: String) { category(code: "hep-th") { papers(after: $v) { totalCount } } }`},
		{"Category.papers", "before", `query($v: String) { category(code: "hep-th") { papers(before: $v) { totalCount } } }`},
		{"Researcher.papers", "after", `query($v: String) { ` + res + ` { papers(after: $v) { totalCount } } }`},
		{"Researcher.papers", "before", `query($v: String) { ` + res + ` { papers(before: $v) { totalCount } } }`},
		{"Researcher.papers", "category", `query($v: String) { ` + res + ` { papers(category: $v) { totalCount } } }`},
		{"Researcher.coauthors", "after", `query($v: String) { ` + res + ` { coauthors(after: $v) { totalCount } } }`},
		{"Researcher.coauthors", "before", `query($v: String) { ` + res + ` { coauthors(before: $v) { totalCount } } }`},
		{"Institution.researchers", "after", `query($v: String) { ` + inst + ` { researchers(after: $v) { totalCount } } }`},
		{"Institution.researchers", "before", `query($v: String) { ` + inst + ` { researchers(before: $v) { totalCount } } }`},
		{"Institution.papers", "after", `query($v: String) { ` + inst + ` { papers(after: $v) { totalCount } } }`},
		{"Institution.papers", "before", `query($v: String) { ` + inst + ` { papers(before: $v) { totalCount } } }`},
		{"Mutation.followResearcher", "id", `mutation($v: String!) { followResearcher(id: $v) { name } }`},
		{"Mutation.unfollowResearcher", "id", `mutation($v: String!) { unfollowResearcher(id: $v) { name } }`},
		{"Mutation.followCategory", "code", `mutation($v: String!) { followCategory(code: $v) { name } }`},
		{"Mutation.unfollowCategory", "code", `mutation($v: String!) { unfollowCategory(code: $v) { name } }`},
		{"Viewer.feed", "after", `query($v: String) { viewer { feed(after: $v) { totalCount } } }`},
		{"Query.topic", "id", `query($v: ID!) { topic(id: $v) { name } }`},
		{"Query.topics", "after", `query($v: String) { topics(after: $v) { totalCount } }`},
		{"Query.topics", "parent", `query($v: ID) { topics(parent: $v) { totalCount } }`},
		{"Topic.papers", "after", `query($v: String) { topics(first: 1) { nodes { papers(after: $v) { totalCount } } } }`},
		{"Topic.papers", "before", `query($v: String) { topics(first: 1) { nodes { papers(before: $v) { totalCount } } } }`},
	}
}

// badTexts are the kinds of malformed string, as raw JSON so that bytes
// no JSON encoder would write reach the server.
var badTexts = []struct{ name, json string }{
	{"NUL", `"x\u0000y"`},
	{"invalid UTF-8", "\"x\xff\xfey\""},
	{"lone surrogate", `"x\ud800y"`},
	{"C0 control", `"x\u0007y"`},
	{"C1 control", `"x\u009by"`},
	{"line feed", `"x\ny"`},
	{"right-to-left override", `"x\u202ey"`},
	{"right-to-left isolate", `"x\u2067y"`},
	{"noncharacter", `"x\uffffy"`},
	{"combining-mark flood", `"a` + strings.Repeat(`\u0301`, 50) + `"`},
	{"100 KB", `"` + strings.Repeat("a", 100<<10) + `"`},
	{"100 KB of accents", `"` + strings.Repeat("é", 50<<10) + `"`},
}

// textError is an error of a response with the argument it names.
type textError struct {
	Message    string
	Extensions struct{ Code, Argument string }
}

func TestBadText(t *testing.T) {
	// The fixtures with topics, for the topics' arguments.
	dbtest.EachSeeded(t, fixturesWithTopics, func(t *testing.T, _ string, bdb *bun.DB) {
		c := signedInClient(t, bdb)
		researcher := itoa(scalar[int64](t, bdb, "SELECT MIN(researcher_id) FROM authorships"))
		institution := itoa(scalar[int64](t, bdb, "SELECT MIN(id) FROM institutions"))
		for _, a := range textArgs(researcher, institution) {
			for _, bad := range badTexts {
				if bad.name == "line feed" && (a.arg == "query" || a.arg == "prefix" || a.arg == "question") {
					continue // a line break separates words in search text
				}
				resp, err := c.RawPost(a.query, client.Var("v", json.RawMessage(bad.json)))
				if err != nil {
					t.Fatal(err)
				}
				var errs []textError
				if err := json.Unmarshal(resp.Errors, &errs); err != nil {
					t.Fatalf("%s(%s) %s: errors %s: %v", a.field, a.arg, bad.name, resp.Errors, err)
				}
				if len(errs) != 1 || errs[0].Extensions.Code != resolvers.CodeBadUserInput || errs[0].Extensions.Argument != a.arg ||
					!strings.HasPrefix(errs[0].Message, a.arg+": ") {
					t.Errorf("%s(%s) %s: got %+v, want one BAD_USER_INPUT naming %s", a.field, a.arg, bad.name, errs, a.arg)
					continue
				}
				if msg := errs[0].Message; len(msg) > 300 || strings.ContainsAny(msg, "\x00\u202e") ||
					containsAny(strings.ToLower(msg), "select", "sqlite", "pq:", "sqlstate", "goroutine", ".go:", "/work/", "/home/", "/tmp/") {
					t.Errorf("%s(%s) %s: message %q (%d bytes) is long or shows internals", a.field, a.arg, bad.name, msg, len(msg))
				}
			}
		}
	})
}

func containsAny(s string, subs ...string) bool {
	return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
}

// TestGoodText checks that legitimate text is still text: accents,
// decomposed accents, other scripts, emoji, a tab in a search.
func TestGoodText(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		for _, tt := range []struct{ query, v string }{
			{`query($v: String!) { suggest(prefix: $v) { label } }`, "Balázs"},
			{`query($v: String!) { suggest(prefix: $v) { label } }`, "Bala\u0301zs"},
			{`query($v: String!) { searchResearchers(query: $v) { nodes { name } } }`, "Ernő Rubik"},
			{`query($v: String) { searchPapers(query: $v) { totalCount } }`, "black\thole"},
			{`query($v: String) { searchPapers(query: $v) { totalCount } }`, "量子 重力 🚀"},
			{`query($v: String!) { institution(id: $v) { name } }`, "Université Paris-Saclay"},
			{`query($v: String!) { searchInstitutions(query: $v) { nodes { name } } }`, "東京大学"},
			{`query($v: String) { searchPapers(query: $v) { totalCount } }`, strings.Repeat("é", resolvers.MaxQueryRunes)},
		} {
			if _, errs := rawPost(t, c, tt.query, client.Var("v", tt.v)); errs != nil {
				t.Errorf("%s with %q: got %+v, want no error", tt.query, tt.v, errs)
			}
		}
	})
}

// TestTextArgsCoverSchema checks that textArgs names every string
// argument of the schema, input object fields included, so that a new one
// cannot go untested.
func TestTextArgsCoverSchema(t *testing.T) {
	schema := resolvers.NewSchema(nil).Schema()
	var want []string
	var walk func(field, prefix string, args ast.ArgumentDefinitionList, fields ast.FieldList)
	walk = func(field, prefix string, args ast.ArgumentDefinitionList, fields ast.FieldList) {
		visit := func(name string, typ *ast.Type) {
			for typ.Elem != nil {
				typ = typ.Elem
			}
			switch def := schema.Types[typ.NamedType]; {
			case typ.NamedType == "String" || typ.NamedType == "ID":
				want = append(want, field+"("+prefix+name+")")
			case def != nil && def.Kind == ast.InputObject:
				walk(field, prefix+name+".", nil, def.Fields)
			}
		}
		for _, a := range args {
			visit(a.Name, a.Type)
		}
		for _, f := range fields {
			visit(f.Name, f.Type)
		}
	}
	for name, def := range schema.Types {
		// Subscriptions run over the WebSocket only; their arguments go
		// through the parsers of searchPapers' filter and researcher(id:),
		// and server's websocket_test refuses a malformed one.
		if strings.HasPrefix(name, "__") || def.Kind != ast.Object || name == "Subscription" {
			continue
		}
		for _, f := range def.Fields {
			if !strings.HasPrefix(f.Name, "__") {
				walk(name+"."+f.Name, "", f.Arguments, nil)
			}
		}
	}
	var got []string
	for _, a := range textArgs("1", "1") {
		got = append(got, a.field+"("+a.arg+")")
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("textArgs covers\n%v\nthe schema's string arguments are\n%v", got, want)
	}
}

// TestMalformedArguments checks bad escapes in the document itself, and
// arguments that gqlgen itself cannot read: a malformed Time is
// BAD_USER_INPUT naming it, and no message, gqlgen's and gqlparser's own
// included, repeats a huge argument.
func TestMalformedArguments(t *testing.T) {
	h := newHandler(dbtest.Open(t, dbtest.NewMigrated(t, "sqlite")))
	big := strings.Repeat("A", 100<<10)
	for _, tt := range []struct {
		query     string
		v         any
		code, arg string
	}{
		{`query($v: Time) { searchPapers(filter: {publishedFrom: $v}) { totalCount } }`, "yesterday", resolvers.CodeBadUserInput, "filter.publishedFrom"},
		{`query($v: Time) { searchPapers(filter: {publishedTo: $v}) { totalCount } }`, big, resolvers.CodeBadUserInput, "filter.publishedTo"},
		{`{ searchPapers(filter: {publishedTo: "` + big + `"}) { totalCount } }`, nil, resolvers.CodeBadUserInput, "filter.publishedTo"},
		// Escapes in the document itself rather than in JSON.
		{`{ paper(id: "x\ud800y") { title } }`, nil, resolvers.CodeBadUserInput, "id"},
		{`{ suggest(prefix: "x\u0000y") { label } }`, nil, resolvers.CodeBadUserInput, "prefix"},
		{`{ institution(id: "CERN\u202e") { name } }`, nil, resolvers.CodeBadUserInput, "id"},
		{`query($v: [SuggestType!]) { suggest(prefix: "a", types: $v) { label } }`, []string{big}, "GRAPHQL_VALIDATION_FAILED", ""},
		{`query($v: PaperSort) { category(code: "hep-th") { papers(sort: $v) { totalCount } } }`, big, "GRAPHQL_VALIDATION_FAILED", ""},
		{`{ suggest(prefix: "a", types: [` + big + `]) { label } }`, nil, "GRAPHQL_VALIDATION_FAILED", ""},
	} {
		rec := postJSON(t, h, map[string]any{"query": tt.query, "variables": map[string]any{"v": tt.v}})
		var resp struct{ Errors []textError }
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
			t.Fatalf("%.80s: %v", tt.query, err)
		}
		if len(resp.Errors) != 1 || resp.Errors[0].Extensions.Code != tt.code || resp.Errors[0].Extensions.Argument != tt.arg ||
			len(resp.Errors[0].Message) > 300 {
			t.Errorf("%.80s: got %.400v, want one %s naming %q, at most 300 bytes", tt.query, resp.Errors, tt.code, tt.arg)
		}
	}
}
