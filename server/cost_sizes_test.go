package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/resolvers"
)

// withSchema is an executable schema that reports another schema.
type withSchema struct {
	graphql.ExecutableSchema
	schema *ast.Schema
}

func (w withSchema) Schema() *ast.Schema { return w.schema }

// TestStartRefusesAnUnsizedList: the cost extension refuses, at start, a
// schema with a list field its directives do not size, naming it, and
// takes the server's own schema.
func TestStartRefusesAnUnsizedList(t *testing.T) {
	es := resolvers.NewSchema(nil)
	if err := newCostLimit(Config{}, nil).Validate(es); err != nil {
		t.Fatalf("Validate(the server's schema) = %v", err)
	}
	sdl, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	sized := `[ResearcherField!]! @listSize(assumedSize: 50, slicingArguments: ["first"], requireOneSlicingArgument: false)`
	if !strings.Contains(string(sdl), sized) {
		t.Fatalf("schema.graphqls lacks %s", sized)
	}
	cut := gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphqls", Input: strings.Replace(string(sdl), sized, "[ResearcherField!]!", 1)})
	err = newCostLimit(Config{}, nil).Validate(withSchema{es, cut})
	if err == nil || !strings.Contains(err.Error(), "Researcher.fields: a list without @listSize") {
		t.Errorf("Validate(a schema without Researcher.fields' size) = %v, want it named", err)
	}
}

// TestSchemaShowsSizes: /schema.graphql shows clients the cost directives
// and the sizes of the lists.
func TestSchemaShowsSizes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		h := newTestServer(t, bdb, Config{}).Handler()
		body := serve(h, httptest.NewRequest(http.MethodGet, "/schema.graphql", nil)).Body.String()
		for _, want := range []string{
			"directive @cost(weight: String!)",
			"directive @listSize(",
			"directive @listBound(",
			`): [Authorship!]! @listSize(assumedSize: 100, slicingArguments: ["first"], requireOneSlicingArgument: false) @listBound(max: 100, typical: "authorsPerPaper")`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("/schema.graphql lacks %s", want)
			}
		}
	})
}
