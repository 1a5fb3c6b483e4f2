package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// marshalSlice marshals the length elements of a list of objects one
// after another, where gqlgen's graphql.MarshalSliceConcurrently starts a
// goroutine for each (graph/internal/generate says why). Its arguments
// are that function's: workerLimit has no use in line, and a panic in an
// element is recovered as there, into an error at the element's path and
// a null, unless omitPanicHandler.
func marshalSlice(ctx context.Context, length int, _ int64, omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	ret := make(graphql.Array, length)
	for i := range length {
		ctx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
		if omitPanicHandler {
			ret[i] = marshalElement(ctx, i)
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					graphql.AddError(ctx, graphql.Recover(ctx, r))
					ret[i] = graphql.Null
				}
			}()
			ret[i] = marshalElement(ctx, i)
		}()
	}
	return ret
}
