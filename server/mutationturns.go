package server

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// mutationTurns runs one client's mutation operations one at a time. The
// writer has few connections (one on SQLite) and hands a freed one to
// any of the statements waiting for it: a client that sends many
// mutation requests at once would otherwise fill the queue, and another
// client's single write would wait behind most of them. Taking turns,
// a client has at most one operation waiting for the writer, and its
// flood waits on itself, each request within its own deadline.
type mutationTurns struct {
	mu      sync.Mutex
	clients map[string]*clientTurn
}

type clientTurn struct {
	turn  chan struct{}
	users int
}

func newMutationTurns() *mutationTurns { return &mutationTurns{clients: map[string]*clientTurn{}} }

func (*mutationTurns) ExtensionName() string                   { return "MutationTurns" }
func (*mutationTurns) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation waits for the client's turn before a mutation runs
// and gives it back once its response is written; it runs after the
// operation was priced, so that a refused one waits for nothing.
func (m *mutationTurns) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Mutation {
		return next(ctx)
	}
	done, err := m.take(ctx, exchangeFrom(ctx).client)
	if err != nil {
		return graphql.OneShot(graphql.ErrorResponse(ctx, "the request ended while it waited for the client's other mutations: %v", err))
	}
	respond := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		defer done()
		return respond(ctx)
	}
}

// take waits for client's turn as long as ctx lasts; it returns the
// function that gives the turn back.
func (m *mutationTurns) take(ctx context.Context, client string) (func(), error) {
	m.mu.Lock()
	c := m.clients[client]
	if c == nil {
		c = &clientTurn{turn: make(chan struct{}, 1)}
		m.clients[client] = c
	}
	c.users++
	m.mu.Unlock()
	leave := func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if c.users--; c.users == 0 {
			delete(m.clients, client)
		}
	}
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
	return sync.OnceFunc(func() {
		<-c.turn
		leave()
	}), nil
}
