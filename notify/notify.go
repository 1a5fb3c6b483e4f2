// Package notify tells the API server's subscribers what a writer (an
// import, a harvest, an enrich run) committed: the ids of the papers it
// wrote and of the researchers whose papers changed.
//
// A Bus fans each event out to its subscribers, each through a queue
// bounded by the ids it holds: events that pile up behind a slow
// subscriber are merged, so that a subscriber that reads more slowly than
// a writer commits falls behind by ids, not by events; one more than
// MaxBehind ids behind, or the one furthest behind when all subscribers
// together hold more than maxWaiting, is dropped (Next says ErrSlow).
// NewLocal's bus delivers in process only; NewPostgres's publishes with
// pg_notify and delivers what its LISTEN connection hears, so that every
// server instance hears every writer of the database.
package notify

import (
	"context"
	"errors"
	"sync"
)

// MaxBehind is how many ids (papers and researchers) one subscriber may
// have waiting before it is dropped.
const MaxBehind = 1 << 17

// maxWaiting is how many ids all of a bus's subscribers together may
// have waiting; past it, the subscriber furthest behind is dropped.
const maxWaiting = 1 << 21

// mergeAfter is how many events a subscriber's queue holds before each
// new one is merged into the last.
const mergeAfter = 64

// ErrSlow ends a subscription whose subscriber fell too far behind.
var ErrSlow = errors.New("notify: the subscriber fell too far behind and was dropped")

// ErrClosed ends a subscription that was closed, or whose bus was.
var ErrClosed = errors.New("notify: the subscription is closed")

// Event is one commit of a writer.
type Event struct {
	// Papers are the papers written: new ones and those with new data
	// (a new version, new metadata).
	Papers []int64 `json:"p,omitempty"`
	// Researchers are the researchers whose papers were written.
	Researchers []int64 `json:"r,omitempty"`
}

// ids is how many ids e holds.
func (e Event) ids() int { return len(e.Papers) + len(e.Researchers) }

// Bus fans events out to subscribers.
type Bus struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
	// waiting is how many ids the subscribers' queues hold together.
	waiting int
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

// deliver queues e for every subscriber and drops those that fall too
// far behind. It never blocks.
func (b *Bus) deliver(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.push(e)
		if s.waiting > MaxBehind {
			b.drop(s, ErrSlow)
		}
	}
	for b.waiting > maxWaiting {
		var furthest *Subscription
		for s := range b.subs {
			if furthest == nil || s.waiting > furthest.waiting {
				furthest = s
			}
		}
		b.drop(furthest, ErrSlow)
	}
}

// drop ends s with err, which its Next returns from then on, and lets
// go of what s had queued; b.mu is held.
func (b *Bus) drop(s *Subscription, err error) {
	delete(b.subs, s)
	b.waiting -= s.waiting
	s.queue, s.waiting = nil, 0
	s.err = err
	s.wake()
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
		b.drop(s, ErrClosed)
	}
}

// Subscribe starts a subscription; Close ends it.
func (b *Bus) Subscribe() *Subscription {
	s := &Subscription{bus: b, ready: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.err = ErrClosed
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
	bus   *Bus
	ready chan struct{} // has a value when the queue or err changed
	// Under bus.mu:
	queue   []Event
	waiting int   // ids in queue
	err     error // set when the subscription ended
}

// push queues e, merging it into the last event once the queue is long;
// bus.mu is held.
func (s *Subscription) push(e Event) {
	if n := len(s.queue); n >= mergeAfter {
		last := &s.queue[n-1]
		last.Papers = append(last.Papers, e.Papers...)
		last.Researchers = append(last.Researchers, e.Researchers...)
	} else {
		s.queue = append(s.queue, e)
	}
	s.waiting += e.ids()
	s.bus.waiting += e.ids()
	s.wake()
}

func (s *Subscription) wake() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next waits for the subscription's next event, in the order published
// (events that piled up may come merged into one). Once the subscription
// has ended it returns ErrSlow if the subscriber fell too far behind
// (what was queued then is dropped with it), ErrClosed otherwise; and
// ctx's error when ctx ends first.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.bus.mu.Lock()
		if len(s.queue) > 0 {
			e := s.queue[0]
			s.queue[0] = Event{}
			s.queue = s.queue[1:]
			s.waiting -= e.ids()
			s.bus.waiting -= e.ids()
			s.bus.mu.Unlock()
			return e, nil
		}
		err := s.err
		s.bus.mu.Unlock()
		if err != nil {
			return Event{}, err
		}
		select {
		case <-s.ready:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	if _, ok := s.bus.subs[s]; ok {
		s.bus.drop(s, ErrClosed)
	}
}
