package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// Requests of one key, each with many aliased follows, sent side by side,
// all answer and write every follow once: a transaction of one request
// never waits on a place in the key's share that another request,
// waiting for the transaction's connection or row, holds.
func TestParallelMutationsOfOneKey(t *testing.T) {
	const requests, aliases = 8, 10
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		if _, err := ingest.Import(ctx, bdb, ingest.Options{Format: ingest.Kaggle, Paths: []string{"../demo/data/kaggle-arxiv-sample.jsonl.gz"}}); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		if err := bdb.NewRaw("SELECT id FROM researchers ORDER BY id LIMIT ?", requests*aliases).Scan(ctx, &ids); err != nil || len(ids) < requests*aliases {
			t.Fatalf("%d researchers, %v; want %d", len(ids), err, requests*aliases)
		}
		key, row, err := db.CreateAPIKey(ctx, bdb, "renderer", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		h := newTestServer(t, bdb, Config{Writer: bdb}).Handler()
		var wg sync.WaitGroup
		failures := make(chan string, requests)
		for r := range requests {
			var q strings.Builder
			q.WriteString("mutation {")
			for a := range aliases {
				fmt.Fprintf(&q, " f%d: followResearcher(id: \"%d\") { id }", a, ids[r*aliases+a])
			}
			q.WriteString(" }")
			wg.Go(func() {
				req := post(t, map[string]string{"query": q.String()}, mediaJSON)
				req.Header.Set("Authorization", "Bearer "+key)
				rec := serve(h, req)
				if resp := decode(t, rec); rec.Code != http.StatusOK || len(resp.Errors) > 0 {
					failures <- fmt.Sprintf("request %d: status %d, errors %+v", r, rec.Code, resp.Errors)
				}
			})
		}
		wg.Wait()
		close(failures)
		for f := range failures {
			t.Error(f)
		}
		n, err := bdb.NewSelect().TableExpr("followed_researchers").Where("api_key_id = ?", row.ID).Count(ctx)
		if err != nil || n != requests*aliases {
			t.Errorf("%d follows written, %v; want %d", n, err, requests*aliases)
		}
	})
}

// One client's mutations take turns: while one runs, the client's next
// waits, to the end of its request if need be, and another client's runs
// at once.
func TestMutationTurns(t *testing.T) {
	m := newMutationTurns()
	ctx := context.Background()
	doneA, err := m.take(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.take(ended, "a"); err == nil {
		t.Error("a's second mutation ran beside its first; want it to wait its turn")
	}
	doneB, err := m.take(ctx, "b")
	if err != nil {
		t.Fatalf("b's mutation: %v; want it to run beside a's", err)
	}
	second := make(chan func())
	go func() {
		done, err := m.take(ctx, "a")
		if err != nil {
			t.Error(err)
		}
		second <- done
	}()
	doneA()
	(<-second)()
	doneB()
	if n := len(m.clients); n != 0 {
		t.Errorf("%d clients kept after their mutations; want none", n)
	}
}
