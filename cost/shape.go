package cost

import (
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Shape is what a parsed document holds, measured before validation, whose
// cost grows with the square of the fields that share a response name: a
// bound on the shape bounds the validation's work.
type Shape struct {
	// Fields counts the document's fields with every fragment spread
	// expanded where it is spread, over all its operations, and each
	// fragment definition's once more, used or not.
	Fields int64
	// Aliases counts the fields written with an alias.
	Aliases int64
	// RootFields is the most top-level fields of one operation, fragments
	// at the top level expanded.
	RootFields int64
	// Directives is the most directives on one field, fragment, operation
	// or variable.
	Directives int64
}

// ShapeOf measures doc, which need not be valid: unknown fragments count
// nothing and a fragment that spreads itself counts once.
func ShapeOf(doc *ast.QueryDocument) Shape {
	m := shapeMeter{doc: doc, fields: map[string]int64{}, roots: map[string]int64{}}
	for _, op := range doc.Operations {
		m.directives(op.Directives)
		for _, v := range op.VariableDefinitions {
			m.directives(v.Directives)
		}
		m.shape.Fields = add(m.shape.Fields, m.expanded(op.SelectionSet))
		m.shape.RootFields = max(m.shape.RootFields, m.rootFields(op.SelectionSet))
	}
	// Validation checks every fragment definition on its own, used or
	// not, so each counts once more where it is defined.
	for _, f := range doc.Fragments {
		m.directives(f.Directives)
		m.written(f.SelectionSet)
		m.shape.Fields = add(m.shape.Fields, m.fragment(f.Name, m.fields, m.expanded))
	}
	for _, op := range doc.Operations {
		m.written(op.SelectionSet)
	}
	return m.shape
}

type shapeMeter struct {
	doc    *ast.QueryDocument
	shape  Shape
	fields map[string]int64 // expanded fields of each fragment
	roots  map[string]int64 // top-level fields of each fragment
}

func (m *shapeMeter) directives(ds ast.DirectiveList) {
	m.shape.Directives = max(m.shape.Directives, int64(len(ds)))
}

// written counts aliases and directives as written, each selection once.
func (m *shapeMeter) written(set ast.SelectionSet) {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.Alias != "" && s.Alias != s.Name {
				m.shape.Aliases++
			}
			m.directives(s.Directives)
			m.written(s.SelectionSet)
		case *ast.InlineFragment:
			m.directives(s.Directives)
			m.written(s.SelectionSet)
		case *ast.FragmentSpread:
			m.directives(s.Directives)
		}
	}
}

func (m *shapeMeter) expanded(set ast.SelectionSet) int64 {
	var n int64
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			n = add(n, add(1, m.expanded(s.SelectionSet)))
		case *ast.InlineFragment:
			n = add(n, m.expanded(s.SelectionSet))
		case *ast.FragmentSpread:
			n = add(n, m.fragment(s.Name, m.fields, m.expanded))
		}
	}
	return n
}

func (m *shapeMeter) rootFields(set ast.SelectionSet) int64 {
	var n int64
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			n = add(n, 1)
		case *ast.InlineFragment:
			n = add(n, m.rootFields(s.SelectionSet))
		case *ast.FragmentSpread:
			n = add(n, m.fragment(s.Name, m.roots, m.rootFields))
		}
	}
	return n
}

// fragment measures a named fragment once with measure, remembering it in
// memo.
func (m *shapeMeter) fragment(name string, memo map[string]int64, measure func(ast.SelectionSet) int64) int64 {
	if n, ok := memo[name]; ok {
		return n
	}
	memo[name] = 0
	def := m.doc.Fragments.ForName(name)
	if def == nil {
		return 0
	}
	n := measure(def.SelectionSet)
	memo[name] = n
	return n
}

// Conflicts counts the pairs of fields that validation's merge check
// (OverlappingFieldsCanBeMerged) compares and finds different: two fields
// that one selection set, fragments spread into it, holds under one
// response name, with different names or arguments. The check compares
// every such pair and describes each conflict, so its work and its errors
// grow with this count; like the check, Conflicts merges the selections
// of same-named fields and compares their fields as one set.
//
// It walks every field with its fragments expanded: measure the document
// with ShapeOf, and bound Fields, first.
func Conflicts(doc *ast.QueryDocument) int64 {
	m := conflictMeter{doc: doc}
	var n int64
	for _, op := range doc.Operations {
		n = add(n, m.sets([]ast.SelectionSet{op.SelectionSet}))
	}
	for _, f := range doc.Fragments {
		n = add(n, m.sets([]ast.SelectionSet{f.SelectionSet}))
	}
	return n
}

type conflictMeter struct{ doc *ast.QueryDocument }

// sets counts the conflicts of the selection sets merged into one.
func (m conflictMeter) sets(sets []ast.SelectionSet) int64 {
	groups := map[string][]*ast.Field{}
	var names []string
	for _, set := range sets {
		m.collect(set, map[string]bool{}, func(f *ast.Field) {
			name := f.Alias
			if name == "" {
				name = f.Name
			}
			if _, ok := groups[name]; !ok {
				names = append(names, name)
			}
			groups[name] = append(groups[name], f)
		})
	}
	var n int64
	for _, name := range names {
		fields := groups[name]
		same := map[string]int64{}
		var subs []ast.SelectionSet
		for _, f := range fields {
			same[signature(f)]++
			if len(f.SelectionSet) > 0 {
				subs = append(subs, f.SelectionSet)
			}
		}
		pairs := int64(len(fields)) * int64(len(fields)-1) / 2
		for _, k := range same {
			pairs -= k * (k - 1) / 2
		}
		n = add(n, pairs)
		if len(subs) > 0 {
			n = add(n, m.sets(subs))
		}
	}
	return n
}

// collect calls field for each field of set, fragments expanded; spread
// holds the fragments spread so far, so that a cycle ends.
func (m conflictMeter) collect(set ast.SelectionSet, spread map[string]bool, field func(*ast.Field)) {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			field(s)
		case *ast.InlineFragment:
			m.collect(s.SelectionSet, spread, field)
		case *ast.FragmentSpread:
			if spread[s.Name] {
				continue
			}
			spread[s.Name] = true
			if def := m.doc.Fragments.ForName(s.Name); def != nil {
				m.collect(def.SelectionSet, spread, field)
			}
		}
	}
}

// signature is a field's name and arguments, in the order of their names.
func signature(f *ast.Field) string {
	args := make([]string, 0, len(f.Arguments))
	for _, a := range f.Arguments {
		args = append(args, a.Name+":"+a.Value.String())
	}
	slices.Sort(args)
	return f.Name + "(" + strings.Join(args, ",") + ")"
}
