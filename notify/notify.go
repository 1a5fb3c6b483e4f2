// Package notify tells the API server's subscribers what a writer (an
// import, a harvest, an enrich run) committed: the ids of the papers it
// wrote and of the researchers whose papers changed.
//
// A Bus fans each event out to its subscribers, each through a bounded
// buffer: a subscriber that falls Buffer events behind is dropped (its
// channel closed, Err says ErrSlow) rather than buffered without bound.
// NewLocal's bus delivers in process only; NewPostgres's publishes with
// pg_notify and delivers what its LISTEN connection hears, so that every
// server instance hears every writer of the database.
package notify

import (
	"context"
	"errors"
	"sync"
)

// Buffer is how many events a subscriber may fall behind before it is
// dropped.
const Buffer = 64

// ErrSlow ends a subscription whose subscriber fell Buffer events behind.
var ErrSlow = errors.New("notify: the subscriber fell too far behind and was dropped")

// Event is one commit of a writer.
type Event struct {
	// Papers are the papers written: new ones and those with new data
	// (a new version, new metadata).
	Papers []int64 `json:"p,omitempty"`
	// Researchers are the researchers whose papers were written.
	Researchers []int64 `json:"r,omitempty"`
}

// Bus fans events out to subscribers.
type Bus struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
	// publish sends an event to the bus's listeners; nil delivers it in
	// process.
	publish func(ctx context.Context, e Event) error
	// stop and listening are Start's listener: stop ends it, listening
	// is closed once it has.
	stop      context.CancelFunc
	listening chan struct{}
	closed    bool
}

// NewLocal returns a bus that delivers what is published on it, in this
// process only.
func NewLocal() *Bus { return &Bus{subs: map[*Subscription]struct{}{}} }

// Publish tells the bus's subscribers about a commit. An event without
// ids is not sent.
func (b *Bus) Publish(ctx context.Context, papers, researchers []int64) error {
	if len(papers) == 0 && len(researchers) == 0 {
		return nil
	}
	e := Event{Papers: papers, Researchers: researchers}
	if b.publish != nil {
		return b.publish(ctx, e)
	}
	b.deliver(e)
	return nil
}

// deliver hands e to every subscriber, dropping those whose buffer is
// full. It never blocks.
func (b *Bus) deliver(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		select {
		case s.c <- e:
		default:
			delete(b.subs, s)
			s.err = ErrSlow
			close(s.c)
		}
	}
}

// Close stops the listener Start started, if any, and waits for it to
// end, so that no goroutine or connection of the bus is left; then it
// ends every subscription (their channels are closed, Err is nil). A
// closed bus delivers nothing more. Close may be called more than once.
func (b *Bus) Close() {
	b.mu.Lock()
	stop, listening := b.stop, b.listening
	b.stop = nil
	b.mu.Unlock()
	if stop != nil {
		stop()
		<-listening
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		delete(b.subs, s)
		close(s.c)
	}
}

// Subscribe starts a subscription; Close ends it.
func (b *Bus) Subscribe() *Subscription {
	s := &Subscription{bus: b, c: make(chan Event, Buffer)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(s.c)
		return s
	}
	b.subs[s] = struct{}{}
	return s
}

// Subscribers is how many subscriptions are open.
func (b *Bus) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Subscription receives a bus's events.
type Subscription struct {
	bus *Bus
	c   chan Event
	err error // set, under bus.mu, before c is closed
}

// Events is the channel of the subscription's events. It is closed when
// the subscriber is dropped (see Err) or the subscription closed.
func (s *Subscription) Events() <-chan Event { return s.c }

// Err is ErrSlow once Events is closed because the subscriber fell
// behind, nil otherwise.
func (s *Subscription) Err() error {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	return s.err
}

// Close ends the subscription; its channel is closed.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	if _, ok := s.bus.subs[s]; ok {
		delete(s.bus.subs, s)
		close(s.c)
	}
}
