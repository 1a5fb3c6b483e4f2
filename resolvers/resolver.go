package resolvers

import (
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/notify"
)

// Resolver holds what the resolvers share across requests. Everything per
// request (the loaders) travels in the context.
type Resolver struct {
	db bun.IDB
	// writer is the database mutations write, nil when the server only
	// reads (see NewWritableSchema).
	writer bun.IDB
	// bus tells subscriptions what writers commit, nil when the server
	// has no live updates.
	bus *notify.Bus
}
