package notify_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/notify"
)

// A subscriber that falls behind keeps every id published, in order,
// its events merged once many wait; one more than MaxBehind ids behind
// is dropped with ErrSlow, and loses what it had queued; a subscriber
// that keeps up hears every event as published.
func TestSlowSubscriberMergedThenDropped(t *testing.T) {
	ctx := t.Context()
	bus := notify.NewLocal()
	slow, fast := bus.Subscribe(), bus.Subscribe()
	defer fast.Close()
	const events = 1000
	for i := range events {
		if err := bus.Publish(ctx, []int64{int64(i)}, []int64{-int64(i)}); err != nil {
			t.Fatal(err)
		}
		if e, err := fast.Next(ctx); err != nil || !slices.Equal(e.Papers, []int64{int64(i)}) {
			t.Fatalf("fast subscriber: got %v, %v, want [%d]", e.Papers, err, i)
		}
	}
	var papers []int64
	n := 0
	for len(papers) < events {
		e, err := slow.Next(ctx)
		if err != nil {
			t.Fatalf("slow subscriber after %d ids: %v", len(papers), err)
		}
		papers = append(papers, e.Papers...)
		n++
	}
	if n >= events {
		t.Errorf("the slow subscriber's %d events were not merged", n)
	}
	for i, p := range papers {
		if p != int64(i) {
			t.Fatalf("slow subscriber: id %d of %d is %d, want the ids in order", i, events, p)
		}
	}

	big := make([]int64, notify.MaxBehind/2)
	for range 3 {
		if err := bus.Publish(ctx, big, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := fast.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := slow.Next(ctx); !errors.Is(err, notify.ErrSlow) {
		t.Errorf("a subscriber %d ids behind: got %v, want ErrSlow", 3*len(big), err)
	}
	if got := bus.Subscribers(); got != 1 {
		t.Errorf("subscribers: got %d, want 1", got)
	}
}

// On PostgreSQL an event published through another connection pool (as
// another process would) reaches the listener, in payloads under
// PostgreSQL's 8,000 bytes however many ids it carries.
func TestPostgresNotify(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		if !strings.HasPrefix(dsn, "postgres") {
			t.Skip("pg_notify is PostgreSQL's; SQLite's bus is in process only")
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		bus := notify.NewPostgres(bdb)
		ready := make(chan struct{}, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			bus.Listen(ctx, dsn, slog.New(slog.NewTextHandler(t.Output(), nil)), func() { ready <- struct{}{} })
		}()
		defer func() { cancel(); <-done }()
		sub := bus.Subscribe()
		defer sub.Close()
		<-ready

		other := dbtest.Open(t, dsn)
		papers := make([]int64, 1000)
		for i := range papers {
			papers[i] = 1_000_000_000_000 + int64(i)
		}
		if err := notify.NewPostgres(other).Publish(ctx, papers, []int64{7}); err != nil {
			t.Fatal(err)
		}
		var got notify.Event
		for len(got.Papers) < len(papers) || len(got.Researchers) < 1 {
			e, err := sub.Next(ctx)
			if err != nil {
				t.Fatalf("heard %d paper ids, want %d: %v", len(got.Papers), len(papers), err)
			}
			got.Papers = append(got.Papers, e.Papers...)
			got.Researchers = append(got.Researchers, e.Researchers...)
		}
		if !slices.Equal(got.Papers, papers) || !slices.Equal(got.Researchers, []int64{7}) {
			t.Errorf("got %d papers and researchers %v, want the %d published and [7]", len(got.Papers), got.Researchers, len(papers))
		}
	})
}

// Close stops the bus's listener and returns once it has ended: no
// goroutine of the bus is left; every subscription is ended, and a bus
// closed delivers nothing more. On SQLite the bus has no listener to
// stop, and Close ends the subscriptions alike.
func TestCloseAwaitsListener(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		bus := notify.NewLocal()
		if strings.HasPrefix(dsn, "postgres") {
			bus = notify.NewPostgres(bdb)
			ready := make(chan struct{}, 1)
			bus.Start(dsn, slog.New(slog.NewTextHandler(t.Output(), nil)), func() { ready <- struct{}{} })
			select {
			case <-ready:
			case <-time.After(time.Minute):
				t.Fatal("the listener did not start within a minute")
			}
			if !listening() {
				t.Fatal("no listener goroutine while the bus listens: the check below would prove nothing")
			}
		}
		sub := bus.Subscribe()
		bus.Close()
		if listening() {
			t.Errorf("a listener goroutine is left after Close:\n%s", stacks())
		}
		if _, err := sub.Next(t.Context()); !errors.Is(err, notify.ErrClosed) {
			t.Errorf("the subscription was not ended cleanly by Close: %v", err)
		}
		if err := bus.Publish(t.Context(), []int64{1}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := bus.Subscribe().Next(t.Context()); !errors.Is(err, notify.ErrClosed) {
			t.Errorf("a subscription to a closed bus: got %v, want ErrClosed", err)
		}
		bus.Close()
	})
}

// stacks is every goroutine's stack.
func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// listening reports whether a goroutine runs a bus's listener.
func listening() bool {
	s := stacks()
	return strings.Contains(s, "notify.(*Bus).Listen") || strings.Contains(s, "papergraph/db.Listen(")
}
