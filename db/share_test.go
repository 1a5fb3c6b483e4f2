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

// hogKey marks the statements of the request that tries to take the pool.
type hogKey struct{}

// inFlight is a query hook, added after the share's, that counts the hog's
// statements that hold a place in its share.
type inFlight struct {
	mu      sync.Mutex
	n, most int
	started chan struct{}
}

func (h *inFlight) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	if ctx.Value(hogKey{}) != nil && ctx.Err() == nil {
		h.mu.Lock()
		h.n++
		h.most = max(h.most, h.n)
		h.mu.Unlock()
		h.started <- struct{}{}
	}
	return ctx
}

func (h *inFlight) AfterQuery(ctx context.Context, _ *bun.QueryEvent) {
	if ctx.Value(hogKey{}) != nil {
		h.mu.Lock()
		h.n--
		h.mu.Unlock()
	}
}

// TestShareLeavesConnectionsToOthers: a request that runs more endless
// statements than the pool has connections gets only its share of them,
// and another request's statement still runs while they do.
func TestShareLeavesConnectionsToOthers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, _ *bun.DB) {
		const conns, share, hogs = 3, 2, 6
		rdb, err := db.OpenReader(dsn, conns)
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		counter := &inFlight{started: make(chan struct{}, hogs)}
		rdb.AddQueryHook(counter)
		endless := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
		if db.IsPostgres(rdb) {
			endless = "SELECT pg_sleep(3600)"
		}

		hogCtx, stopHog := context.WithCancel(context.WithValue(db.WithShare(t.Context(), share), hogKey{}, true))
		defer stopHog()
		errs := make(chan error, hogs)
		for range hogs {
			go func() {
				var x any
				errs <- rdb.NewRaw(endless).Scan(hogCtx, &x)
			}()
		}
		for range share {
			<-counter.started
		}
		// The hog now holds its share of places; wait until its
		// statements hold connections too.
		for rdb.DB.Stats().InUse < share {
			time.Sleep(time.Millisecond)
		}

		// Only a broken share makes this wait; the deadline turns a hang
		// into a failure.
		ctx, cancel := context.WithTimeout(db.WithShare(t.Context(), share), time.Minute)
		defer cancel()
		var one int
		if err := rdb.NewRaw("SELECT 1").Scan(ctx, &one); err != nil || one != 1 {
			t.Errorf("another request's statement beside the hog: %d, %v; want 1", one, err)
		}

		stopHog()
		for range hogs {
			if err := <-errs; err == nil {
				t.Error("an endless statement returned without error")
			}
		}
		if counter.most != share {
			t.Errorf("the hog ran %d statements at once, want its share of %d", counter.most, share)
		}
	})
}
