package server

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
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

// dialRaw opens a graphql-transport-ws connection to srv, with no
// handshake.
func dialRaw(t *testing.T, ctx context.Context, srv *httptest.Server) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return conn
}

// One client holds at most MaxClientWebsockets connections; the next is
// closed at once with 4429, and a place freed is open again.
func TestWebsocketsPerClient(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.New(t, "sqlite"))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	srv := httptest.NewServer(newTestServer(t, bdb, Config{Bus: notify.NewLocal(), MaxClientWebsockets: 3}).Handler())
	defer srv.Close()
	var open []*wsClient
	for range 3 {
		open = append(open, dialWS(t, ctx, srv))
	}
	code, reason := closeStatus(t, ctx, dialRaw(t, ctx, srv))
	if code != closeTooMany || !strings.Contains(reason, "at most 3 WebSocket connections per client") {
		t.Errorf("fourth connection closed with %d %q, want %d and the bound", code, reason, closeTooMany)
	}
	open[0].conn.Close(websocket.StatusNormalClosure, "")
	// The place is given back once the server has seen the close.
	for {
		c := dialRaw(t, ctx, srv)
		if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_init"}`)); err != nil {
			t.Fatal(err)
		}
		_, msg, err := c.Read(ctx)
		if err == nil {
			if !strings.Contains(string(msg), "connection_ack") {
				t.Fatalf("got %s, want connection_ack", msg)
			}
			break
		}
		if websocket.CloseStatus(err) != closeTooMany {
			t.Fatalf("after a close: %v, want an ack or 4429", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A connection that holds no subscription is closed once the idle
// timeout passes.
func TestWebsocketIdleClosed(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.New(t, "sqlite"))
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
	bdb := dbtest.Open(t, dbtest.New(t, "sqlite"))
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
