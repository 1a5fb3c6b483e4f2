package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// hogGate is a query hook, added after the share's, that holds the
// statements of the request with id "hog" until open is closed, and counts
// how many of them hold a place in the request's share at once.
type hogGate struct {
	mu      sync.Mutex
	n, most int
	held    chan struct{} // one value per hog statement that reached the gate
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

// TestRequestShare: a request of 50 aliased searches runs no more than its
// client's share of statements at once, and while it holds the whole share
// another client's request is answered.
func TestRequestShare(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{"testdata/pscp.csv"}})
		if err != nil || !sum.OK() {
			t.Fatalf("import: %+v, %v", sum, err)
		}
		gate := &hogGate{held: make(chan struct{}, 1000), open: make(chan struct{})}
		h := newTestServer(t, bdb.WithQueryHook(gate), Config{}).Handler()

		var q strings.Builder
		q.WriteString("{")
		for i := range 50 {
			fmt.Fprintf(&q, ` a%d: searchPapers(query: "th*", first: 1) { totalCount nodes { arxivId } }`, i)
		}
		q.WriteString(" }")
		hog := post(t, map[string]string{"query": q.String()}, mediaJSON)
		hog.Header.Set(requestIDHeader, "hog")
		hogDone := make(chan gqlResponse, 1)
		go func() {
			rec := serve(h, hog)
			var resp gqlResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
				t.Errorf("hog: decode %q: %v", rec.Body.String(), err)
			}
			hogDone <- resp
		}()
		for range DefaultStatementShare {
			<-gate.held
		}

		// From another client: the hog's client has its whole share.
		other := post(t, map[string]string{"query": `{ paper(id: "hep-th/9201001") { title } }`}, mediaJSON)
		other.RemoteAddr = "198.51.100.1:1234"
		resp := decode(t, serve(h, other))
		if len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), "Kontsevich") {
			t.Errorf("a request beside the hog: data %s, errors %+v", resp.Data, resp.Errors)
		}
		if got := gate.mostAtOnce(); got != DefaultStatementShare {
			t.Errorf("the hog held %d statements at once, want its share of %d", got, DefaultStatementShare)
		}

		close(gate.open)
		if resp := <-hogDone; len(resp.Errors) > 0 || strings.Count(string(resp.Data), "totalCount") != 50 {
			t.Errorf("hog: %d bytes of data, errors %+v; want 50 answers", len(resp.Data), resp.Errors)
		}
		if got := gate.mostAtOnce(); got != DefaultStatementShare {
			t.Errorf("the hog ran %d statements at once, want its share of %d", got, DefaultStatementShare)
		}
	})
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

// TestClientShare: the requests of one client together run no more than
// its share of statements at once, while another client's request is
// answered.
func TestClientShare(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.New(t, "sqlite"))
	sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{"testdata/pscp.csv"}})
	if err != nil || !sum.OK() {
		t.Fatalf("import: %+v, %v", sum, err)
	}
	gate := &hogGate{held: make(chan struct{}, 1000), open: make(chan struct{})}
	h := newTestServer(t, bdb.WithQueryHook(gate), Config{}).Handler()
	const hogs = 4
	var wg sync.WaitGroup
	for range hogs {
		req := post(t, map[string]string{"query": `{ a: searchPapers(query: "th*", first: 1) { totalCount } b: searchPapers(query: "co*", first: 1) { totalCount } }`}, mediaJSON)
		req.Header.Set(requestIDHeader, "hog")
		req.RemoteAddr = "192.0.2.66:1234"
		wg.Go(func() { serve(h, req) })
	}
	for range DefaultStatementShare {
		<-gate.held
	}
	other := post(t, map[string]string{"query": `{ paper(id: "hep-th/9201001") { title } }`}, mediaJSON)
	other.RemoteAddr = "198.51.100.1:1234"
	if resp := decode(t, serve(h, other)); len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), "Kontsevich") {
		t.Errorf("another client beside the hogs: data %s, errors %+v", resp.Data, resp.Errors)
	}
	close(gate.open)
	wg.Wait()
	if got := gate.mostAtOnce(); got != DefaultStatementShare {
		t.Errorf("%d requests of one client ran %d statements at once, want their share of %d", hogs, got, DefaultStatementShare)
	}
}
