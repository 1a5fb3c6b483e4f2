package server

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// codeIntrospectionDisabled marks an operation refused because it asks for
// the schema while introspection is off.
const codeIntrospectionDisabled = "INTROSPECTION_DISABLED"

func init() { errcode.RegisterErrorType(codeIntrospectionDisabled, errcode.KindProtocol) }

// noIntrospection refuses, before execution, operations that select
// __schema or __type. Without it gqlgen would run them and fail each
// introspection field on its own, with no code. __typename stays allowed:
// clients add it to every selection.
type noIntrospection struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = noIntrospection{}

func (noIntrospection) ExtensionName() string                   { return "NoIntrospection" }
func (noIntrospection) Validate(graphql.ExecutableSchema) error { return nil }

func (noIntrospection) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if selectsSchema(opCtx.Doc.Fragments, opCtx.Operation.SelectionSet, map[string]bool{}) {
		err := gqlerror.Errorf("introspection is disabled on this server")
		errcode.Set(err, codeIntrospectionDisabled)
		return err
	}
	return nil
}

// selectsSchema reports whether a root selection set, through its
// fragments, selects __schema or __type (fields of the query root only).
func selectsSchema(fragments ast.FragmentDefinitionList, set ast.SelectionSet, seen map[string]bool) bool {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if sel.Name == "__schema" || sel.Name == "__type" {
				return true
			}
		case *ast.InlineFragment:
			if selectsSchema(fragments, sel.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if def := fragments.ForName(sel.Name); def != nil && !seen[sel.Name] {
				seen[sel.Name] = true
				if selectsSchema(fragments, def.SelectionSet, seen) {
					return true
				}
			}
		}
	}
	return false
}
