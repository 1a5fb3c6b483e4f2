// Package schemadiff finds the changes between two versions of a GraphQL
// schema that can break a client written against the older one: a type,
// field, argument, enum value, union member or interface taken away, a
// type changed so that old answers or old arguments no longer fit, or an
// argument or input field a client must now send. Additions that old
// clients cannot notice (a new type, field, optional argument, enum value)
// are not reported.
package schemadiff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// A Change is one breaking difference: where it is (Type.field(arg:)) and
// what changed.
type Change struct {
	Path    string
	Message string
}

func (c Change) String() string { return c.Path + ": " + c.Message }

// Load parses and validates the schema in src, named name in errors.
func Load(name, src string) (*ast.Schema, error) {
	s, err := gqlparser.LoadSchema(&ast.Source{Name: name, Input: src})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Breaking lists the changes from old to new that can break a client of
// old, sorted by path.
func Breaking(old, new *ast.Schema) []Change {
	var out []Change
	add := func(path, format string, args ...any) {
		out = append(out, Change{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	for name, o := range old.Types {
		if !o.BuiltIn {
			compareType(name, o, new.Types[name], add)
		}
	}
	for name, o := range old.Directives {
		if o.Position == nil || o.Position.Src == nil || !o.Position.Src.BuiltIn {
			compareDirective(name, o, new.Directives[name], add)
		}
	}
	for _, op := range []struct {
		name     string
		old, new *ast.Definition
	}{{"query", old.Query, new.Query}, {"mutation", old.Mutation, new.Mutation}, {"subscription", old.Subscription, new.Subscription}} {
		if op.old != nil && (op.new == nil || op.new.Name != op.old.Name) {
			add("schema", "%s root type changed from %s", op.name, op.old.Name)
		}
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// compareType reports the breaking changes from o to n (nil when it was
// removed), the type called name.
func compareType(name string, o, n *ast.Definition, add func(string, string, ...any)) {
	switch {
	case n == nil:
		add(name, "type removed")
		return
	case n.Kind != o.Kind:
		add(name, "kind changed from %s to %s", o.Kind, n.Kind)
		return
	}
	switch o.Kind {
	case ast.Object, ast.Interface:
		compareOutputFields(name, o, n, add)
	case ast.InputObject:
		compareInputFields(name, o, n, add)
	case ast.Enum:
		for _, v := range o.EnumValues {
			if n.EnumValues.ForName(v.Name) == nil {
				add(name+"."+v.Name, "enum value removed")
			}
		}
	case ast.Union:
		for _, t := range o.Types {
			if !slices.Contains(n.Types, t) {
				add(name, "union member %s removed", t)
			}
		}
	}
}

// compareOutputFields reports the interfaces and fields of an object or
// interface type that were removed, and the fields whose type or
// arguments changed in a way that breaks a client.
func compareOutputFields(name string, o, n *ast.Definition, add func(string, string, ...any)) {
	for _, i := range o.Interfaces {
		if !slices.Contains(n.Interfaces, i) {
			add(name, "no longer implements %s", i)
		}
	}
	for _, of := range o.Fields {
		if strings.HasPrefix(of.Name, "__") {
			continue
		}
		path := name + "." + of.Name
		nf := n.Fields.ForName(of.Name)
		if nf == nil {
			add(path, "field removed")
			continue
		}
		if !outputFits(of.Type, nf.Type) {
			add(path, "type changed from %s to %s", of.Type, nf.Type)
		}
		compareArgs(path, of.Arguments, nf.Arguments, add)
	}
}

// compareInputFields reports the fields of an input type that were
// removed, changed so that old values no longer fit, or added as
// required.
func compareInputFields(name string, o, n *ast.Definition, add func(string, string, ...any)) {
	for _, of := range o.Fields {
		path := name + "." + of.Name
		nf := n.Fields.ForName(of.Name)
		if nf == nil {
			add(path, "input field removed")
		} else if !inputFits(of.Type, nf.Type) {
			add(path, "type changed from %s to %s", of.Type, nf.Type)
		}
	}
	for _, nf := range n.Fields {
		if o.Fields.ForName(nf.Name) == nil && required(nf.Type, nf.DefaultValue) {
			add(name+"."+nf.Name, "new required input field")
		}
	}
}

// compareDirective reports the breaking changes from o to n (nil when it
// was removed), the directive called name.
func compareDirective(name string, o, n *ast.DirectiveDefinition, add func(string, string, ...any)) {
	if n == nil {
		add("@"+name, "directive removed")
		return
	}
	for _, l := range o.Locations {
		if !slices.Contains(n.Locations, l) {
			add("@"+name, "location %s removed", l)
		}
	}
	compareArgs("@"+name, o.Arguments, n.Arguments, add)
}

// compareArgs reports the arguments of a field or directive at path that
// were removed, changed so that old values no longer fit, or added as
// required.
func compareArgs(path string, old, new ast.ArgumentDefinitionList, add func(string, string, ...any)) {
	for _, oa := range old {
		p := path + "(" + oa.Name + ":)"
		na := new.ForName(oa.Name)
		if na == nil {
			add(p, "argument removed")
		} else if !inputFits(oa.Type, na.Type) {
			add(p, "type changed from %s to %s", oa.Type, na.Type)
		}
	}
	for _, na := range new {
		if old.ForName(na.Name) == nil && required(na.Type, na.DefaultValue) {
			add(path+"("+na.Name+":)", "new required argument")
		}
	}
}

// required reports whether a client must give an argument or input field
// of type t with default def.
func required(t *ast.Type, def *ast.Value) bool { return t.NonNull && def == nil }

// outputFits reports whether every value of type new is a value of type
// old, so that a client reading old still understands the answer: the
// same type, or non-null where old was nullable, at every list level.
func outputFits(old, new *ast.Type) bool {
	if new.NonNull && !old.NonNull {
		return outputFits(old, nullable(new))
	}
	if old.NonNull != new.NonNull {
		return false
	}
	return sameShape(old, new, outputFits)
}

// inputFits reports whether every value a client could send for type old
// is still accepted by type new: the same type, or nullable where old was
// non-null, at every list level.
func inputFits(old, new *ast.Type) bool {
	if old.NonNull && !new.NonNull {
		return inputFits(nullable(old), new)
	}
	if old.NonNull != new.NonNull {
		return false
	}
	return sameShape(old, new, inputFits)
}

// sameShape compares two types of the same nullability: the same named
// type, or lists whose elements fit by elem.
func sameShape(old, new *ast.Type, elem func(old, new *ast.Type) bool) bool {
	if (old.Elem == nil) != (new.Elem == nil) {
		return false
	}
	if old.Elem != nil {
		return elem(old.Elem, new.Elem)
	}
	return old.NamedType == new.NamedType
}

// nullable is t without its outer non-null.
func nullable(t *ast.Type) *ast.Type {
	c := *t
	c.NonNull = false
	return &c
}
