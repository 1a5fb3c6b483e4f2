package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
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
	// wsRetryAfter is the Retry-After of a refused upgrade: a place comes
	// free only when a connection closes, which no budget predicts, so a
	// client is told to wait about as long as a browser's reconnecting
	// client backs off.
	wsRetryAfter = 10 * time.Second
	// refusalLogEvery is the least time between two log lines about
	// refused upgrades: a flood of them must not become a flood of log
	// lines, and the counter holds the exact number.
	refusalLogEvery = time.Minute
)

// Close codes of graphql-transport-ws for what gqlgen closes with the
// generic 1002 (protocol error).
const (
	closeBadRequest  = 4400
	closeInitTimeout = 4408
	closeIdle        = websocket.StatusNormalClosure
)

// The bounds an upgrade is refused for, as the refusals counter's label
// and the X-RateLimit-Resource header name them.
const (
	boundClient = "websocket-client"
	boundServer = "websocket-server"
)

// wsSessions admits WebSocket connections: at most perClient open at
// once for one client and perServer for the whole server, each closed
// once it has held no subscription for idle.
type wsSessions struct {
	perClient, perServer int
	idle                 time.Duration
	refused              *prometheus.CounterVec
	log                  *refusalLog

	mu       sync.Mutex
	total    int
	byClient map[string]int
}

// newWSSessions admits connections as cfg bounds them, counting the
// open ones and the refusals among m's collectors.
func newWSSessions(cfg Config, m *metrics) *wsSessions {
	a := &wsSessions{perClient: cfg.MaxClientWebsockets, perServer: cfg.MaxWebsockets,
		idle: cfg.WebsocketIdleTimeout, byClient: map[string]int{}, log: &refusalLog{log: cfg.Logger}}
	a.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "papergraph_websocket_refused_total",
		Help: "WebSocket upgrades refused with 429 before the upgrade, by the bound they were past: websocket-client or websocket-server.",
	}, []string{"bound"})
	m.registry.MustRegister(a.refused, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "papergraph_websockets_open",
		Help: "WebSocket connections open, all clients together.",
	}, func() float64 {
		a.mu.Lock()
		defer a.mu.Unlock()
		return float64(a.total)
	}))
	return a
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
	switch {
	case a.byClient[client] >= a.perClient:
		a.mu.Unlock()
		a.refuse(w, r, boundClient, a.perClient, "at most "+strconv.Itoa(a.perClient)+" WebSocket connections per client: close one first")
		return
	case a.total >= a.perServer:
		a.mu.Unlock()
		a.refuse(w, r, boundServer, a.perServer, "the server holds its most WebSocket connections: try again later")
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

// refuse answers an upgrade past bound, which allows limit connections,
// with 429 before any upgrade: a refusal then costs no WebSocket, no
// close handshake and no goroutine beyond the request's own, and the
// connection is closed with the answer. Its headers state the bound as
// the rate-limit headers state a budget, X-RateLimit-Resource naming it.
// A refusal is counted, and left out of the request log (see
// refusalLog), since a flood of them is what it defends against.
func (a *wsSessions) refuse(w http.ResponseWriter, r *http.Request, bound string, limit int, reason string) {
	exchangeFrom(r.Context()).quiet = true
	a.refused.WithLabelValues(bound).Inc()
	a.log.refused(r.Context(), bound)
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(int(wsRetryAfter/time.Second)))
	h.Set("X-RateLimit-Resource", bound)
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Used", strconv.Itoa(limit))
	h.Set("Connection", "close")
	http.Error(w, "WebSocket refused: "+reason, http.StatusTooManyRequests)
}

// refusalLog logs refused upgrades at most once every refusalLogEvery,
// with how many were refused since its last line.
type refusalLog struct {
	log *slog.Logger

	mu     sync.Mutex
	last   time.Time
	unsaid int
}

func (l *refusalLog) refused(ctx context.Context, bound string) {
	l.mu.Lock()
	l.unsaid++
	now := time.Now()
	if !l.last.IsZero() && now.Sub(l.last) < refusalLogEvery {
		l.mu.Unlock()
		return
	}
	n := l.unsaid
	l.last, l.unsaid = now, 0
	l.mu.Unlock()
	l.log.LogAttrs(ctx, slog.LevelWarn, "websocket: upgrades refused",
		slog.Int("refused", n), slog.String("bound", bound), slog.Duration("next_line_after", refusalLogEvery))
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
