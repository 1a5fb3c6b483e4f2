package notify

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// maxPayload bounds one notification's payload: PostgreSQL refuses those
// of 8,000 bytes or more. An id takes at most 20 bytes and a comma.
const maxPayload = 7900

// idsPerPayload is how many ids one payload carries at most.
const idsPerPayload = (maxPayload - 16) / 21

// Reconnect waits of a listener whose connection failed: doubled after
// each failure from minBackoff up to maxBackoff.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// NewPostgres returns a bus that publishes through pg_notify on bdb, so
// that every process listening on the database hears it, and delivers
// what Listen hears. Without Listen running its subscribers hear nothing,
// not even this process's events.
func NewPostgres(bdb bun.IDB) *Bus {
	b := NewLocal()
	b.publish = func(ctx context.Context, e Event) error {
		for _, chunk := range chunks(e) {
			payload, err := json.Marshal(chunk)
			if err != nil {
				return err
			}
			if err := db.Notify(ctx, bdb, string(payload)); err != nil {
				return err
			}
		}
		return nil
	}
	return b
}

// chunks splits e into events of at most idsPerPayload ids each.
func chunks(e Event) []Event {
	var out []Event
	p, r := e.Papers, e.Researchers
	for len(p)+len(r) > 0 {
		var c Event
		n := min(len(p), idsPerPayload)
		c.Papers, p = p[:n], p[n:]
		m := min(len(r), idsPerPayload-n)
		c.Researchers, r = r[:m], r[m:]
		out = append(out, c)
	}
	return out
}

// Start runs Listen on a goroutine of its own until Close, which waits
// for it to end. It starts one listener at most: a second call, one
// after Close or one on a bus NewPostgres did not make does nothing.
func (b *Bus) Start(dsn string, log *slog.Logger, ready func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.publish == nil || b.stop != nil || b.closed {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	listening := make(chan struct{})
	b.stop, b.listening = stop, listening
	go func() {
		defer close(listening)
		b.Listen(ctx, dsn, log, ready)
	}()
}

// Listen delivers the events published on the PostgreSQL database dsn to
// b's subscribers until ctx ends, on a connection of its own that it
// opens again, after a growing wait, whenever it fails. Events published
// while it is disconnected are lost. ready, when not nil, is called each
// time the LISTEN holds.
func (b *Bus) Listen(ctx context.Context, dsn string, log *slog.Logger, ready func()) {
	wait := minBackoff
	for ctx.Err() == nil {
		start := time.Now()
		err := db.Listen(ctx, dsn, ready, func(payload string) {
			var e Event
			if err := json.Unmarshal([]byte(payload), &e); err != nil {
				log.Warn("notify: a notification that is not an event", "err", err)
				return
			}
			b.deliver(e)
		})
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > maxBackoff {
			wait = minBackoff
		}
		log.Warn("notify: listener disconnected; reconnecting", "err", err, "wait", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, maxBackoff)
	}
}
