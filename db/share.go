package db

import (
	"context"

	"github.com/uptrace/bun"
)

// A share bounds how many statements the contexts derived from one (the
// statements of one request) run at once, so that a request with hundreds
// of root fields cannot hold every connection of the pool while other
// requests wait.
type share chan struct{}

type (
	shareKey struct{}
	heldKey  struct{}
)

// WithShare returns a context whose statements, and those of every context
// derived from it, run at most n at a time on a database that Open or
// OpenReader made. The others wait for a place as long as their context
// lasts, then fail with its error.
func WithShare(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, shareKey{}, make(share, max(n, 1)))
}

// shareHook is the bun.QueryHook that enforces WithShare: BeforeQuery
// takes a place before the statement takes a connection, AfterQuery gives
// it back. bun calls AfterQuery on every path, error or not, once Scan,
// Exec and Count have read the rows, but Rows, QueryContext and
// QueryRowContext return before they are read: their place is given back
// while the connection is still held, so serving code reads through Scan.
type shareHook struct{}

func (shareHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	s, ok := ctx.Value(shareKey{}).(share)
	if !ok {
		return ctx
	}
	select {
	case s <- struct{}{}:
		return context.WithValue(ctx, heldKey{}, s)
	case <-ctx.Done():
		// The statement fails at once with ctx's error. The nil hides a
		// place an earlier statement (a transaction's BEGIN) held in ctx.
		return context.WithValue(ctx, heldKey{}, share(nil))
	}
}

func (shareHook) AfterQuery(ctx context.Context, _ *bun.QueryEvent) {
	if s, _ := ctx.Value(heldKey{}).(share); s != nil {
		<-s
	}
}
