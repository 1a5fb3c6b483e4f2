package db_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestReaderOnlyReads: the serving pool reads, checks the schema, and
// refuses to write.
func TestReaderOnlyReads(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, _ *bun.DB) {
		ctx := t.Context()
		rdb, err := db.OpenReader(dsn, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		n, err := rdb.NewSelect().Model((*db.Category)(nil)).Count(ctx)
		if err != nil || n != 185 {
			t.Errorf("categories through the reader: %d (%v), want 185", n, err)
		}
		if err := db.Ping(ctx, rdb); err != nil {
			t.Errorf("Ping through the reader: %v", err)
		}
		if _, err := rdb.NewDelete().Table("categories").Where("code = ?", "hep-th").Exec(ctx); err == nil {
			t.Error("a delete through the reader succeeded, want an error")
		}
	})
}

func TestReaderRefusesMemory(t *testing.T) {
	if _, err := db.OpenReader(":memory:", 0); err == nil {
		t.Error("OpenReader(:memory:) succeeded, want an error: each connection would see its own database")
	}
}

// hogKey marks the statements of the client that fills the pool, with
// the statement's number.
type hogKey struct{}

// inFlight is a query hook, added after the scheduler's, that counts the
// hog's statements that hold a slot and says which started.
type inFlight struct {
	mu      sync.Mutex
	n, most int
	started chan int
}

func (h *inFlight) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	if i, ok := ctx.Value(hogKey{}).(int); ok && ctx.Err() == nil {
		h.mu.Lock()
		h.n++
		h.most = max(h.most, h.n)
		h.mu.Unlock()
		h.started <- i
	}
	return ctx
}

func (h *inFlight) AfterQuery(ctx context.Context, _ *bun.QueryEvent) {
	if _, ok := ctx.Value(hogKey{}).(int); ok {
		h.mu.Lock()
		h.n--
		h.mu.Unlock()
	}
}

// TestSchedulerFillsPoolAlone: a client alone runs as many endless
// statements at once as the pool has connections; a statement of
// another client that arrives meanwhile gets the first slot that frees,
// before the hog's own waiting statements; and a statement of the hog on
// another pool takes no slot.
func TestSchedulerFillsPoolAlone(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, other *bun.DB) {
		const conns, hogs = 3, 6
		rdb, err := db.OpenReader(dsn, conns)
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		counter := &inFlight{started: make(chan int, hogs)}
		rdb.AddQueryHook(counter)
		sched := db.NewScheduler(rdb, 0)
		endless := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
		if db.IsPostgres(rdb) {
			endless = "SELECT pg_sleep(3600)"
		}

		hogCtx, hogDone := sched.Join(t.Context(), "hog", 1)
		defer hogDone()
		stops := make([]context.CancelFunc, hogs)
		errs := make(chan error, hogs)
		for i := range hogs {
			ctx, stop := context.WithCancel(context.WithValue(hogCtx, hogKey{}, i))
			stops[i] = stop
			defer stop()
			go func() {
				var x any
				errs <- rdb.NewRaw(endless).Scan(ctx, &x)
			}()
		}
		var running []int
		for range conns {
			running = append(running, <-counter.started)
		}
		for sched.Waiting() < hogs-conns {
			time.Sleep(time.Millisecond)
		}
		// Only a broken scheduler makes these wait; the deadline turns a
		// hang into a failure.
		ctx, cancel := context.WithTimeout(hogCtx, time.Minute)
		defer cancel()
		var one int
		if err := other.NewRaw("SELECT 1").Scan(ctx, &one); err != nil || one != 1 {
			t.Errorf("the hog's statement on another pool: %d, %v; want 1", one, err)
		}

		ctx, cancel = context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		ctx, done := sched.Join(ctx, "other", 1)
		defer done()
		answered := make(chan error, 1)
		go func() { answered <- rdb.NewRaw("SELECT 1").Scan(ctx, &one) }()
		for sched.Waiting() < hogs-conns+1 {
			time.Sleep(time.Millisecond)
		}
		stops[running[0]]()
		if err := <-answered; err != nil || one != 1 {
			t.Errorf("another client's statement beside the hog: %d, %v; want 1", one, err)
		}

		for _, stop := range stops {
			stop()
		}
		for range hogs {
			if err := <-errs; err == nil {
				t.Error("an endless statement returned without error")
			}
		}
		if counter.most != conns {
			t.Errorf("the hog ran %d statements at once, want all %d connections", counter.most, conns)
		}
		if n := sched.Waiting(); n != 0 {
			t.Errorf("%d statements still wait", n)
		}
	})
}
