package db

import (
	"context"
	"testing"
	"time"
)

// waiters returns how many statements wait for a place in s.
func (s *share) waiters() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting)
}

// TestShareNewestFirst: a released place goes to the newest waiter, and a
// waiter whose context ends leaves the queue without taking a place.
func TestShareNewestFirst(t *testing.T) {
	s := &share{free: 1}
	if !s.acquire(t.Context()) {
		t.Fatal("first acquire failed")
	}
	got := make(chan string, 2)
	oldCtx, cancelOld := context.WithCancel(t.Context())
	defer cancelOld()
	go func() {
		if s.acquire(oldCtx) {
			got <- "old"
			return
		}
		got <- "old gave up"
	}()
	for s.waiters() < 1 {
		time.Sleep(time.Millisecond)
	}
	go func() {
		if s.acquire(t.Context()) {
			got <- "new"
		}
	}()
	for s.waiters() < 2 {
		time.Sleep(time.Millisecond)
	}

	s.release()
	if g := <-got; g != "new" {
		t.Errorf("the released place went to %q, want the newest waiter", g)
	}
	cancelOld()
	if g := <-got; g != "old gave up" {
		t.Errorf("the cancelled waiter: %q, want it to give up", g)
	}
	s.release()
	if s.free != 1 || s.waiters() != 0 {
		t.Errorf("after all: %d free, %d waiting; want 1 and 0", s.free, s.waiters())
	}
}
