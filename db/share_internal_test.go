package db

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// newSlots returns a scheduler of n slots over no pool, for the tests that
// take and give back slots by hand.
func newSlots(n int) *Scheduler {
	return &Scheduler{free: n, byClient: map[string]*flow{}}
}

// flowOf joins a request of client at weight to s and returns its flow.
func flowOf(t *testing.T, s *Scheduler, client string, weight int) *flow {
	t.Helper()
	ctx, done := s.Join(t.Context(), client, weight)
	t.Cleanup(done)
	return ctx.Value(ticketKey{}).(ticket).f
}

// hold takes a free slot of s for f.
func hold(t *testing.T, s *Scheduler, f *flow) {
	t.Helper()
	if !s.acquire(t.Context(), f) {
		t.Fatal("a statement waited for a free slot")
	}
}

// queue starts a statement of f that waits for a slot and, once it has
// one, sends label on got; it returns when the statement waits.
func queue(t *testing.T, s *Scheduler, f *flow, label string, got chan<- string) {
	t.Helper()
	before := s.Waiting()
	go func() {
		if s.acquire(t.Context(), f) {
			got <- label
		}
	}()
	for s.Waiting() == before {
		time.Sleep(time.Millisecond)
	}
}

// grants gives back a slot n times, each taken by a waiting statement,
// and returns their labels in the order they got them.
func grants(s *Scheduler, n int, got <-chan string) []string {
	var order []string
	for range n {
		s.release()
		order = append(order, <-got)
	}
	return order
}

// TestSchedulerAloneTakesEverySlot: a client alone gets every slot at
// once, without waiting, and no more.
func TestSchedulerAloneTakesEverySlot(t *testing.T) {
	const n = 4
	s := newSlots(n)
	f := flowOf(t, s, "notebook", 1)
	// A context that has ended gets a slot only when one is free.
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	for i := range n {
		if !s.acquire(ended, f) {
			t.Fatalf("statement %d of a client alone waited, want all %d slots at once", i+1, n)
		}
	}
	if s.acquire(ended, f) {
		t.Errorf("statement %d got a slot of %d", n+1, n)
	}
	if s.Waiting() != 0 || len(s.backlog) != 0 {
		t.Errorf("after a waiter gave up: %d waiting, %d clients in the backlog; want none", s.Waiting(), len(s.backlog))
	}
}

// TestSchedulerAlternates: two clients of one weight that wait side by
// side get the freed slots in turn, and each client's newest waiter goes
// first.
func TestSchedulerAlternates(t *testing.T) {
	s := newSlots(1)
	a, b := flowOf(t, s, "a", 1), flowOf(t, s, "b", 1)
	hold(t, s, a)
	got := make(chan string)
	for _, f := range []struct {
		f    *flow
		name string
	}{{a, "a"}, {b, "b"}} {
		for i := range 3 {
			queue(t, s, f.f, fmt.Sprint(f.name, i), got)
		}
	}
	order := grants(s, 6, got)
	want := []string{"b2", "a2", "b1", "a1", "b0", "a0"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("slots went to %v, want %v: b first (a has had one), then in turn, newest first", order, want)
	}
}

// TestSchedulerWeights: while both wait, a client of weight 2 gets twice
// the slots of one of weight 1.
func TestSchedulerWeights(t *testing.T) {
	s := newSlots(1)
	heavy, light := flowOf(t, s, "renderer", 2), flowOf(t, s, "notebook", 1)
	hold(t, s, heavy)
	got := make(chan string)
	const each = 30
	for i := range each {
		queue(t, s, heavy, "renderer", got)
		queue(t, s, light, fmt.Sprint("notebook", i), got)
	}
	count := map[string]int{}
	for _, label := range grants(s, each, got) {
		if label != "renderer" {
			label = "notebook"
		}
		count[label]++
	}
	if count["renderer"] != 2*each/3 || count["notebook"] != each/3 {
		t.Errorf("of %d slots: %v, want 20 to the client of weight 2 and 10 to the one of weight 1", each, count)
	}
	// The rest drain, the slot is free again.
	grants(s, each, got)
	s.release()
	if s.free != 1 || s.Waiting() != 0 {
		t.Errorf("after all: %d free, %d waiting; want 1 and 0", s.free, s.Waiting())
	}
}

// TestSchedulerArrivalStartsLevel: a client that arrives while another
// has had the slots to itself gets the next free slot, but no more than
// its turn: it has no credit for having been away.
func TestSchedulerArrivalStartsLevel(t *testing.T) {
	s := newSlots(1)
	old := flowOf(t, s, "old", 1)
	for range 100 {
		if !s.acquire(t.Context(), old) {
			t.Fatal("a client alone waited")
		}
		s.release()
	}
	if !s.acquire(t.Context(), old) {
		t.Fatal("a client alone waited")
	}
	got := make(chan string)
	for i := range 2 {
		queue(t, s, old, fmt.Sprint("old", i), got)
	}
	late := flowOf(t, s, "late", 1)
	for i := range 2 {
		queue(t, s, late, fmt.Sprint("late", i), got)
	}
	if order, want := grants(s, 4, got), []string{"late1", "old1", "late0", "old0"}; fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("slots went to %v, want %v", order, want)
	}
}

// TestSchedulerCancelledWaiter: a waiter whose context ends leaves
// without a slot and without a place in the backlog.
func TestSchedulerCancelledWaiter(t *testing.T) {
	s := newSlots(1)
	a, b := flowOf(t, s, "a", 1), flowOf(t, s, "b", 1)
	hold(t, s, a)
	ctx, cancel := context.WithCancel(t.Context())
	result := make(chan bool)
	go func() { result <- s.acquire(ctx, b) }()
	for s.Waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if <-result {
		t.Error("a waiter whose context ended got a slot that was not free")
	}
	if s.Waiting() != 0 || len(s.backlog) != 0 {
		t.Errorf("after it gave up: %d waiting, %d clients in the backlog; want none", s.Waiting(), len(s.backlog))
	}
	s.release()
	if s.free != 1 {
		t.Errorf("after all: %d free, want 1", s.free)
	}
}

// TestSchedulerHandedAsCancelled: a slot handed to a waiter as its
// context ends goes on to the next waiter: whichever comes first, the
// release or the end, no slot is lost.
func TestSchedulerHandedAsCancelled(t *testing.T) {
	for i := range 200 {
		s := newSlots(1)
		a, b := flowOf(t, s, "a", 1), flowOf(t, s, "b", 1)
		hold(t, s, a)
		got := make(chan string, 1)
		queue(t, s, a, "next", got)
		ctx, cancel := context.WithCancel(t.Context())
		result := make(chan bool)
		before := s.Waiting()
		go func() { result <- s.acquire(ctx, b) }()
		for s.Waiting() == before {
			time.Sleep(time.Millisecond)
		}
		// Most rounds b sleeps in its select by now and wakes for the end
		// of its context, after the slot is handed to it.
		time.Sleep(time.Millisecond)
		s.mu.Lock()
		cancel()
		s.releaseLocked() // to b, whose use is the least
		s.mu.Unlock()
		if <-result {
			s.release() // b had it before its context ended
		}
		// Only a lost slot makes this wait; the deadline turns a hang into
		// a failure.
		select {
		case <-got:
		case <-time.After(time.Minute):
			t.Fatalf("round %d: the slot was lost: the next waiter never got it", i)
		}
		s.release()
		if s.free != 1 || s.Waiting() != 0 || len(s.backlog) != 0 {
			t.Fatalf("round %d: %d free, %d waiting, %d clients in the backlog; want 1, 0, 0", i, s.free, s.Waiting(), len(s.backlog))
		}
	}
}
