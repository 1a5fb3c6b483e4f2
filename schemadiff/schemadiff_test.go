package schemadiff_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/schemadiff"
)

func TestBreaking(t *testing.T) {
	const base = `
		interface Node { id: ID! }
		type Query {
			node(id: ID!): Node
			list(first: Int, ids: [ID!]!): [Item!]!
			item(id: String): Item
			kind: Kind
		}
		type Item implements Node { id: ID! name: String tags: [String] }
		type Other { id: ID! }
		enum Kind { A B }
		union Any = Item | Other
		input Filter { has: Boolean tags: [String!]! }
		directive @tag(name: String!) on FIELD_DEFINITION
	`
	tests := []struct {
		name, new string
		want      []string
	}{
		{"unchanged", base, nil},
		{"additions pass", base + `
			type New { x: Int }
			extend type Query { extra(x: Int, y: Int! = 1): New }
			extend type Item { more: String }
			extend enum Kind { C }
			extend union Any = New
			extend input Filter { maybe: Int, withDefault: Int! = 2 }`, nil},
		{"type removed", `
			interface Node { id: ID! }
			type Query { node(id: ID!): Node list(first: Int, ids: [ID!]!): [Item!]! item(id: String): Item kind: Kind }
			type Item implements Node { id: ID! name: String tags: [String] }
			enum Kind { A B }
			union Any = Item
			input Filter { has: Boolean tags: [String!]! }
			directive @tag(name: String!) on FIELD_DEFINITION`,
			[]string{"Any: union member Other removed", "Other: type removed"}},
		{"field removed", replace(base, "name: String tags", "tags"), []string{"Item.name: field removed"}},
		{"output made nullable", replace(base, "list(first: Int, ids: [ID!]!): [Item!]!", "list(first: Int, ids: [ID!]!): [Item]!"),
			[]string{"Query.list: type changed from [Item!]! to [Item]!"}},
		{"output made non-null", replace(base, "name: String tags: [String]", "name: String! tags: [String!]!"), nil},
		{"output type changed", replace(base, "name: String tags", "name: Int tags"), []string{"Item.name: type changed from String to Int"}},
		{"output list to scalar", replace(base, "tags: [String]", "tags: String"), []string{"Item.tags: type changed from [String] to String"}},
		{"argument removed", replace(base, "list(first: Int, ids", "list(ids"), []string{"Query.list(first:): argument removed"}},
		{"argument type changed", replace(base, "node(id: ID!)", "node(id: String!)"), []string{"Query.node(id:): type changed from ID! to String!"}},
		{"argument made nullable", replace(base, "node(id: ID!)", "node(id: ID)"), nil},
		{"argument made non-null", replace(base, "item(id: String)", "item(id: String!)"), []string{"Query.item(id:): type changed from String to String!"}},
		{"list argument element made non-null", replace(base, "list(first: Int, ids: [ID!]!)", "list(first: Int, ids: [ID]!)"), nil},
		{"new required argument", replace(base, "item(id: String)", "item(id: String, at: Int!)"), []string{"Query.item(at:): new required argument"}},
		{"new argument with default", replace(base, "item(id: String)", "item(id: String, at: Int! = 3)"), nil},
		{"enum value removed", replace(base, "enum Kind { A B }", "enum Kind { A }"), []string{"Kind.B: enum value removed"}},
		{"interface removed", replace(base, "type Item implements Node", "type Item"), []string{"Item: no longer implements Node"}},
		{"kind changed", replace(base, "enum Kind { A B }", "scalar Kind"), []string{"Kind: kind changed from ENUM to SCALAR"}},
		{"input field removed", replace(base, "input Filter { has: Boolean tags", "input Filter { tags"), []string{"Filter.has: input field removed"}},
		{"input field made non-null", replace(base, "has: Boolean", "has: Boolean!"), []string{"Filter.has: type changed from Boolean to Boolean!"}},
		{"input field made nullable", replace(base, "tags: [String!]!", "tags: [String]"), nil},
		{"new required input field", replace(base, "has: Boolean", "has: Boolean must: Int!"), []string{"Filter.must: new required input field"}},
		{"directive removed", replace(base, "directive @tag(name: String!) on FIELD_DEFINITION", ""), []string{"@tag: directive removed"}},
	}
	old := load(t, base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range schemadiff.Breaking(old, load(t, tt.new)) {
				got = append(got, c.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Breaking() = %q, want %q", got, tt.want)
			}
		})
	}
}

func load(t *testing.T, src string) *ast.Schema {
	t.Helper()
	s, err := schemadiff.Load("test.graphqls", src)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

// replace is s with its one occurrence of old replaced by new, so that a
// table entry whose edit matches nothing fails instead of testing nothing.
func replace(s, old, new string) string {
	if n := strings.Count(s, old); n != 1 {
		panic(fmt.Sprintf("replace: %q occurs %d times", old, n))
	}
	return strings.Replace(s, old, new, 1)
}
