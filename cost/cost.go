// Package cost prices a GraphQL operation before it runs, in the manner of
// GitHub's GraphQL API. The schema states the size of every list with the
// GraphQL cost directive specification's @listSize (a page size from
// `first`/`last`, a fixed maximum) and papergraph's @listBound (the most
// its resolver returns, the length of an id list), and what fields cost
// with @cost. From those Measure computes the objects the answer holds
// (its node count) and how many lists the server may read to build it
// (its requests): at most the sizes, and, for lists whose real length
// depends on the data (a byline, a researcher's papers), no more than the
// archive's own 99th percentile of such lists. The arithmetic saturates,
// so no argument makes a figure wrap around; fields under @skip or
// @include are counted as if they run; aliases, fragments and
// introspection count like any other selection.
package cost

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Infinite is where every figure saturates: far above any limit, far below
// an int64 overflow.
const Infinite int64 = 1 << 53

// Cost is what Measure found.
type Cost struct {
	// Nodes is the objects (values of object, interface or union type)
	// the answer is estimated to hold.
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

// Calculator measures operations against one schema, whose sizes it
// reads from the schema's directives, and the archive's statistics.
type Calculator struct {
	schema *ast.Schema
	table  table
	archive
}

// New returns a Calculator for schema, or an error naming what Check
// finds wrong with its sizes. The introspection types' lists are bounded
// from the schema itself (there are only so many types, fields and
// arguments).
func New(schema *ast.Schema) (*Calculator, error) {
	t, problems := tableOf(schema)
	if len(problems) > 0 {
		return nil, fmt.Errorf("cost directives: %s", strings.Join(problems, "; "))
	}
	for k, v := range introspectionBounds(schema) {
		t[k] = v
	}
	return &Calculator{schema: schema, table: t}, nil
}

func fieldOf(schema *ast.Schema, key string) *ast.FieldDefinition {
	typ, field, ok := strings.Cut(key, ".")
	if def := schema.Types[typ]; ok && def != nil {
		return def.Fields.ForName(field)
	}
	return nil
}

// Ceiling is the most objects an operation may hold in the worst case,
// at every list's size, for it to be measured by the archive's
// statistics: past it, whatever the archive, Measure gives the worst case.
// A shape that nests lists so deep that one chain of long lists could fill
// memory is thereby priced as such, while a page that reads like the
// archive (the README's first query at 50 papers a researcher holds about
// a million objects at worst) is priced by what it typically reads.
const Ceiling int64 = 10_000_000

// Measure prices op, a validated operation of doc, with vars its coerced
// variables.
func (c *Calculator) Measure(doc *ast.QueryDocument, op *ast.OperationDefinition, vars map[string]any) Cost {
	worst := c.walk(doc, op, vars, nil)
	f := worst
	if typical := c.typical(); len(typical) > 0 && worst.nodes <= Ceiling {
		f = c.walk(doc, op, vars, typical)
	}
	return Cost{Nodes: f.nodes, Requests: f.requests, Points: PointsOf(f.requests)}
}

func (c *Calculator) walk(doc *ast.QueryDocument, op *ast.OperationDefinition, vars map[string]any, typical map[string]int64) figures {
	w := walker{c: c, doc: doc, vars: vars, memo: map[memoKey]figures{}, typical: typical}
	return w.set(op.SelectionSet, 0)
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
	// typical is the archive's statistics (see Calculator.Follow).
	typical map[string]int64
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
		// New refuses a schema with an unsized list; a list it missed is
		// priced as unbounded rather than as one item.
		if list {
			return figures{Infinite, Infinite}
		}
		if !composite {
			return figures{}
		}
		return figures{1, 0}.plus(w.set(f.SelectionSet, page))
	}
	count := int64(1)
	if list || b.page {
		count = w.count(f, b, page)
	}
	// A list or page is a read, but a list that only shows the page
	// above (a connection's nodes and edges) was read with it.
	own := figures{requests: b.weight}
	if !composite {
		return own
	}
	if b.page {
		// One page object, whose lists hold count items each.
		return own.plus(figures{nodes: 1}).plus(w.set(f.SelectionSet, count))
	}
	child := figures{nodes: 1}.plus(w.set(f.SelectionSet, page))
	return own.plus(child.times(count))
}

// count is how many items f returns under bound b: at most its size,
// and, where the archive's statistics say lists of its kind are shorter,
// their typical length.
func (w *walker) count(f *ast.Field, b bound, page int64) int64 {
	var n int64
	switch {
	case b.inherit:
		n = page
		if b.factor > 0 {
			n = mul(n, b.factor)
		}
		return n
	case b.length:
		n = b.assumed
		if v, ok := w.arg(f, b.args[0]); ok {
			if l, ok := v.([]any); ok {
				n = int64(len(l))
			} else {
				n = 1 // a single value is coerced to a list of one
			}
		}
	default:
		n = b.assumed
		for _, name := range b.args {
			if v, ok := w.arg(f, name); ok {
				if i, ok := toInt(v); ok {
					n = add(max(i, 0), b.plus)
					break
				}
			}
		}
	}
	if b.max > 0 {
		n = min(n, b.max)
	}
	if t, ok := w.typical[b.typical]; ok && b.typical != "" {
		n = min(n, t)
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

// introspectionBounds bounds the lists of the introspection types by
// their mean length over the schema, rounded up: an introspection query
// walks every type, so the product of the means (types × fields a type ×
// arguments a field) is the answer's real size, where the product of the
// longest lists would count a schema many times its size.
func introspectionBounds(schema *ast.Schema) table {
	var types, fields, args, enums, ifaces, possible, dirArgs int64
	for _, def := range schema.Types {
		types++
		// An input type's fields are its Fields too.
		fields += int64(len(def.Fields))
		enums += int64(len(def.EnumValues))
		ifaces += int64(len(def.Interfaces))
		possible += int64(len(schema.PossibleTypes[def.Name]))
		for _, f := range def.Fields {
			args += int64(len(f.Arguments))
		}
	}
	for _, d := range schema.Directives {
		dirArgs += int64(len(d.Arguments))
	}
	mean := func(total, of int64) int64 {
		if of == 0 {
			return 0
		}
		return (total + of - 1) / of
	}
	args, fields = mean(args, fields), mean(fields, types)
	enums, ifaces, possible = mean(enums, types), mean(ifaces, types), mean(possible, types)
	dirArgs = mean(dirArgs, int64(len(schema.Directives)))
	fixed := func(n int64) bound { return bound{assumed: n, max: max(n, 1), weight: 1} }
	return table{
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
