package server

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// codeDepthLimit is the error code of operations refused for their depth.
const codeDepthLimit = "DEPTH_LIMIT_EXCEEDED"

// The limit rejects a request before it executes, like a validation
// error; registering it as a protocol error makes gqlgen answer
// application/graphql-response+json clients with 400 rather than 200.
func init() {
	errcode.RegisterErrorType(codeDepthLimit, errcode.KindProtocol)
}

// depthLimit refuses operations whose fields nest deeper than max. It runs
// after validation, so fragments are known to exist and to be acyclic.
// Introspection fields are not counted: gqlparser bounds their depth with a
// rule of its own, and GraphiQL's schema query nests deeply.
type depthLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = depthLimit{}

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	m := depthMeter{fragments: opCtx.Doc.Fragments, memo: map[string]int{}}
	if depth := m.depth(opCtx.Operation.SelectionSet); depth > d.max {
		err := gqlerror.Errorf("operation has depth %d, which exceeds the limit of %d", depth, d.max)
		errcode.Set(err, codeDepthLimit)
		return err
	}
	return nil
}

// depthMeter measures selection sets, remembering each named fragment's
// depth so that fragments spread many times are walked once.
type depthMeter struct {
	fragments ast.FragmentDefinitionList
	memo      map[string]int
}

func (m depthMeter) depth(set ast.SelectionSet) int {
	deepest := 0
	for _, sel := range set {
		d := 0
		switch sel := sel.(type) {
		case *ast.Field:
			if !strings.HasPrefix(sel.Name, "__") {
				d = 1 + m.depth(sel.SelectionSet)
			}
		case *ast.InlineFragment:
			d = m.depth(sel.SelectionSet)
		case *ast.FragmentSpread:
			d = m.fragment(sel.Name)
		}
		deepest = max(deepest, d)
	}
	return deepest
}

func (m depthMeter) fragment(name string) int {
	if d, ok := m.memo[name]; ok {
		return d
	}
	def := m.fragments.ForName(name)
	if def == nil {
		return 0
	}
	m.memo[name] = 0 // a cycle, were validation to let one through, ends here
	d := m.depth(def.SelectionSet)
	m.memo[name] = d
	return d
}
