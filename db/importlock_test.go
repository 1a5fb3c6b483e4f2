package db_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

func TestImportLock(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		// The second import is another process in life; here it is
		// another connection pool, as a process would have.
		other := dbtest.Open(t, dsn)
		if h, err := db.ImportRunning(ctx, other); err != nil || h != nil {
			t.Fatalf("before any lock: ImportRunning = %v, %v; want none", h, err)
		}
		release, err := db.LockImport(ctx, bdb)
		if err != nil {
			t.Fatal(err)
		}
		h, err := db.ImportRunning(ctx, other)
		if err != nil || h == nil {
			t.Fatalf("ImportRunning = %v, %v; want the holder", h, err)
		}
		if h.PID != os.Getpid() || time.Since(h.Started) > time.Minute {
			t.Errorf("holder = %+v, want pid %d started just now", h, os.Getpid())
		}
		_, err = db.LockImport(ctx, other)
		running, ok := errors.AsType[*db.ImportRunningError](err)
		if !ok {
			t.Fatalf("second LockImport = %v, want an ImportRunningError", err)
		}
		if msg := running.Error(); !strings.HasPrefix(msg, "another papergraph import is writing to this database (pid ") {
			t.Errorf("message = %q", msg)
		}
		release()
		if h, err := db.ImportRunning(ctx, other); err != nil || h != nil {
			t.Errorf("after release: ImportRunning = %v, %v; want none", h, err)
		}
		again, err := db.LockImport(ctx, other)
		if err != nil {
			t.Fatalf("LockImport after release: %v", err)
		}
		again()
	})
}
