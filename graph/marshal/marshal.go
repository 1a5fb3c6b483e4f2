// Package marshal marshals the elements of the lists that graph's
// generated code returns. gqlgen marshals each element of a list of objects
// in a goroutine of its own (graphql.MarshalSliceConcurrently), so that the
// resolvers below elements that miss a dataloader's cache wait together and
// their keys meet in one batch. When the look-ahead has already read
// everything below a list, nothing there waits, and a goroutine an element
// (with the stack it grows) is most of what marshaling the list costs; go
// generate routes generated.go's calls here (graph/internal/generate), and
// Slice marshals such a list in line.
package marshal

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// Planner tells whether nothing below the list field of fc can wait on a
// dataloader batch, so that its elements may be marshaled one after the
// other. The request's context carries it (WithPlanner).
type Planner interface {
	InLine(fc *graphql.FieldContext) bool
}

type plannerKey struct{}

// WithPlanner returns a context carrying p.
func WithPlanner(ctx context.Context, p Planner) context.Context {
	return context.WithValue(ctx, plannerKey{}, p)
}

// Slice is graphql.MarshalSliceConcurrently, with the same arguments and
// answer, marshaling the elements in line when the context's Planner says
// nothing below them waits; without a Planner, or when it says no, it is
// gqlgen's own.
func Slice(ctx context.Context, length int, workerLimit int64, omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	if length < 2 || !inLine(ctx) {
		return graphql.MarshalSliceConcurrently(ctx, length, workerLimit, omitPanicHandler, marshalElement)
	}
	ret := make(graphql.Array, length)
	// One allocation for all the elements' field contexts and indexes,
	// where gqlgen allocates both for each element.
	fcs := make([]graphql.FieldContext, length)
	idx := make([]int, length)
	for i := range length {
		idx[i] = i
		fcs[i].Index = &idx[i]
		childCtx := graphql.WithFieldContext(ctx, &fcs[i])
		if omitPanicHandler {
			ret[i] = marshalElement(childCtx, i)
			continue
		}
		ret[i] = marshalRecovering(childCtx, i, marshalElement)
	}
	return ret
}

// marshalRecovering marshals element i, turning a panic into the
// element's error and null, as gqlgen's goroutine for it does.
func marshalRecovering(ctx context.Context, i int, marshalElement func(ctx context.Context, i int) graphql.Marshaler) (m graphql.Marshaler) {
	defer func() {
		if r := recover(); r != nil {
			graphql.AddError(ctx, graphql.Recover(ctx, r))
			m = graphql.Null
		}
	}()
	return marshalElement(ctx, i)
}

func inLine(ctx context.Context) bool {
	p, ok := ctx.Value(plannerKey{}).(Planner)
	return ok && p.InLine(graphql.GetFieldContext(ctx))
}
