package resolvers_test

import (
	"cmp"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/resolvers"
)

// batchedParents are the root fields that list the parents of each type
// a @batched field can be declared on, in one statement, for $n parents
// (or $ids).
var batchedParents = map[string]rootList{
	"Paper": {query: `query($ids: [String!]!) { papers(ids: $ids) { FIELD } }`,
		vars: func(t *testing.T, bdb bun.IDB) []client.Option {
			return []client.Option{client.Var("ids", column(t, bdb, "SELECT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id"))}
		}},
	"Researcher":  {query: `query($n: Int) { searchResearchers(query: "a", first: $n) { nodes { FIELD } } }`},
	"Institution": {query: `query($n: Int) { searchInstitutions(query: "university", first: $n) { nodes { FIELD } } }`, small: 1},
}

// TestBatchedFieldsDepthNotWidth runs every field schema.graphqls declares
// @batched below a page of its parents, small and large, on both
// databases: the parents cost one statement and the field one more,
// however many parents there are. A new @batched field is covered here
// without an edit.
func TestBatchedFieldsDepthNotWidth(t *testing.T) {
	var cases []rootList
	schema := resolvers.NewSchema(nil).Schema()
	for _, def := range schema.Types {
		for _, f := range def.Fields {
			if f.Directives.ForName("batched") == nil {
				continue
			}
			parent, ok := batchedParents[def.Name]
			if !ok {
				t.Errorf("%s.%s: @batched on a type this test has no parents for", def.Name, f.Name)
				continue
			}
			sel := f.Name
			if k := schema.Types[f.Type.Name()].Kind; k == ast.Object || k == ast.Interface {
				sel += " { __typename }"
			}
			parent.name = def.Name + "." + f.Name
			parent.query = strings.Replace(parent.query, "FIELD", sel, 1)
			parent.item, parent.want = f.Name, 2
			cases = append(cases, parent)
		}
	}
	if len(cases) == 0 {
		t.Fatal("the schema declares no @batched field")
	}
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		log := &dbtest.Log{}
		bdb.AddQueryHook(log)
		c := newClient(bdb)
		for _, tt := range cases {
			counts := map[int]int{}
			small := cmp.Or(tt.small, 4)
			for _, n := range []int{small, 20} {
				opts := []client.Option{client.Var("n", n)}
				if tt.vars != nil {
					ids := listVar(tt.vars(t, bdb), "ids")
					opts = []client.Option{client.Var("ids", ids[:min(n, len(ids))])}
				}
				log.Take()
				data, errs := rawPost(t, c, tt.query, opts...)
				sqls := log.Take()
				if len(errs) != 0 {
					t.Fatalf("%s, n=%d: %+v", tt.name, n, errs)
				}
				counts[n] = strings.Count(data, `"`+tt.item+`":`)
				if len(sqls) != tt.want {
					t.Errorf("%s, n=%d: %d statements, want %d:\n%s", tt.name, n, len(sqls), tt.want, strings.Join(sqls, "\n"))
				}
			}
			if counts[20] <= counts[small] {
				t.Errorf("%s: %d parents for n=20, %d for n=%d: the case does not test width", tt.name, counts[20], counts[small], small)
			}
		}
	})
}
