package resolvers

import "github.com/uptrace/bun"

// Resolver holds what the resolvers share across requests. Everything per
// request (the loaders) travels in the context.
type Resolver struct {
	db bun.IDB
	// writer is the database mutations write, nil when the server only
	// reads (see NewWritableSchema).
	writer bun.IDB
}
