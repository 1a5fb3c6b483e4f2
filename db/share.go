package db

import (
	"context"
	"slices"
	"sync"

	"github.com/uptrace/bun"
)

// A share bounds how many statements the contexts derived from one (the
// statements of one request) run at once, so that a request with hundreds
// of root fields cannot hold every connection of the pool while other
// requests wait.
//
// The newest waiter goes first. It is most often the next statement of a
// field already under way, so a request with more work than its deadline
// allows ends with some fields answered; first come, first served would
// start every field and finish none.
type share struct {
	mu      sync.Mutex
	free    int
	waiting []chan struct{} // oldest first
}

// acquire takes a place, waiting as long as ctx lasts; it reports whether
// it got one.
func (s *share) acquire(ctx context.Context) bool {
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return true
	}
	ready := make(chan struct{})
	s.waiting = append(s.waiting, ready)
	s.mu.Unlock()
	select {
	case <-ready:
		return true
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		if i := slices.Index(s.waiting, ready); i >= 0 {
			s.waiting = slices.Delete(s.waiting, i, i+1)
		} else {
			s.releaseLocked() // handed a place as ctx ended: pass it on
		}
		return false
	}
}

// release gives a place back, to the newest waiter if there is one.
func (s *share) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *share) releaseLocked() {
	if n := len(s.waiting); n > 0 {
		close(s.waiting[n-1])
		s.waiting = s.waiting[:n-1]
		return
	}
	s.free++
}

type (
	shareKey struct{}
	heldKey  struct{}
)

// WithShare returns a context whose statements, and those of every context
// derived from it, run at most n at a time on a database that Open or
// OpenReader made. The others wait for a place as long as their context
// lasts, then fail with its error.
func WithShare(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, shareKey{}, &share{free: max(n, 1)})
}

// InTx runs fn in a transaction of idb whose statements take no place
// in ctx's share: a statement of a transaction that waited for a place
// would hold the transaction's connection and locks while the places are
// held by statements waiting for that connection or those locks.
func InTx(ctx context.Context, idb bun.IDB, fn func(ctx context.Context, tx bun.Tx) error) error {
	return idb.RunInTx(context.WithValue(ctx, shareKey{}, (*share)(nil)), nil, fn)
}

// shareHook is the bun.QueryHook that enforces WithShare: BeforeQuery
// takes a place before the statement takes a connection, AfterQuery gives
// it back. bun calls AfterQuery on every path, error or not, once Scan,
// Exec and Count have read the rows, but Rows, QueryContext and
// QueryRowContext return before they are read: their place is given back
// while the connection is still held, so serving code reads through Scan.
type shareHook struct{}

func (shareHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	s, _ := ctx.Value(shareKey{}).(*share)
	if s == nil {
		return ctx
	}
	if !s.acquire(ctx) {
		// The statement fails at once with ctx's error. The nil hides a
		// place an earlier statement (a transaction's BEGIN) held in ctx.
		return context.WithValue(ctx, heldKey{}, (*share)(nil))
	}
	return context.WithValue(ctx, heldKey{}, s)
}

func (shareHook) AfterQuery(ctx context.Context, _ *bun.QueryEvent) {
	if s, _ := ctx.Value(heldKey{}).(*share); s != nil {
		s.release()
	}
}

// Shares hands out one share per client, so that all the requests of one
// client together run at most n statements at once: a client that sends
// many heavy requests side by side waits on itself, not on everyone.
// A client's share lives while it has requests under way.
type Shares struct {
	n        int
	mu       sync.Mutex
	byClient map[string]*clientShare
}

type clientShare struct {
	share
	requests int
}

// NewShares returns Shares of n statements per client.
func NewShares(n int) *Shares {
	return &Shares{n: max(n, 1), byClient: map[string]*clientShare{}}
}

// Join returns a context whose statements, and those of every context
// derived from it, spend client's share, and the function that ends the
// request's part in it.
func (s *Shares) Join(ctx context.Context, client string) (context.Context, func()) {
	s.mu.Lock()
	cs := s.byClient[client]
	if cs == nil {
		cs = &clientShare{share: share{free: s.n}}
		s.byClient[client] = cs
	}
	cs.requests++
	s.mu.Unlock()
	return context.WithValue(ctx, shareKey{}, &cs.share), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if cs.requests--; cs.requests == 0 {
			delete(s.byClient, client)
		}
	}
}
