package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/reqid"
)

// hogGate is a query hook, added after the scheduler's, that holds the
// statements of the requests with id "hog" until open is closed, or one
// of them for each value sent on pass, and counts how many of them hold a
// slot at once.
type hogGate struct {
	mu      sync.Mutex
	n, most int
	held    chan struct{} // one value per hog statement that reached the gate
	pass    chan struct{}
	open    chan struct{}
}

func (g *hogGate) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	if reqid.From(ctx) != "hog" || ctx.Err() != nil {
		return ctx
	}
	g.mu.Lock()
	g.n++
	g.most = max(g.most, g.n)
	g.mu.Unlock()
	g.held <- struct{}{}
	select {
	case <-g.open:
	case <-g.pass:
	case <-ctx.Done():
	}
	return ctx
}

func (g *hogGate) AfterQuery(ctx context.Context, _ *bun.QueryEvent) {
	if reqid.From(ctx) == "hog" {
		g.mu.Lock()
		g.n--
		g.mu.Unlock()
	}
}

func (g *hogGate) mostAtOnce() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}

// TestClientFillsPoolAlone: the requests of one client alone run as many
// statements at once as the pool has connections; a request of another
// client that arrives while they hold them all gets the first slot that
// frees, before the first client's waiting statements.
func TestClientFillsPoolAlone(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{"testdata/pscp.csv"}})
		if err != nil || !sum.OK() {
			t.Fatalf("import: %+v, %v", sum, err)
		}
		gate := &hogGate{held: make(chan struct{}, 1000), pass: make(chan struct{}), open: make(chan struct{})}
		h := newTestServer(t, bdb.WithQueryHook(gate), Config{}).Handler()
		slots := bdb.DB.Stats().MaxOpenConnections
		const paper = `{ paper(id: "hep-th/9201001") { title } }`
		// Each request's one statement holds a slot or waits for one.
		hogs := slots + 2
		answers := make(chan gqlResponse, hogs)
		for range hogs {
			req := post(t, map[string]string{"query": paper}, mediaJSON)
			req.Header.Set(requestIDHeader, "hog")
			req.RemoteAddr = "192.0.2.66:1234"
			go func() { answers <- decode(t, serve(h, req)) }()
		}
		for range slots {
			<-gate.held
		}
		waitFor(t, h, hogs-slots)

		other := post(t, map[string]string{"query": paper}, mediaJSON)
		other.RemoteAddr = "198.51.100.1:1234"
		answered := make(chan gqlResponse, 1)
		go func() { answered <- decode(t, serve(h, other)) }()
		waitFor(t, h, hogs-slots+1)
		gate.pass <- struct{}{}
		if resp := <-answered; len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), "Kontsevich") {
			t.Errorf("another client beside the hog: data %s, errors %+v", resp.Data, resp.Errors)
		}
		if got := gate.mostAtOnce(); got != slots {
			t.Errorf("a client alone ran %d statements at once, want all %d connections", got, slots)
		}

		close(gate.open)
		for range hogs {
			if resp := <-answers; len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), "Kontsevich") {
				t.Errorf("hog: data %s, errors %+v", resp.Data, resp.Errors)
			}
		}
	})
}

// waitFor waits until /metrics of h says n statements wait for a slot.
func waitFor(t *testing.T, h http.Handler, n int) {
	t.Helper()
	want := fmt.Sprintf("\npapergraph_sql_statements_waiting %d\n", n)
	for !strings.Contains(serve(h, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String(), want) {
		time.Sleep(time.Millisecond)
	}
}

// TestServeCancelsPastGrace: a shutdown cancels the context of a request
// still running when the grace period ends, or at once on Abort, with
// errShutdown as its cause (what a search export's last line reports), on
// the API's listener and on the metrics address's alike; the request
// still answers, and Serve returns.
func TestServeCancelsPastGrace(t *testing.T) {
	tests := []struct {
		name  string
		grace time.Duration
		abort bool   // a second interrupt
		what  string // the listener's routes: Serve's, or the metrics address Run serves
	}{
		{"grace period ends", time.Millisecond, false, "api"},
		{"abort", time.Hour, true, "api"},
		{"grace period ends on the metrics address", time.Millisecond, false, "metrics"},
		{"abort on the metrics address", time.Hour, true, "metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sqliteServer(t, Config{ShutdownGrace: tt.grace})
			entered, cancelled := make(chan struct{}), make(chan error, 1)
			blocks := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(entered)
				<-r.Context().Done()
				cancelled <- context.Cause(r.Context())
			})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(t.Context())
			served := make(chan error, 1)
			go func() { served <- s.serve(ctx, ln, blocks, tt.what) }()
			answered := make(chan error, 1)
			go func() {
				resp, err := http.Get("http://" + ln.Addr().String() + "/blocks")
				if err == nil {
					resp.Body.Close()
				}
				answered <- err
			}()
			<-entered

			stop()
			if tt.abort {
				s.Abort()
			}
			// Only a broken shutdown waits for the failsafe.
			failsafe := time.After(time.Minute)
			select {
			case cause := <-cancelled:
				if !errors.Is(cause, errShutdown) {
					t.Errorf("the request was cancelled by %v, want errShutdown", cause)
				}
			case <-failsafe:
				t.Fatal("the request's context was not cancelled")
			}
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("Serve returned %v, want nil", err)
				}
			case <-failsafe:
				t.Fatal("Serve did not return")
			}
			if err := <-answered; err != nil {
				t.Errorf("the cancelled request got no answer: %v", err)
			}
		})
	}
}

// TestReadyzOwnConnection: /readyz answers while every connection of the
// serving pool is taken.
func TestReadyzOwnConnection(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, _ *bun.DB) {
		rdb, err := db.OpenReader(dsn, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		probe, err := db.OpenReader(dsn, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer probe.Close()
		h := newTestServer(t, rdb, Config{ReadyDB: probe}).Handler()
		conn, err := rdb.Conn(t.Context()) // the pool's only connection
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if rec := serve(h, httptest.NewRequest(http.MethodGet, "/readyz", nil)); rec.Code != http.StatusOK {
			t.Errorf("readyz with the pool taken: status %d (%q), want 200", rec.Code, rec.Body.String())
		}
	})
}

// TestServesFromReader: every route answers from db.OpenReader's pool,
// which refuses to write.
func TestServesFromReader(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{"testdata/pscp.csv"}})
		if err != nil || !sum.OK() {
			t.Fatalf("import: %+v, %v", sum, err)
		}
		rdb, err := db.OpenReader(dsn, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		h := newTestServer(t, rdb, Config{}).Handler()

		for _, query := range []string{
			ExampleQuery,
			`{ researcher(id: "1") { name network(depth: 2) { nodes { depth } } }
			   searchPapers(query: "modular", first: 2) { totalCount facets { years { year } } }
			   suggest(prefix: "mod", first: 3) { label } }`,
		} {
			rec := serve(h, post(t, map[string]string{"query": query}, mediaJSON))
			if resp := decode(t, rec); rec.Code != http.StatusOK || len(resp.Errors) > 0 || len(resp.Data) == 0 || string(resp.Data) == "null" {
				t.Errorf("query %.40q: status %d, data %s, errors %+v", query, rec.Code, resp.Data, resp.Errors)
			}
		}
		for _, target := range []string{
			"/readyz",
			"/export/search?query=modular&format=csv",
			"/export/papers/hep-th/9201001/citation-network.json",
			"/export/researchers/1/network.graphml",
			"/metrics",
		} {
			if rec := serve(h, httptest.NewRequest(http.MethodGet, target, nil)); rec.Code != http.StatusOK {
				t.Errorf("GET %s: status %d (%q), want 200", target, rec.Code, rec.Body.String())
			}
		}
	})
}

// TestKeyWeight: a request signed in with a database key takes its
// statement slots at the key's weight, any other at weight 1.
func TestKeyWeight(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	key, _, err := db.CreateWeightedAPIKey(t.Context(), bdb, "renderer", 3, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var got int
	h := identify(nil, bdb, nil, nil, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = exchangeFrom(r.Context()).weight
	}))
	h = observe(slog.New(slog.DiscardHandler), h)
	for _, tt := range []struct {
		name, key string
		want      int
	}{{"key of weight 3", key, 3}, {"no key", "", db.DefaultClientWeight}} {
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		if tt.key != "" {
			req.Header.Set("Authorization", "Bearer "+tt.key)
		}
		serve(h, req)
		if got != tt.want {
			t.Errorf("%s: weight %d, want %d", tt.name, got, tt.want)
		}
	}
}
