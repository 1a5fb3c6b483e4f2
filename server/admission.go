package server

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/ratelimit"
)

// Bounds on the work of documents before they run.
const (
	// checkShareOf is the share of the server's check slots one client
	// may hold, all its requests together: a client's flood leaves the
	// rest to the others.
	checkShareOf = 2
	// checkWait is how long a new document waits for its client's turn
	// and the server's before it is refused.
	checkWait = 2 * time.Second
	// failurePoints is what a request costs that fails before it is
	// priced: a document that does not parse, is refused for its shape,
	// or does not validate.
	failurePoints = 1
	// failuresKept is how many failing documents the server remembers,
	// to answer them again without parsing or validating them.
	failuresKept = 1000
	// answerWait bounds how long an operation waits for answer memory.
	answerWait = time.Second
)

// guards are the server-wide bounds of the work that requests do, which
// the /graphql handler and the WebSocket's share.
type guards struct {
	// checks bounds the documents parsed and validated at once, per
	// client and over the server.
	checks *checkSlots
	// failures are the errors of documents that failed before they ran,
	// by document hash and operation name.
	failures *lru.LRU[gqlerror.List]
	// memory bounds the answer bytes in flight.
	memory *answerMemory
}

func newGuards(cfg Config) *guards {
	return &guards{
		checks:   newCheckSlots(checkSlotsFor(runtime.GOMAXPROCS(0))),
		failures: lru.New[gqlerror.List](failuresKept),
		memory:   newAnswerMemory(cfg.MaxAnswerMemory, answerWait),
	}
}

// checkSlotsFor returns the check slots of a server of procs cores: one
// a core but one over the server (at least one), since parsing and
// validating is work for a core and never waits, so that a flood of new
// documents, from however many addresses, leaves a core to the answers
// of documents known already; and a client may hold at most a
// checkShareOf share of them (at least one), so that its flood leaves
// slots to the others. Where a client's share is the whole server, its
// next document waits at its own slots, behind the other clients' that
// wait at the server's: clients' checks take turns.
func checkSlotsFor(procs int) (per, server int64) {
	server = int64(max(procs-1, 1))
	return max(server/checkShareOf, 1), server
}

// checkSlots bounds the documents being parsed and validated at once: per
// client, so that one client's flood waits on itself, and over the server,
// so that many clients' cannot take every core.
type checkSlots struct {
	per    int64
	server chan struct{}

	mu      sync.Mutex
	clients map[string]*clientSlots
}

type clientSlots struct {
	slots chan struct{}
	users int
}

func newCheckSlots(per, server int64) *checkSlots {
	return &checkSlots{per: per, server: make(chan struct{}, server), clients: map[string]*clientSlots{}}
}

// acquire takes a slot of client's and one of the server's, waiting up to
// wait; it returns the function that gives them back, or false when the
// wait ended first.
func (s *checkSlots) acquire(ctx context.Context, client string, wait time.Duration) (func(), bool) {
	s.mu.Lock()
	c := s.clients[client]
	if c == nil {
		c = &clientSlots{slots: make(chan struct{}, s.per)}
		s.clients[client] = c
	}
	c.users++
	s.mu.Unlock()
	leave := func() {
		s.mu.Lock()
		if c.users--; c.users == 0 {
			delete(s.clients, client)
		}
		s.mu.Unlock()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case c.slots <- struct{}{}:
	case <-timer.C:
		leave()
		return nil, false
	case <-ctx.Done():
		leave()
		return nil, false
	}
	select {
	case s.server <- struct{}{}:
	case <-timer.C:
		<-c.slots
		leave()
		return nil, false
	case <-ctx.Done():
		<-c.slots
		leave()
		return nil, false
	}
	return sync.OnceFunc(func() {
		<-s.server
		<-c.slots
		leave()
	}), true
}

// operation is what the cost extension learns about one request as it goes
// through gqlgen, from its parameters to its response.
type operation struct {
	mu sync.Mutex
	// done gives back the request's check slots, once.
	done func()
	// failureKey names the document among the failures; cached are its
	// errors when it failed before.
	failureKey string
	cached     gqlerror.List
	// priced says the operation was priced (and its budget read or
	// spent); admitted that it runs, with spent points of the budget
	// reserved and memory drawn.
	priced, admitted bool
	spent            int
	memory           *memoryDraw
	// response is a large answer's response, whose data the response
	// writer writes in place of the transport's encoding of it.
	response *graphql.Response
	// charged is the budget after a request that failed before it was
	// priced paid failurePoints, nil until then; limited says it could
	// not pay.
	charged *ratelimit.Result
	limited bool
	settled bool
}

type operationKey struct{}

// withOperation gives an HTTP request its operation, which outlives the
// GraphQL handler's work: its answer memory is given back once the
// response is written.
func withOperation(ctx context.Context) (context.Context, *operation) {
	op := &operation{}
	return context.WithValue(ctx, operationKey{}, op), op
}

// operationExtension names the operation among the stats of requests that
// have none in their context (those of the WebSocket).
const operationExtension = "papergraph.operation"

// operationFrom returns the request's operation, from its context or its
// operation context, making one there when neither holds one.
func operationFrom(ctx context.Context) *operation {
	if op, ok := ctx.Value(operationKey{}).(*operation); ok {
		return op
	}
	if !graphql.HasOperationContext(ctx) {
		return &operation{}
	}
	stats := &graphql.GetOperationContext(ctx).Stats
	if op, ok := stats.GetExtension(operationExtension).(*operation); ok {
		return op
	}
	op := &operation{}
	stats.SetExtension(operationExtension, op)
	return op
}

// release gives back what the operation holds: its check slots and its
// answer memory.
func (op *operation) release() {
	op.checked()
	op.mu.Lock()
	m := op.memory
	op.memory = nil
	op.response = nil
	op.mu.Unlock()
	m.release()
}

// checked gives back the check slots, once the document is validated.
func (op *operation) checked() {
	op.mu.Lock()
	done := op.done
	op.done = nil
	op.mu.Unlock()
	if done != nil {
		done()
	}
}

// settleUnpriced charges a request that failed before it was priced
// failurePoints, once, before its answer's headers are written.
func (op *operation) settleUnpriced(ctx context.Context) {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.priced || op.settled {
		return
	}
	op.settled = true
	res, err := spendPoints(ctx, failurePoints)
	op.charged = res
	op.limited = err != nil
}
