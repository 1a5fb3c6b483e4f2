package db_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// The replica tests read through the streaming replica of .ci/pg-replica.
// They run one after another: one pauses the replica's replay.

// quickChecks makes a replica skipped within a fraction of a second.
var quickChecks = db.ReplicaOptions{MaxLag: 300 * time.Millisecond, Interval: 50 * time.Millisecond}

// servedBy reports whether reader's next statement ran on a replica.
func servedByReplica(t *testing.T, reader *bun.DB) bool {
	t.Helper()
	var recovering bool
	if err := reader.NewRaw("SELECT pg_is_in_recovery()").Scan(context.Background(), &recovering); err != nil {
		t.Fatal(err)
	}
	return recovering
}

// addCategory writes a category on the primary.
func addCategory(t *testing.T, bdb *bun.DB, code string) {
	t.Helper()
	_, err := bdb.NewRaw("INSERT INTO categories (code, name, archive, group_name, active, in_taxonomy) VALUES (?, ?, 'test', 'Test', TRUE, FALSE)",
		code, "Category "+code).Exec(context.Background())
	if err != nil {
		t.Fatal(err)
	}
}

// categoryName reads a category's name through reader; "" when it has none.
func categoryName(t *testing.T, reader *bun.DB, code string) string {
	t.Helper()
	var names []string
	if err := reader.NewRaw("SELECT name FROM categories WHERE code = ?", code).Scan(context.Background(), &names); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// eventually polls cond for up to 20 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func openReplicated(t *testing.T, primary string, replicas []string) (*bun.DB, *db.Replicas) {
	t.Helper()
	reader, set, err := db.OpenReplicated(primary, 4, replicas, quickChecks)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Close() })
	return reader, set
}

func TestReplicaServesReadsOnceReplayed(t *testing.T) {
	primary, replica, bdb := dbtest.Replicated(t)
	reader, set := openReplicated(t, primary, []string{replica})
	if st := set.Status(); len(st) != 1 || !st[0].Up {
		t.Fatalf("status = %+v, want the replica up", st)
	}
	if !servedByReplica(t, reader) {
		t.Fatal("a read went to the primary with the replica up")
	}
	addCategory(t, bdb, "test.RE")
	eventually(t, "the row written on the primary read from the replica", func() bool {
		return categoryName(t, reader, "test.RE") == "Category test.RE"
	})
	// Other packages' tests write to the same primary, and a replica
	// lagging past quickChecks' 300 ms is skipped until it catches up
	// (TestReplicaLaggingIsSkipped): reads must come back to it.
	eventually(t, "reads back on the replica", func() bool { return servedByReplica(t, reader) })
	var onPrimary bool
	if err := reader.NewRaw("SELECT pg_is_in_recovery()").Scan(db.Primary(context.Background()), &onPrimary); err != nil {
		t.Fatal(err)
	}
	if onPrimary {
		t.Error("a db.Primary read ran on the replica")
	}
}

func TestReplicaLaggingIsSkipped(t *testing.T) {
	primary, replica, bdb := dbtest.Replicated(t)
	reader, set := openReplicated(t, primary, []string{replica})
	admin, err := sql.Open("pgx", replica)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if _, err := admin.Exec("SELECT pg_wal_replay_resume()"); err != nil {
				t.Errorf("resume replay: %v", err)
			}
		}
	}
	defer resume()

	addCategory(t, bdb, "test.LAG")
	eventually(t, "the paused replica skipped", func() bool { return !set.Status()[0].Up })
	if got := set.Status()[0]; got.Lag < quickChecks.MaxLag || got.Reason == "" {
		t.Errorf("status = %+v, want a lag past %s and a reason", got, quickChecks.MaxLag)
	}
	if servedByReplica(t, reader) {
		t.Error("a read went to the lagging replica")
	}
	if got := categoryName(t, reader, "test.LAG"); got != "Category test.LAG" {
		t.Errorf("read %q of the row just written, want it from the primary", got)
	}

	resume()
	eventually(t, "the replica back once it replays", func() bool { return set.Status()[0].Up })
	if !servedByReplica(t, reader) {
		t.Error("reads did not return to the replica")
	}
}

// proxy is a TCP relay to a replica that the test can cut off, as a
// replica that stops or a network that fails looks to its clients.
type proxy struct {
	target string
	ln     net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	addr   string
}

func startProxy(t *testing.T, target, addr string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{target: target, ln: ln, addr: ln.Addr().String()}
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }() //nolint:errcheck // a relay ends when either side does
		go func() { io.Copy(c, up); c.Close() }()  //nolint:errcheck // likewise
	}
}

// cut closes the listener and every relayed connection.
func (p *proxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func TestReplicaStoppingFailsNoRequest(t *testing.T) {
	primary, replica, bdb := dbtest.Replicated(t)
	addCategory(t, bdb, "test.DOWN")
	u, err := url.Parse(replica)
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, u.Host, "127.0.0.1:0")
	defer func() { p.cut() }()
	u.Host = p.addr
	reader, set := openReplicated(t, primary, []string{u.String()})
	eventually(t, "the replica has the row", func() bool { return categoryName(t, reader, "test.DOWN") != "" })

	// Clients read without pause while the replica goes away.
	var reads, failed atomic.Int64
	var firstErr atomic.Value
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				var names []string
				err := reader.NewRaw("SELECT name FROM categories WHERE code = ?", "test.DOWN").Scan(context.Background(), &names)
				reads.Add(1)
				if err != nil || len(names) != 1 {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, errors.Join(err, errors.New("read")))
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	p.cut()
	eventually(t, "the stopped replica skipped", func() bool { return !set.Status()[0].Up })
	time.Sleep(200 * time.Millisecond)
	stop()
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d reads failed while the replica stopped; first: %v", n, reads.Load(), firstErr.Load())
	}
	if servedByReplica(t, reader) {
		t.Error("a read went to the stopped replica")
	}

	// The replica comes back on the same address.
	p = startProxy(t, p.target, p.addr)
	eventually(t, "the replica back", func() bool { return set.Status()[0].Up })
	if !servedByReplica(t, reader) {
		t.Error("reads did not return to the replica")
	}
	t.Logf("%d reads, %d ran again on the primary", reads.Load(), set.Status()[0].Failovers)
}
