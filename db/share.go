package db

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"sync"

	"github.com/uptrace/bun"
)

// DefaultClientWeight is the weight of a client that has none of its own:
// an address, or an API key created without one.
const DefaultClientWeight = 1

// A Scheduler hands out the statement slots of one connection pool, as
// many as the pool has connections, to the clients whose requests run
// statements on it. It conserves work: a client alone may fill every
// slot, and no slot stays free while a statement waits. Fairness bites
// only when statements wait: the next free slot goes to the waiting
// client that has had the least weighted use.
//
// Use is kept by start-time fair queuing over clients. Each client has a
// tag, its use: a slot granted to it starts at the later of its tag and
// the scheduler's virtual time, and moves its tag on by 1/weight; the
// virtual time is the start of the latest grant. Among the waiting
// clients the lowest tag goes first, so clients that wait side by side
// are served in proportion to their weights, and a client that arrives
// starts level with the virtual time: it gains no credit for having been
// away, and a client that was alone is not punished for the slots it used
// while no one else wanted them. A slot counts as one unit whatever the
// statement does, since a statement's cost is not known when it starts.
//
// Within one client the newest waiter goes first. It is most often the
// next statement of a field already under way, so a request with more
// work than its deadline allows ends with some fields answered; first
// come, first served would start every field and finish none.
type Scheduler struct {
	pool *sql.DB

	mu       sync.Mutex
	free     int
	vtime    float64
	backlog  []*flow // the clients with waiters, in the order they began to wait
	waiting  int     // statements in the flows of backlog
	byClient map[string]*flow
}

// A flow is one client's part in a Scheduler: it lives while the client
// has requests under way.
type flow struct {
	weight   int
	requests int
	tag      float64         // the end of its latest grant: its weighted use
	waiting  []chan struct{} // oldest first
}

// NewScheduler returns a scheduler of pool's statement slots: n when n >
// 0, else as many as its maximum of open connections. A pool with no such
// maximum has no slots to share: its statements never wait.
func NewScheduler(pool *bun.DB, n int) *Scheduler {
	if n <= 0 {
		n = pool.DB.Stats().MaxOpenConnections
	}
	if n <= 0 {
		n = math.MaxInt
	}
	return &Scheduler{pool: pool.DB, free: n, byClient: map[string]*flow{}}
}

// Join returns a context whose statements on the scheduler's pool, and
// those of every context derived from it, take one of its slots each,
// spending client's use at the given weight (at least 1: a client of
// weight 2 gets twice the slots of one of weight 1 while both wait), and
// the function that ends the request's part in it.
func (s *Scheduler) Join(ctx context.Context, client string, weight int) (context.Context, func()) {
	s.mu.Lock()
	f := s.byClient[client]
	if f == nil {
		f = &flow{tag: s.vtime}
		s.byClient[client] = f
	}
	f.weight = max(weight, 1)
	f.requests++
	s.mu.Unlock()
	return context.WithValue(ctx, ticketKey{}, ticket{s, f}), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if f.requests--; f.requests == 0 {
			delete(s.byClient, client)
		}
	}
}

// Waiting returns how many statements wait for a slot.
func (s *Scheduler) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting
}

// acquire takes a slot for f, waiting as long as ctx lasts; it reports
// whether it got one.
func (s *Scheduler) acquire(ctx context.Context, f *flow) bool {
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.grantLocked(f)
		s.mu.Unlock()
		return true
	}
	ready := make(chan struct{})
	if len(f.waiting) == 0 {
		s.backlog = append(s.backlog, f)
	}
	f.waiting = append(f.waiting, ready)
	s.waiting++
	s.mu.Unlock()
	select {
	case <-ready:
		return true
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		if i := slices.Index(f.waiting, ready); i >= 0 {
			f.waiting = slices.Delete(f.waiting, i, i+1)
			s.waiting--
			if len(f.waiting) == 0 {
				s.backlog = slices.DeleteFunc(s.backlog, func(b *flow) bool { return b == f })
			}
		} else {
			s.releaseLocked() // handed a slot as ctx ended: pass it on
		}
		return false
	}
}

// grantLocked charges one slot to f.
func (s *Scheduler) grantLocked(f *flow) {
	start := max(f.tag, s.vtime)
	s.vtime = start
	f.tag = start + 1/float64(f.weight)
}

// release gives a slot back: to the newest waiter of the waiting client
// with the least weighted use, if a statement waits.
func (s *Scheduler) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *Scheduler) releaseLocked() {
	if len(s.backlog) == 0 {
		s.free++
		return
	}
	next := 0
	for i, f := range s.backlog {
		if max(f.tag, s.vtime) < max(s.backlog[next].tag, s.vtime) {
			next = i
		}
	}
	f := s.backlog[next]
	n := len(f.waiting)
	ready := f.waiting[n-1]
	f.waiting = f.waiting[:n-1]
	s.waiting--
	if n == 1 {
		s.backlog = slices.Delete(s.backlog, next, next+1)
	}
	s.grantLocked(f)
	close(ready)
}

// A ticket is a request's part in a Scheduler: its client's flow.
type ticket struct {
	s *Scheduler
	f *flow
}

type (
	ticketKey struct{}
	heldKey   struct{}
)

// InTx runs fn in a transaction of idb whose statements take no slot:
// a statement of a transaction that waited for a slot would hold the
// transaction's connection and locks while the slots are held by
// statements waiting for that connection or those locks.
func InTx(ctx context.Context, idb bun.IDB, fn func(ctx context.Context, tx bun.Tx) error) error {
	return idb.RunInTx(context.WithValue(ctx, ticketKey{}, nil), nil, fn)
}

// shareHook is the bun.QueryHook that enforces Scheduler.Join: BeforeQuery
// takes a slot before a statement on the scheduler's pool takes a
// connection, AfterQuery gives it back. bun calls AfterQuery on every
// path, error or not, once Scan, Exec and Count have read the rows, but
// Rows, QueryContext and QueryRowContext return before they are read:
// their slot is given back while the connection is still held, so serving
// code reads through Scan. Statements on other pools (a writer beside the
// reader) take no slot: a slot held while waiting for another pool's
// connection could hold up the transaction that has it.
type shareHook struct{}

func (shareHook) BeforeQuery(ctx context.Context, ev *bun.QueryEvent) context.Context {
	t, ok := ctx.Value(ticketKey{}).(ticket)
	if !ok {
		return ctx
	}
	// The nil hides a slot an earlier statement (a transaction's BEGIN)
	// held in ctx, when this one takes none: it is not on the pool, or it
	// fails at once with ctx's error.
	if ev.DB == nil || ev.DB.DB != t.s.pool || !t.s.acquire(ctx, t.f) {
		return context.WithValue(ctx, heldKey{}, (*Scheduler)(nil))
	}
	return context.WithValue(ctx, heldKey{}, t.s)
}

func (shareHook) AfterQuery(ctx context.Context, _ *bun.QueryEvent) {
	if s, _ := ctx.Value(heldKey{}).(*Scheduler); s != nil {
		s.release()
	}
}
