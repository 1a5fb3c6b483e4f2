package cost

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"
)

// The directives a schema states its sizes with: @cost and @listSize from
// the GraphQL cost directive specification, and @listBound for what the
// specification cannot say (see its description in schema.graphqls).
const (
	costDirective     = "cost"
	listSizeDirective = "listSize"
	boundDirective    = "listBound"
)

// bound says how many items a list field returns at most, or, for a field
// that returns a page object (a connection, a network), how many items the
// lists inside that object hold.
type bound struct {
	// args are the arguments that set the count; the first one given (and
	// not null) wins. With length, the count is the length of args[0].
	args   []string
	length bool
	// assumed is the count when none of args is given or all are null.
	assumed int64
	// max is the most the field's resolver ever returns, whatever its
	// arguments; an argument above it is clamped here.
	max int64
	// plus is added to a count set by an argument.
	plus int64
	// page marks a field whose object holds lists of count items: the
	// field itself is one object, and its lists marked inherit take the
	// count.
	page bool
	// inherit marks a list whose count is the page count of the field
	// above it, times factor when factor is set.
	inherit bool
	factor  int64
	// weight is how many requests one resolution of the field costs.
	weight int64
	// typical names the archive statistic that caps the count's estimate.
	typical string
	// sized is true when the field's own @listSize gives it a size.
	sized bool
}

// table maps "Type.field" to the field's bound.
type table map[string]bound

// Check returns what is wrong with schema's sizes, sorted: the list fields
// that no @listSize sizes (neither their own nor, through sizedFields, the
// field above's), and the directives it cannot read. A server refuses to
// start while it is not empty: an unsized list could make an answer larger
// than any limit assumes.
func Check(schema *ast.Schema) []string {
	_, problems := tableOf(schema)
	return problems
}

// tableOf reads the bounds of schema's fields from their directives.
func tableOf(schema *ast.Schema) (table, []string) {
	t := table{}
	var problems []string
	report := func(key, format string, args ...any) {
		problems = append(problems, key+": "+fmt.Sprintf(format, args...))
	}
	inherited, broken := map[string]bool{}, map[string]bool{}
	eachField(schema, func(key string, f *ast.FieldDefinition) {
		b, ok, err := boundOf(f)
		if err != nil {
			report(key, "%v", err)
			broken[key] = true
			return
		}
		if ok {
			t[key] = b
		}
		for _, sized := range sizedFields(f) {
			child := fieldOf(schema, f.Type.Name()+"."+sized)
			if child == nil || child.Type.Elem == nil {
				report(key, "sizedFields names %q, not a list field of %s", sized, f.Type.Name())
				continue
			}
			inherited[f.Type.Name()+"."+sized] = true
		}
	})
	for key, b := range t {
		switch {
		case inherited[key]:
			b.inherit, b.page, b.args, b.weight = true, false, nil, 0
			t[key] = b
		case b.factor > 0:
			report(key, "@%s(perItem:) on a list that no sizedFields names", boundDirective)
		}
	}
	for key := range inherited {
		if _, ok := t[key]; !ok {
			t[key] = bound{inherit: true}
		}
	}
	eachField(schema, func(key string, f *ast.FieldDefinition) {
		if b := t[key]; f.Type.Elem != nil && !broken[key] && !b.sized && !b.inherit && !b.length {
			report(key, "a list without @%s", listSizeDirective)
		}
	})
	sort.Strings(problems)
	return t, problems
}

// eachField calls fn with every field of schema's own object and
// interface types, keyed "Type.field".
func eachField(schema *ast.Schema, fn func(key string, f *ast.FieldDefinition)) {
	for name, def := range schema.Types {
		if def.BuiltIn || (def.Kind != ast.Object && def.Kind != ast.Interface) {
			continue
		}
		for _, f := range def.Fields {
			fn(name+"."+f.Name, f)
		}
	}
}

// boundOf reads f's directives; ok is false when it has none.
func boundOf(f *ast.FieldDefinition) (b bound, ok bool, err error) {
	list := f.Type.Elem != nil
	if d := f.Directives.ForName(listSizeDirective); d != nil {
		ok, b.sized = true, true
		b.assumed, err = intArg(d, "assumedSize")
		if err != nil {
			return b, ok, err
		}
		b.args = stringsArg(d, "slicingArguments")
		b.page = len(sizedFields(f)) > 0
		for _, a := range b.args {
			if f.Arguments.ForName(a) == nil {
				return b, ok, fmt.Errorf("slicingArguments names %q, not an argument", a)
			}
		}
		if list || b.page {
			b.weight = 1
		}
	}
	if d := f.Directives.ForName(boundDirective); d != nil {
		ok = true
		for _, a := range []struct {
			name string
			to   *int64
		}{{"max", &b.max}, {"plus", &b.plus}, {"perItem", &b.factor}} {
			if *a.to, err = intArg(d, a.name); err != nil {
				return b, ok, err
			}
		}
		if arg, given := stringArg(d, "lengthOf"); given {
			if f.Arguments.ForName(arg) == nil {
				return b, ok, fmt.Errorf("lengthOf names %q, not an argument", arg)
			}
			b.args, b.length = []string{arg}, true
		}
		b.typical, _ = stringArg(d, "typical")
	}
	if b.max == 0 {
		b.max = b.assumed
	}
	if d := f.Directives.ForName(costDirective); d != nil {
		ok = true
		s, _ := stringArg(d, "weight")
		w, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil || w < 0 {
			return b, ok, fmt.Errorf("@%s(weight: %q) is not a whole number of reads", costDirective, s)
		}
		b.weight = w
	}
	return b, ok, nil
}

func sizedFields(f *ast.FieldDefinition) []string {
	if d := f.Directives.ForName(listSizeDirective); d != nil {
		return stringsArg(d, "sizedFields")
	}
	return nil
}

// intArg is d's Int argument name, 0 when d does not give it.
func intArg(d *ast.Directive, name string) (int64, error) {
	a := d.Arguments.ForName(name)
	if a == nil {
		return 0, nil
	}
	v, err := a.Value.Value(nil)
	if i, ok := v.(int64); err == nil && ok && i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("@%s(%s: %s) is not a whole number", d.Name, name, a.Value.String())
}

func stringArg(d *ast.Directive, name string) (string, bool) {
	if a := d.Arguments.ForName(name); a != nil {
		if v, err := a.Value.Value(nil); err == nil {
			s, ok := v.(string)
			return s, ok
		}
	}
	return "", false
}

func stringsArg(d *ast.Directive, name string) []string {
	a := d.Arguments.ForName(name)
	if a == nil {
		return nil
	}
	v, _ := a.Value.Value(nil)
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
