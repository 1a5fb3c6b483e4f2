package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/notify"
)

// closeStatus reads from c until the server closes it, and returns the
// close frame's code and reason.
func closeStatus(t *testing.T, ctx context.Context, c *websocket.Conn) (websocket.StatusCode, string) {
	t.Helper()
	for {
		_, _, err := c.Read(ctx)
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Reason
		}
		if err != nil {
			t.Fatalf("read: %v, want a close frame", err)
		}
	}
}

// refusedUpgrade dials srv's WebSocket and returns the HTTP answer that
// refused the upgrade, nil when the upgrade was accepted (the connection
// is then closed).
func refusedUpgrade(t *testing.T, ctx context.Context, srv *httptest.Server) *http.Response {
	t.Helper()
	conn, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err == nil {
		conn.CloseNow()
		return nil
	}
	if res == nil {
		t.Fatalf("dial: %v, want an HTTP answer", err)
	}
	return res
}

// One client holds at most MaxClientWebsockets connections; the next is
// refused with 429 before the upgrade, its headers stating the bound,
// and a place freed is open again.
func TestWebsocketsPerClient(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	srv := httptest.NewServer(newTestServer(t, bdb, Config{Bus: notify.NewLocal(), MaxClientWebsockets: 3}).Handler())
	defer srv.Close()
	var open []*wsClient
	for range 3 {
		open = append(open, dialWS(t, ctx, srv))
	}
	res := refusedUpgrade(t, ctx, srv)
	if res == nil {
		t.Fatal("the fourth connection was upgraded, want 429")
	}
	want := map[string]string{
		"Retry-After": "10", "X-RateLimit-Resource": boundClient,
		"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "3",
	}
	if res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("fourth connection: %s, want 429", res.Status)
	}
	for k, v := range want {
		if got := res.Header.Get(k); got != v {
			t.Errorf("fourth connection: %s %q, want %q", k, got, v)
		}
	}
	if !res.Close {
		t.Error("the refusal leaves its connection open, want Connection: close")
	}
	if res.Header.Get("Upgrade") != "" {
		t.Errorf("a refusal carries Upgrade: %q", res.Header.Get("Upgrade"))
	}
	open[0].conn.Close(websocket.StatusNormalClosure, "")
	// The place is given back once the server has seen the close.
	for {
		res := refusedUpgrade(t, ctx, srv)
		if res == nil {
			break
		}
		if res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("after a close: %s, want an upgrade or 429", res.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockedBuffer is a log's output that handlers on many goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Refused upgrades are counted in /metrics, by the bound they were past,
// and logged in one line for many rather than a line each.
func TestWebsocketRefusalsCountedNotLogged(t *testing.T) {
	const refusals = 5
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var logged lockedBuffer
	s := newTestServer(t, bdb, Config{Bus: notify.NewLocal(), MaxClientWebsockets: 1,
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	dialWS(t, ctx, srv)
	for i := range refusals {
		if res := refusedUpgrade(t, ctx, srv); res == nil || res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("refusal %d: %v, want 429", i, res)
		}
	}
	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, want := range []string{
		`papergraph_websocket_refused_total{bound="websocket-client"} ` + strconv.Itoa(refusals),
		"papergraph_websockets_open 1",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	summaries, per := 0, 0
	for _, l := range lines {
		switch {
		case strings.Contains(l, "websocket: upgrades refused"):
			summaries++
		case strings.Contains(l, "status=429"):
			per++
		}
	}
	if summaries != 1 || per != 0 {
		t.Errorf("%d refusals logged %d summary lines and %d request lines, want 1 and 0:\n%s", refusals, summaries, per, logged.String())
	}
}

// A connection that holds no subscription is closed once the idle
// timeout passes.
func TestWebsocketIdleClosed(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	srv := httptest.NewServer(newTestServer(t, bdb, Config{Bus: notify.NewLocal(), WebsocketIdleTimeout: 50 * time.Millisecond}).Handler())
	defer srv.Close()
	c := dialWS(t, ctx, srv)
	code, reason := closeStatus(t, ctx, c.conn)
	if code != closeIdle || !strings.Contains(reason, "no subscription") {
		t.Errorf("idle connection closed with %d %q, want %d, no subscription", code, reason, closeIdle)
	}
}

// A message the protocol does not know closes the connection with
// graphql-transport-ws's 4400, not the generic 1002.
func TestWebsocketBadMessageCloseCode(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	srv := httptest.NewServer(newTestServer(t, bdb, Config{Bus: notify.NewLocal()}).Handler())
	defer srv.Close()
	c := dialWS(t, ctx, srv)
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(`{not json`)); err != nil {
		t.Fatal(err)
	}
	if code, reason := closeStatus(t, ctx, c.conn); code != closeBadRequest {
		t.Errorf("closed with %d %q, want %d", code, reason, closeBadRequest)
	}
}

func TestTransportClose(t *testing.T) {
	tests := []struct {
		subprotocol string
		code        int
		message     string
		want        int
	}{
		{"graphql-transport-ws", 1002, "connection initialisation timeout", closeInitTimeout},
		{"graphql-transport-ws", 1002, "decoding error", closeBadRequest},
		{"graphql-transport-ws", 1000, "terminated", 1000},
		{"graphql-ws", 1002, "decoding error", 1002},
	}
	for _, tt := range tests {
		if got := transportClose(tt.subprotocol, tt.code, tt.message); got != tt.want {
			t.Errorf("transportClose(%q, %d, %q) = %d, want %d", tt.subprotocol, tt.code, tt.message, got, tt.want)
		}
	}
}
