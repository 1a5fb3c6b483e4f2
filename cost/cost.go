// Package cost prices a GraphQL operation before it runs, in the manner of
// GitHub's GraphQL API: every list field has a bound its resolver enforces
// (a page size from `first`/`last`, the length of an id list, or a fixed
// maximum), and from those bounds Measure computes the most objects the
// answer can hold (its node count) and how many lists the server may read
// to build it (its requests). The arithmetic saturates, so no argument
// makes a figure wrap around; fields under @skip or @include are counted
// as if they run; aliases, fragments and introspection count like any other
// selection.
package cost

import (
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Infinite is where every figure saturates: far above any limit, far below
// an int64 overflow.
const Infinite int64 = 1 << 53

// Bound says how many items a list field returns at most, or, for a field
// that returns a page object (a connection, a network), how many items the
// lists inside that object hold.
type Bound struct {
	// Args are the arguments that set the count; the first one given (and
	// not null) wins. With Length, the count is the length of Args[0].
	Args   []string
	Length bool
	// Default is the count when none of Args is given or all are null.
	Default int64
	// Max is the most the field's resolver ever returns, whatever its
	// arguments; an argument above it is clamped here (the resolver
	// refuses it, or cuts the list to it).
	Max int64
	// Plus is added to the count (a path of n hops has n+1 steps).
	Plus int64
	// Page marks a field whose object holds lists of Count items: the
	// field itself is one object, and its lists marked Inherit take the
	// count.
	Page bool
	// Inherit marks a list whose count is the Page count of the field
	// above it, times Factor when Factor is set.
	Inherit bool
	Factor  int64
	// Weight is how many requests one resolution of the field costs; 0
	// means 1 for lists and pages (but not for lists that Inherit) and
	// nothing for other fields. Searches,
	// facets and networks weigh more than a page read by key.
	Weight int64
}

// Table maps "Type.field" to the field's bound. Every list field of the
// schema needs an entry (Check says which lack one); other fields may
// have one to give them a Weight.
type Table map[string]Bound

// Cost is what Measure found.
type Cost struct {
	// Nodes is the most objects (values of object, interface or union
	// type) the answer can hold.
	Nodes int64
	// Requests is how many lists, pages and weighted fields the server may
	// resolve: each counted once per object that holds it.
	Requests int64
	// Points is Requests over 100, rounded up, at least 1: what the
	// operation costs of a client's budget.
	Points int64
}

// PointsOf turns requests into points as GitHub does: a hundred requests
// make a point, and every operation costs at least one.
func PointsOf(requests int64) int64 {
	return max(1, (requests+99)/100)
}

// Calculator measures operations against one schema and table.
type Calculator struct {
	schema *ast.Schema
	table  Table
}

// New returns a Calculator for schema and table. The introspection types'
// lists are bounded from the schema itself (there are only so many types,
// fields and arguments); their bounds need no entries in table.
func New(schema *ast.Schema, table Table) *Calculator {
	t := make(Table, len(table)+12)
	for k, v := range table {
		t[k] = v
	}
	for k, v := range introspectionBounds(schema) {
		t[k] = v
	}
	return &Calculator{schema: schema, table: t}
}

// Check returns the list fields of schema that table gives no bound, and
// the table entries that name no field, sorted. A server should refuse to
// start while either is non-empty.
func Check(schema *ast.Schema, table Table) (unbounded, unknown []string) {
	for name, def := range schema.Types {
		if def.BuiltIn || (def.Kind != ast.Object && def.Kind != ast.Interface) {
			continue
		}
		for _, f := range def.Fields {
			if f.Type.Elem != nil && len(f.Name) > 0 && f.Name[0] != '_' {
				if _, ok := table[name+"."+f.Name]; !ok {
					unbounded = append(unbounded, name+"."+f.Name)
				}
			}
		}
	}
	for key := range table {
		if fieldOf(schema, key) == nil {
			unknown = append(unknown, key)
		}
	}
	sort.Strings(unbounded)
	sort.Strings(unknown)
	return unbounded, unknown
}

func fieldOf(schema *ast.Schema, key string) *ast.FieldDefinition {
	typ, field, ok := strings.Cut(key, ".")
	if def := schema.Types[typ]; ok && def != nil {
		return def.Fields.ForName(field)
	}
	return nil
}

// Measure prices op, a validated operation of doc, with vars its coerced
// variables.
func (c *Calculator) Measure(doc *ast.QueryDocument, op *ast.OperationDefinition, vars map[string]any) Cost {
	w := walker{c: c, doc: doc, vars: vars, memo: map[memoKey]figures{}}
	f := w.set(op.SelectionSet, 0)
	return Cost{Nodes: f.nodes, Requests: f.requests, Points: PointsOf(f.requests)}
}

// figures are the nodes and requests of one instance of a selection set.
type figures struct{ nodes, requests int64 }

func (f figures) plus(g figures) figures {
	return figures{add(f.nodes, g.nodes), add(f.requests, g.requests)}
}

func (f figures) times(n int64) figures {
	return figures{mul(f.nodes, n), mul(f.requests, n)}
}

type memoKey struct {
	fragment string
	page     int64
}

type walker struct {
	c    *Calculator
	doc  *ast.QueryDocument
	vars map[string]any
	memo map[memoKey]figures
}

// set measures one instance of sel; page is the count of the nearest page
// field above, for the lists that inherit it.
func (w *walker) set(sel ast.SelectionSet, page int64) figures {
	var total figures
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			total = total.plus(w.field(s, page))
		case *ast.InlineFragment:
			total = total.plus(w.set(s.SelectionSet, page))
		case *ast.FragmentSpread:
			total = total.plus(w.spread(s.Name, page))
		}
	}
	return total
}

// spread measures a named fragment once per page count: a fragment spread
// many times, or fragments spreading each other, cost a walk each.
func (w *walker) spread(name string, page int64) figures {
	k := memoKey{name, page}
	if f, ok := w.memo[k]; ok {
		return f
	}
	// A cycle, which validation refuses, would end here.
	w.memo[k] = figures{Infinite, Infinite}
	var f figures
	if def := w.doc.Fragments.ForName(name); def != nil {
		f = w.set(def.SelectionSet, page)
	}
	w.memo[k] = f
	return f
}

func (w *walker) field(f *ast.Field, page int64) figures {
	if f.Definition == nil || f.Name == "__typename" {
		return figures{}
	}
	composite := false
	if def := w.c.schema.Types[f.Definition.Type.Name()]; def != nil {
		composite = def.Kind == ast.Object || def.Kind == ast.Interface || def.Kind == ast.Union
	}
	list := f.Definition.Type.Elem != nil
	parent := ""
	if f.ObjectDefinition != nil {
		parent = f.ObjectDefinition.Name
	}
	b, bounded := w.c.table[parent+"."+f.Name]
	if !bounded {
		// Check makes every list field of the server's schema bounded; a
		// list it missed is priced as unbounded rather than as one item.
		if list {
			return figures{Infinite, Infinite}
		}
		if !composite {
			return figures{}
		}
		return figures{1, 0}.plus(w.set(f.SelectionSet, page))
	}
	count := int64(1)
	if list || b.Page {
		count = w.count(f, b, page)
	}
	own := figures{requests: b.weight(list)}
	if !composite {
		return own
	}
	if b.Page {
		// One page object, whose lists hold count items each.
		return own.plus(figures{nodes: 1}).plus(w.set(f.SelectionSet, count))
	}
	child := figures{nodes: 1}.plus(w.set(f.SelectionSet, page))
	return own.plus(child.times(count))
}

// count is how many items f returns at most under bound b.
func (w *walker) count(f *ast.Field, b Bound, page int64) int64 {
	var n int64
	switch {
	case b.Inherit:
		n = page
		if b.Factor > 0 {
			n = mul(n, b.Factor)
		}
	case b.Length:
		n = b.Default
		if len(b.Args) > 0 {
			if v, ok := w.arg(f, b.Args[0]); ok {
				if l, ok := v.([]any); ok {
					n = int64(len(l))
				} else {
					n = 1 // a single value is coerced to a list of one
				}
			}
		}
	default:
		n = b.Default
		for _, name := range b.Args {
			if v, ok := w.arg(f, name); ok {
				if i, ok := toInt(v); ok {
					n = i
					break
				}
			}
		}
	}
	n = add(n, b.Plus)
	if b.Max > 0 {
		n = min(n, b.Max)
	}
	return max(n, 0)
}

// arg is the value of f's argument name, the schema's default when the
// query does not give it; ok is false when it is absent or null.
func (w *walker) arg(f *ast.Field, name string) (any, bool) {
	var v *ast.Value
	if a := f.Arguments.ForName(name); a != nil {
		v = a.Value
	} else if d := f.Definition.Arguments.ForName(name); d != nil {
		v = d.DefaultValue
	}
	if v == nil {
		return nil, false
	}
	x, err := v.Value(w.vars)
	if err != nil || x == nil {
		return nil, false
	}
	return x, true
}

func toInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case float64:
		if v != v || v > float64(Infinite) {
			return Infinite, true
		}
		if v < 0 {
			return 0, true
		}
		return int64(v), true
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, true
		}
		if f, err := v.Float64(); err == nil {
			return toInt(f)
		}
	}
	return 0, false
}

// add and mul saturate at Infinite; figures are never negative.
func add(a, b int64) int64 {
	if a >= Infinite-b {
		return Infinite
	}
	return a + b
}

func mul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > Infinite/b {
		return Infinite
	}
	return min(a*b, Infinite)
}

// introspectionBounds bounds the lists of the introspection types by the
// largest such list the schema has.
func introspectionBounds(schema *ast.Schema) Table {
	var types, fields, args, enums, ifaces, possible, dirArgs int64
	for _, def := range schema.Types {
		types++
		// An input type's fields are its Fields too.
		fields = max(fields, int64(len(def.Fields)))
		enums = max(enums, int64(len(def.EnumValues)))
		ifaces = max(ifaces, int64(len(def.Interfaces)))
		possible = max(possible, int64(len(schema.PossibleTypes[def.Name])))
		for _, f := range def.Fields {
			args = max(args, int64(len(f.Arguments)))
		}
	}
	for _, d := range schema.Directives {
		dirArgs = max(dirArgs, int64(len(d.Arguments)))
	}
	fixed := func(n int64) Bound { return Bound{Default: n, Max: max(n, 1)} }
	return Table{
		"__Schema.types":        fixed(types),
		"__Schema.directives":   fixed(int64(len(schema.Directives))),
		"__Type.fields":         fixed(fields),
		"__Type.inputFields":    fixed(fields),
		"__Type.enumValues":     fixed(enums),
		"__Type.interfaces":     fixed(ifaces),
		"__Type.possibleTypes":  fixed(possible),
		"__Field.args":          fixed(args),
		"__Directive.args":      fixed(dirArgs),
		"__Directive.locations": fixed(32),
	}
}

// Clamp is min(max(n, 0), Infinite) as an int, for reporting.
func Clamp(n int64) int {
	return int(min(max(n, 0), min(Infinite, math.MaxInt)))
}
