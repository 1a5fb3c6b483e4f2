// Package reqid carries a request's id in its context. The HTTP server puts
// the id there; anything that logs on the request's behalf (the resolvers'
// error presenter, for one) reads it back, so a client quoting the
// X-Request-Id of a failed request leads straight to the matching log lines.
package reqid

import "context"

type key struct{}

// With returns a copy of ctx that carries id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// From returns the id carried by ctx, or "" when there is none.
func From(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}
