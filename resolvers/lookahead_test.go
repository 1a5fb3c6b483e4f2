package resolvers

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/graph"
	"github.com/papergraph/papergraph/graph/model"
)

// readsItsOwn are the fields that resolve through code but not through a
// loader: each sends its own statements and walks below its result
// itself, as a root does.
var readsItsOwn = []string{"Paper.citationNetwork", "Researcher.network", "Institution.network",
	// A signed-in user's fields read and walk below themselves: one
	// viewer per request, so nothing to batch across parents.
	"Viewer.following", "Viewer.feed", "Following.researchers", "Following.categories",
	"Mutation.followResearcher", "Mutation.unfollowResearcher", "Mutation.followCategory", "Mutation.unfollowCategory",
	// A subscription reads each event's matches in one statement of its
	// own; the fields below them use the answer's fresh loaders, which
	// the stream has the look-ahead fill first (see stream).
	"Subscription.papersAdded", "Subscription.researcherUpdated",
	// askStream reads its passages as ask does, and has the look-ahead
	// fill the first answer's loaders for their papers.
	"Subscription.askStream",
	// A list's count is always exact; searchPapers' count, shared with its
	// totalCount, is one statement of that root's.
	"PaperConnection.totalCountIsExact"}

// codeFields are the fields of schema's object types that gqlgen resolves
// by calling code that may read: the methods of the field resolvers, and
// the methods of graph/model types that take a context.
func codeFields(t *testing.T, schema *ast.Schema) []string {
	t.Helper()
	var out []string
	add := func(typ string, methods reflect.Type) {
		def := schema.Types[typ]
		if def == nil {
			t.Fatalf("no type %s in the schema", typ)
		}
		for i := range methods.NumMethod() {
			m := methods.Method(i)
			for _, f := range def.Fields {
				if strings.EqualFold(f.Name, m.Name) {
					out = append(out, typ+"."+f.Name)
				}
			}
		}
	}
	root := reflect.TypeFor[graph.ResolverRoot]()
	for i := range root.NumMethod() {
		if m := root.Method(i); m.Name != "Query" {
			add(m.Name, m.Type.Out(0))
		}
	}
	ctxType := reflect.TypeFor[context.Context]()
	for _, v := range []any{&model.PaperConnection{}, &model.PaperFacets{}, &model.CoauthorConnection{}, &model.InstitutionResearcherConnection{}} {
		typ := reflect.TypeOf(v)
		def := schema.Types[typ.Elem().Name()]
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			if m.Type.NumIn() > 1 && m.Type.In(1) == ctxType {
				for _, f := range def.Fields {
					if strings.EqualFold(f.Name, m.Name) {
						out = append(out, def.Name+"."+f.Name)
					}
				}
			}
		}
	}
	return out
}

// TestLookAheadsMatchSchema checks the look-ahead's table against the
// schema, as cost.Check checks Bounds: every entry names a real field and
// leads to the field's own type, and every field that resolves through
// code is in the table or reads on its own.
func TestLookAheadsMatchSchema(t *testing.T) {
	schema := NewSchema(nil).Schema()
	for name, s := range lookAheads {
		typ, field, _ := strings.Cut(name, ".")
		def := schema.Types[typ]
		if def == nil || def.Fields.ForName(field) == nil {
			t.Errorf("lookAheads[%q]: no such field in the schema", name)
			continue
		}
		if got := def.Fields.ForName(field).Type.Name(); s.next != "" && s.next != got {
			t.Errorf("lookAheads[%q] leads to %s, but the field is of type %s", name, s.next, got)
		}
	}
	checkWalkLeadsOn(t, schema)
	fields := codeFields(t, schema)
	if len(fields) < 30 {
		t.Fatalf("found only %d fields resolved by code: %v", len(fields), fields)
	}
	for _, f := range fields {
		if _, ok := lookAheads[f]; !ok && !slices.Contains(readsItsOwn, f) {
			t.Errorf("%s resolves through code but is not in lookAheads (nor in readsItsOwn)", f)
		}
	}
}

// checkWalkLeadsOn checks that the walk goes on wherever the table knows
// a field further down: a type "leads on" when one of its fields is in
// lookAheads or is of a type that leads on. Every field of a type the walk
// reaches (the types of the table's entries and those they lead to) whose
// type leads on must be in the table with that type as its next, or read
// on its own; otherwise the objects below it are resolved one at a time.
func checkWalkLeadsOn(t *testing.T, schema *ast.Schema) {
	t.Helper()
	leadsOn := map[string]bool{}
	walked := map[string]bool{}
	for name, s := range lookAheads {
		typ, _, _ := strings.Cut(name, ".")
		leadsOn[typ], walked[typ] = true, true
		if s.next != "" {
			walked[s.next] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for _, def := range schema.Types {
			if def.Kind != ast.Object || leadsOn[def.Name] {
				continue
			}
			for _, f := range def.Fields {
				if leadsOn[f.Type.Name()] {
					leadsOn[def.Name], changed = true, true
					break
				}
			}
		}
	}
	for typ := range walked {
		def := schema.Types[typ]
		if def == nil {
			continue // reported above
		}
		for _, f := range def.Fields {
			name, next := typ+"."+f.Name, f.Type.Name()
			if !leadsOn[next] || slices.Contains(readsItsOwn, name) {
				continue
			}
			switch s, ok := lookAheads[name]; {
			case !ok:
				t.Errorf("%s is of type %s, whose fields the look-ahead reads, but is not in lookAheads (a plain field needs a hop)", name, next)
			case s.next == "":
				t.Errorf("lookAheads[%q] stops the walk (next \"\"), but its type %s has fields the look-ahead reads", name, next)
			}
		}
	}
}

// TestPaperTextFields checks that the Paper fields with a resolver that
// returns text (gqlgen.yml) are paperTextFields, which the look-ahead
// reads whole papers for.
func TestPaperTextFields(t *testing.T) {
	var got []string
	textResult := reflect.TypeFor[*string]()
	resolvers := reflect.TypeFor[graph.PaperResolver]()
	for i := range resolvers.NumMethod() {
		m := resolvers.Method(i)
		if m.Type.NumIn() == 2 && m.Type.NumOut() == 2 && m.Type.Out(0) == textResult {
			got = append(got, strings.ToLower(m.Name[:1])+m.Name[1:])
		}
	}
	want := slices.Clone(paperTextFields)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Paper fields resolved as text: %v, paperTextFields: %v", got, want)
	}
}
