package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
)

// Bounds of the WebSocket connections themselves, beside those of their
// subscriptions.
const (
	// DefaultMaxClientWebsockets is the most WebSocket connections one
	// client (an address or an API key) holds open at once: enough for an
	// office of browser tabs behind one address, few enough that one
	// client cannot take the server's file descriptors.
	DefaultMaxClientWebsockets = 64
	// DefaultMaxWebsockets is the most the whole server holds open.
	DefaultMaxWebsockets = 8192
	// DefaultWebsocketIdleTimeout is how long a connection may stay open
	// without a subscription before it is closed.
	DefaultWebsocketIdleTimeout = time.Minute
	// maxRefusing bounds the refused connections waiting for their
	// close handshake; past it, upgrades are refused with a plain 429.
	maxRefusing = 64
)

// Close codes of graphql-transport-ws for what gqlgen closes with the
// generic 1002 (protocol error).
const (
	closeBadRequest  = 4400
	closeInitTimeout = 4408
	closeTooMany     = 4429
	closeIdle        = websocket.StatusNormalClosure
)

// wsSessions admits WebSocket connections: at most perClient open at
// once for one client and perServer for the whole server, each closed
// once it has held no subscription for idle.
type wsSessions struct {
	perClient, perServer int
	idle                 time.Duration

	mu       sync.Mutex
	total    int
	byClient map[string]int
	refusing int
}

func newWSSessions(cfg Config) *wsSessions {
	return &wsSessions{perClient: cfg.MaxClientWebsockets, perServer: cfg.MaxWebsockets,
		idle: cfg.WebsocketIdleTimeout, byClient: map[string]int{}}
}

// wsSession is one admitted connection. streams, its subscriptions, is
// guarded by the streamCounts' mutex; the rest by mu.
type wsSession struct {
	streams int

	mu    sync.Mutex
	conn  transport.WebsocketConn // once accepted
	timer *time.Timer             // runs while no subscription is open
}

type wsSessionKey struct{}

// sessionFrom returns the session of the connection ctx belongs to, or
// a fresh one outside any connection.
func sessionFrom(ctx context.Context) *wsSession {
	if s, ok := ctx.Value(wsSessionKey{}).(*wsSession); ok {
		return s
	}
	return new(wsSession)
}

// serve runs the connection r asks for through ws when client may open
// one more, and refuses it otherwise.
func (a *wsSessions) serve(w http.ResponseWriter, r *http.Request, client string, ws http.Handler) {
	a.mu.Lock()
	reason := ""
	switch {
	case a.byClient[client] >= a.perClient:
		reason = "at most " + strconv.Itoa(a.perClient) + " WebSocket connections per client: close one first"
	case a.total >= a.perServer:
		reason = "the server holds its most WebSocket connections: try again later"
	}
	if reason != "" {
		a.mu.Unlock()
		a.refuse(w, r, reason)
		return
	}
	a.byClient[client]++
	a.total++
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.total--
		if a.byClient[client]--; a.byClient[client] == 0 {
			delete(a.byClient, client)
		}
	}()
	s := new(wsSession)
	defer s.stopTimer()
	ws.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), wsSessionKey{}, s)))
}

// refuse accepts the upgrade only to close it at once with 4429 and
// reason, which a client's WebSocket API shows, where a refused upgrade
// shows nothing; when many refusals are under way it answers 429.
func (a *wsSessions) refuse(w http.ResponseWriter, r *http.Request, reason string) {
	a.mu.Lock()
	busy := a.refusing >= maxRefusing
	if !busy {
		a.refusing++
	}
	a.mu.Unlock()
	if busy {
		w.Header().Set("Retry-After", "10")
		http.Error(w, "WebSocket refused: "+reason, http.StatusTooManyRequests)
		return
	}
	defer func() {
		a.mu.Lock()
		a.refusing--
		a.mu.Unlock()
	}()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{"graphql-transport-ws", "graphql-ws"}, InsecureSkipVerify: true})
	if err != nil {
		return
	}
	_ = c.Close(closeTooMany, reason)
}

// accepted records the connection of s and starts its idle timer.
func (s *wsSession) accepted(c transport.WebsocketConn, idle time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn = c
	if idle > 0 {
		s.timer = time.AfterFunc(idle, func() {
			_ = c.WriteClose(int(closeIdle), "no subscription for "+idle.String())
		})
	}
}

// busy stops the idle timer while a subscription is open, and restarts
// it when the last one ends; streamCounts calls it under its mutex with
// the number of subscriptions now open.
func (s *wsSession) busy(streams int, idle time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer == nil {
		return
	}
	if streams > 0 {
		s.timer.Stop()
	} else {
		s.timer.Reset(idle)
	}
}

func (s *wsSession) stopTimer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
	}
}

// closeOnReadError closes with 4400 a connection whose client sent what
// is not a message of the protocol (or that failed otherwise); gqlgen
// would close it with 1000, as if all went well.
func closeOnReadError(ctx context.Context, err error) {
	var we transport.WebsocketError
	if !errors.As(err, &we) || !we.IsReadError {
		return
	}
	s := sessionFrom(ctx)
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		_ = c.WriteClose(closeBadRequest, "invalid message")
	}
}

// transportClose is the graphql-transport-ws close code for what gqlgen
// closes with 1002, read from its message: the protocol has codes of
// its own for them, which its clients act on.
func transportClose(subprotocol string, code int, message string) int {
	if subprotocol != "graphql-transport-ws" || code != int(websocket.StatusProtocolError) {
		return code
	}
	if message == "connection initialisation timeout" {
		return closeInitTimeout
	}
	return closeBadRequest
}
