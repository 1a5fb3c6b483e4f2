package cost_test

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/papergraph/papergraph/cost"
	"github.com/papergraph/papergraph/graph"
)

var schema = graph.NewExecutableSchema(graph.Config{}).Schema()

// TestSchemaSizesEveryList checks that the directives of the server's
// schema size every list field, and that the calculator reads them.
func TestSchemaSizesEveryList(t *testing.T) {
	if problems := cost.Check(schema); len(problems) > 0 {
		t.Errorf("Check = %v, want nothing", problems)
	}
	if _, err := cost.New(schema); err != nil {
		t.Errorf("New: %v", err)
	}
}

// TestCheckFindsGaps loads schema.graphqls with the sizes of one list,
// one page and a network's edges taken out, and with a directive that
// names what is not there: Check names each, and New refuses the schema.
func TestCheckFindsGaps(t *testing.T) {
	sdl, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	text := string(sdl)
	for _, cut := range []struct{ old, new string }{
		{`[Authorship!]! @listSize(assumedSize: 100, slicingArguments: ["first"], requireOneSlicingArgument: false)`, `[Authorship!]!`},
		{`CoauthorConnection! @listSize(assumedSize: 20, slicingArguments: ["first", "last"], sizedFields: ["edges", "nodes"], requireOneSlicingArgument: false)`,
			`CoauthorConnection! @listSize(assumedSize: 20, slicingArguments: ["first", "last"], sizedFields: ["edges"], requireOneSlicingArgument: false)`},
		{`[Institution!]! @listSize(assumedSize: 100) @batched(read: "InstitutionsByResearcherIDs")`,
			`[Institution!]! @listSize(assumedSize: 100, slicingArguments: ["first"]) @batched(read: "InstitutionsByResearcherIDs")`},
		{`[ID!]!): [Node]! @listSize(assumedSize: 1000) @listBound(lengthOf: "ids")`, `[ID!]!): [Node]! @listSize(assumedSize: 1000) @listBound(lengthOf: "ids") @cost(weight: "2.5")`},
	} {
		if strings.Count(text, cut.old) != 1 {
			t.Fatalf("schema.graphqls has %d of %q, want 1", strings.Count(text, cut.old), cut.old)
		}
		text = strings.Replace(text, cut.old, cut.new, 1)
	}
	cut, gqlErr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: text})
	if gqlErr != nil {
		t.Fatal(gqlErr)
	}
	want := []string{
		`CoauthorConnection.nodes: a list without @listSize`,
		`Paper.authors: a list without @listSize`,
		`Query.nodes: @cost(weight: "2.5") is not a whole number of reads`,
		`Researcher.institutions: slicingArguments names "first", not an argument`,
	}
	if got := cost.Check(cut); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check = %q, want %q", got, want)
	}
	if _, err := cost.New(cut); err == nil || !strings.Contains(err.Error(), "Paper.authors: a list without @listSize") {
		t.Errorf("New = %v, want the unsized list named", err)
	}
}

func calculator(t testing.TB) *cost.Calculator {
	t.Helper()
	calc, err := cost.New(schema)
	if err != nil {
		t.Fatal(err)
	}
	return calc
}

func measure(t testing.TB, query string, vars map[string]any) cost.Cost {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(schema, query)
	if errs != nil {
		t.Fatalf("%s: %v", query, errs)
	}
	op := doc.Operations[0]
	coerced, err := validator.VariableValues(schema, op, vars)
	if err != nil {
		t.Fatal(err)
	}
	return calculator(t).Measure(doc, op, coerced)
}

func TestMeasure(t *testing.T) {
	var introspectedTypes int64
	for range schema.Types {
		introspectedTypes++
	}
	tests := []struct {
		name            string
		query           string
		vars            map[string]any
		nodes, requests int64
	}{
		{"one object", `{ paper(id: "x") { title } }`, nil, 1, 0},
		{"typename is free", `{ paper(id: "x") { __typename title } }`, nil, 1, 0},
		{"a list at its default", `{ paper(id: "x") { authors { name } } }`, nil, 1 + 100, 1},
		{"a list below a list", `{ paper(id: "x") { authors(first: 5) { researcher { name } } } }`, nil, 1 + 5*2, 1},
		{"a page", `{ searchPapers(first: 7) { totalCount nodes { title } edges { node { title } } pageInfo { hasNextPage } } }`, nil,
			1 + 7 + 7*2 + 1, 10},
		{"the last of a page", `{ searchPapers(last: 3) { nodes { title } } }`, nil, 1 + 3, 10},
		{"a page at its default", `{ searchPapers { nodes { title } } }`, nil, 1 + 20, 10},
		{"first from a variable", `query($n: Int) { searchPapers(first: $n) { nodes { title } } }`, map[string]any{"n": 4}, 1 + 4, 10},
		{"a null variable takes the default", `query($n: Int) { searchPapers(first: $n) { nodes { title } } }`, map[string]any{"n": nil}, 1 + 20, 10},
		{"an argument past the maximum is clamped", `{ searchPapers(first: 2147483647) { nodes { title } } }`, nil, 1 + 100, 10},
		{"skipped fields count", `{ paper(id: "x") @skip(if: true) { authors { name } } }`, nil, 101, 1},
		{"aliases count", `{ a: paper(id: "x") { title } b: paper(id: "y") { title } }`, nil, 2, 0},
		{"ids", `{ papers(ids: ["a", "b", "c"]) { authors(first: 2) { name } } }`, nil, 3 * 3, 1 + 3},
		{"ids from a variable", `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": []any{"a", "b"}}, 2, 1},
		{"a network", `{ researcher(id: "1") { network(maxNodes: 10) { nodes { researcher { name } } edges { weight } } } }`, nil,
			1 + 1 + 10*2 + 10*20, 20},
		{"a path", `{ collaborationPath(from: "1", to: "2", maxDepth: 2) { steps { researcher { name } papers { title } } } }`, nil,
			1 + 3*(1+1+20), 50 + 3},
		{"a fragment counts where it is spread", `{ paper(id: "x") { ...A } researcher(id: "1") { papers(first: 2) { nodes { ...P } } } }
			fragment A on Paper { authors(first: 3) { name } }
			fragment P on Paper { ...A }`, nil, 1 + 3 + 1 + 1 + 2*(1+3), 1 + 1 + 2},
		{"introspection costs", `{ __schema { types { name } } }`, nil, 1 + introspectedTypes, 1},
		{"rateLimit", `{ rateLimit { cost } }`, nil, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := measure(t, tt.query, tt.vars)
			if got.Nodes != tt.nodes || got.Requests != tt.requests || got.Points != cost.PointsOf(tt.requests) {
				t.Errorf("Measure = %+v, want %d nodes, %d requests, %d points", got, tt.nodes, tt.requests, cost.PointsOf(tt.requests))
			}
		})
	}
}

// TestMeasureSaturates nests lists far past any int64: the figures stop
// at cost.Infinite instead of wrapping around.
func TestMeasureSaturates(t *testing.T) {
	q := `{ researcher(id: "1") { name } }`
	for range 12 {
		q = strings.Replace(q, "{ name }", `{ network(maxNodes: 2000) { nodes { researcher { name } } } }`, 1)
	}
	got := measure(t, q, nil)
	if got.Nodes != cost.Infinite || got.Requests != cost.Infinite {
		t.Errorf("Measure = %+v, want both figures at %d", got, cost.Infinite)
	}
}

func TestPointsOf(t *testing.T) {
	for requests, want := range map[int64]int64{0: 1, 1: 1, 100: 1, 101: 2, 1000: 10, cost.Infinite: (cost.Infinite + 99) / 100} {
		if got := cost.PointsOf(requests); got != want {
			t.Errorf("PointsOf(%d) = %d, want %d", requests, got, want)
		}
	}
}

func TestShapeOf(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  cost.Shape
	}{
		{"fields", `{ paper(id: "x") { title authors { name } } }`, cost.Shape{Fields: 4, RootFields: 1}},
		{"aliases", `{ a: paper(id: "x") { t: title } paper(id: "y") { title } }`, cost.Shape{Fields: 4, Aliases: 2, RootFields: 2}},
		{"root fields through fragments", `{ ...Q ... on Query { b: paper(id: "y") { title } } } fragment Q on Query { a: paper(id: "x") { title } }`,
			cost.Shape{Fields: 4 + 2, Aliases: 2, RootFields: 2}},
		{"fragments expand where spread", `{ paper(id: "x") { ...F ...F } } fragment F on Paper { title authors { name } }`,
			cost.Shape{Fields: 7 + 3, RootFields: 1}},
		{"directives", `{ paper(id: "x") @skip(if: false) @include(if: true) { title } }`, cost.Shape{Fields: 2, RootFields: 1, Directives: 2}},
		{"a cycle counts once", `{ ...A } fragment A on Query { ...B paper(id: "x") { title } } fragment B on Query { ...A }`,
			cost.Shape{Fields: 2 + 2, RootFields: 1}},
		{"an unused fragment counts, as validation checks it", `{ __typename } fragment F on Query { a: __typename b: __typename }`,
			cost.Shape{Fields: 1 + 2, Aliases: 2, RootFields: 1}},
		{"directives on variables", `query($v: Int @skip(if: true) @skip(if: true) @skip(if: true)) { __typename }`,
			cost.Shape{Fields: 1, RootFields: 1, Directives: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			if got := cost.ShapeOf(doc); got != tt.want {
				t.Errorf("ShapeOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestConflicts(t *testing.T) {
	var probe strings.Builder
	probe.WriteString(`{ paper(id: "x") {`)
	for i := range 497 {
		probe.WriteString(" authors(first: " + itoa(i) + ") { name }")
	}
	probe.WriteString(" } }")
	tests := []struct {
		name  string
		query string
		want  int64
	}{
		{"none", `{ paper(id: "x") { title authors { name } } }`, 0},
		{"the same field twice is no conflict", `{ paper(id: "x") { title title authors(first: 1) { name } authors(first: 1) { name } } }`, 0},
		{"differing arguments", `{ paper(id: "x") { authors(first: 1) { name } authors(first: 2) { name } } }`, 1},
		{"differing names under one alias", `{ paper(id: "x") { t: title t: slug } }`, 1},
		{"arguments in another order are the same", `{ paper(id: "x") { authors(first: 1, after: 2) { name } authors(after: 2, first: 1) { name } } }`, 0},
		{"through fragments", `{ paper(id: "x") { ...A ...B } } fragment A on Paper { authors(first: 1) { name } } fragment B on Paper { authors(first: 2) { name } }`,
			1 + 0 + 0},
		{"in the merged selections of same-named fields", `{ a: paper(id: "x") { title } a: paper(id: "x") { title: slug } }`, 1},
		{"inside one field", `{ paper(id: "x") { t: title t: slug } }`, 1},
		{"three differing of four", `{ p(a: 1) p(a: 2) p(a: 3) p(a: 3) }`, 6 - 1},
		{"the issue's probe: 497 differing pages of authors", probe.String(), 497 * 496 / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			if got := cost.Conflicts(doc); got != tt.want {
				t.Errorf("Conflicts = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestShapeOfFragmentBomb: fragments that each spread the next twice make
// 2^60 fields once expanded; the measure saturates (at 2^53) after a walk
// of each fragment once.
func TestShapeOfFragmentBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("{ ...F0 }\n")
	for i := range 60 {
		b.WriteString("fragment F" + itoa(i) + " on Query { ...F" + itoa(i+1) + " ...F" + itoa(i+1) + " }\n")
	}
	b.WriteString("fragment F60 on Query { paper(id: \"x\") { title } }\n")
	doc, err := parser.ParseQuery(&ast.Source{Input: b.String()})
	if err != nil {
		t.Fatal(err)
	}
	if got := cost.ShapeOf(doc).Fields; got != cost.Infinite {
		t.Errorf("Fields = %d, want it saturated at %d", got, cost.Infinite)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// FuzzMeasure prices any valid operation without panicking, within
// [0, Infinite], and with at least one point.
func FuzzMeasure(f *testing.F) {
	for _, q := range []string{
		`{ paper(id: "x") { authors(first: 3, after: 2) { researcher { sameName(first: 2) { name } } } } }`,
		`query($n: Int) { searchPapers(first: $n) { nodes { title } facets { years { year } } } }`,
		`{ researcher(id: "1") { network(maxNodes: 2000) { nodes { researcher { network { nodes { depth } } } } } } }`,
		`{ __schema { types { fields { args { type { ofType { name } } } } } } }`,
		`{ ...F } fragment F on Query { nodes(ids: ["a"]) { ... on Paper { title } } }`,
	} {
		f.Add(q, int64(5))
	}
	calc := calculator(f)
	f.Fuzz(func(t *testing.T, query string, n int64) {
		doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, 2000)
		if err != nil {
			return
		}
		if s := cost.ShapeOf(doc); s.Fields < 0 || s.Fields > cost.Infinite {
			t.Fatalf("ShapeOf = %+v", s)
		}
		if errs := validator.Validate(schema, doc); errs != nil || len(doc.Operations) == 0 {
			return
		}
		op := doc.Operations[0]
		vars := map[string]any{}
		for _, v := range op.VariableDefinitions {
			if v.Type.Name() == "Int" && v.Type.Elem == nil {
				vars[v.Variable] = n
			}
		}
		coerced, err := validator.VariableValues(schema, op, vars)
		if err != nil {
			return
		}
		c := calc.Measure(doc, op, coerced)
		if c.Nodes < 0 || c.Nodes > cost.Infinite || c.Requests < 0 || c.Requests > cost.Infinite || c.Points < 1 {
			t.Fatalf("Measure(%q) = %+v", query, c)
		}
	})
}

// TestMeasureByArchiveSizes: a list whose @listBound names an archive
// statistic is estimated at no more than the statistic, whatever size is
// asked; the lists that name none, and a statistic the archive lacks,
// keep their sizes.
func TestMeasureByArchiveSizes(t *testing.T) {
	calc := calculator(t)
	calc.SetTypical(map[string]int64{"authorsPerPaper": 7, "papersPerResearcher": 4})
	tests := []struct {
		name            string
		query           string
		nodes, requests int64
	}{
		{"a byline at its default", `{ paper(id: "x") { authors { name } } }`, 1 + 7, 1},
		{"a byline below the statistic", `{ paper(id: "x") { authors(first: 3) { name } } }`, 1 + 3, 1},
		{"a page of papers", `{ researcher(id: "1") { papers(first: 50) { nodes { title } edges { cursor } } } }`, 1 + 1 + 4 + 4, 1},
		{"a statistic the archive lacks", `{ researcher(id: "1") { fields { count } } }`, 1 + 50, 1},
		{"a list without a statistic", `{ searchPapers(first: 50) { nodes { title } } }`, 1 + 50, 10},
		{"ids", `{ papers(ids: ["a", "b"]) { authors { name } } }`, 2 * (1 + 7), 1 + 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(schema, tt.query)
			if errs != nil {
				t.Fatal(errs)
			}
			got := calc.Measure(doc, doc.Operations[0], nil)
			if got.Nodes != tt.nodes || got.Requests != tt.requests {
				t.Errorf("Measure = %+v, want %d nodes, %d requests", got, tt.nodes, tt.requests)
			}
		})
	}
}

// TestFollowRereads: the statistics Follow reads at start price the next
// operation, and a later read, which Measure starts once the interval has
// passed, prices those after it.
func TestFollowRereads(t *testing.T) {
	calc := calculator(t)
	var reads atomic.Int64
	read := func(context.Context) (map[string]int64, error) {
		if reads.Add(1) == 1 {
			return map[string]int64{"authorsPerPaper": 5}, nil
		}
		return map[string]int64{"authorsPerPaper": 9}, nil
	}
	doc, errs := gqlparser.LoadQuery(schema, `{ paper(id: "x") { authors { name } } }`)
	if errs != nil {
		t.Fatal(errs)
	}
	if err := calc.Follow(read, 0); err != nil {
		t.Fatal(err)
	}
	// The first Measure starts the second read, so it may see either.
	if got := calc.Measure(doc, doc.Operations[0], nil).Nodes; got != 1+5 && got != 1+9 {
		t.Fatalf("nodes = %d after the first read, want %d", got, 1+5)
	}
	deadline := time.Now().Add(time.Minute)
	for calc.Measure(doc, doc.Operations[0], nil).Nodes != 1+9 {
		if time.Now().After(deadline) {
			t.Fatal("the second read never priced an operation")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestMeasurePastTheCeiling: an operation whose worst case passes
// cost.Ceiling is measured at its worst case, whatever the archive says.
func TestMeasurePastTheCeiling(t *testing.T) {
	calc := calculator(t)
	calc.SetTypical(map[string]int64{"authorsPerPaper": 2, "papersPerResearcher": 2})
	query := `{ searchPapers(first: 100) { nodes { authors { researcher { papers(first: 100) { nodes { authors { researcher { name } } } } } } } } }`
	doc, errs := gqlparser.LoadQuery(schema, query)
	if errs != nil {
		t.Fatal(errs)
	}
	want := int64(1 + 100*(1+100*(2+1+100*(1+100*2))))
	if got := calc.Measure(doc, doc.Operations[0], nil); got.Nodes != want || want <= cost.Ceiling {
		t.Errorf("Measure = %+v, want its worst case, %d nodes, over the ceiling %d", got, want, cost.Ceiling)
	}
}

// TestMeasureResearcherPage prices the README's first query: at every
// list's size (an empty archive) as the sizes alone give it, and by an
// archive whose bylines, researchers' papers, fields and same-name lists
// are typically short.
func TestMeasureResearcherPage(t *testing.T) {
	query, err := os.ReadFile("../resolvers/testdata/researcher-page.graphql")
	if err != nil {
		t.Fatal(err)
	}
	doc, errs := gqlparser.LoadQuery(schema, string(query))
	if errs != nil {
		t.Fatal(errs)
	}
	op := doc.Operations[0]
	typical := map[string]int64{"authorsPerPaper": 10, "papersPerResearcher": 30, "fieldsPerResearcher": 5,
		"sameNamePerResearcher": 2, "categoriesPerPaper": 3, "coauthorsPerResearcher": 40}
	// The paper, its primary category, 3 categories, a page of 3
	// citations, a page of references, and 10 authors, each with a
	// researcher, 4 author positions, 5 fields of a category each, 2
	// same-name profiles, a most cited paper, a page of n papers of 10
	// authors and their researchers, its pageInfo, and a page of 10
	// co-authors and their researchers.
	page := func(n int64) int64 { return 1 + 1 + 3 + 1 + 3 + 1 + 10*(1+1+4+5*2+2+1+1+n*(1+10*2)+1+1+10*2) }
	for _, tt := range []struct{ first, worst, estimate int64 }{
		{5, 115_557, page(5)},
		{24, 497_457, page(24)},
		{50, 1_020_057, page(30)},
	} {
		vars := map[string]any{"paper": "x", "first": tt.first}
		empty, archive := calculator(t), calculator(t)
		archive.SetTypical(typical)
		if got := empty.Measure(doc, op, vars).Nodes; got != tt.worst {
			t.Errorf("first %d, empty archive: %d nodes, want %d", tt.first, got, tt.worst)
		}
		if got := archive.Measure(doc, op, vars).Nodes; got != tt.estimate {
			t.Errorf("first %d, typical archive: %d nodes, want %d", tt.first, got, tt.estimate)
		}
	}
}
