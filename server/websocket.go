package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/resolvers"
)

// Bounds of live updates over the WebSocket.
const (
	// MaxSubscriptions is the most subscriptions one connection, and one
	// client over all its connections, holds at once.
	MaxSubscriptions = 10
	// DefaultMaxServerSubscriptions is the most subscriptions the whole
	// server holds at once, all clients together: each costs a goroutine,
	// a connection's buffers and a statement per commit, so clients from
	// many addresses cannot together exhaust them.
	DefaultMaxServerSubscriptions = 1000
	// DefaultWebsocketWriteTimeout is how long one write to a WebSocket
	// may wait for its client to read before the connection is closed.
	DefaultWebsocketWriteTimeout = 10 * time.Second
	// wsPingInterval is how often the server pings an idle connection.
	wsPingInterval = 15 * time.Second
	// wsInitTimeout is how long a new connection has to send its
	// connection_init.
	wsInitTimeout = 10 * time.Second
)

// Error codes of the WebSocket.
const (
	codeNotSubscription  = "SUBSCRIPTIONS_ONLY"
	codeWebsocketOnly    = "WEBSOCKET_ONLY"
	codeTooManyStreams   = "TOO_MANY_SUBSCRIPTIONS"
	codeSubscriptionCost = codeCostLimit
)

// newWebsocket builds the handler of WebSocket upgrades of /graphql: the
// graphql-transport-ws protocol, subscriptions only, with newGraphQL's
// limits on documents, depth and cost, its introspection switch and its
// error presenter; each answer gets fresh loaders over bdb. It serves
// outside the query timeout and body limit of the HTTP chain, since a
// connection lives for as long as its client keeps it; but each write
// has cfg.WebsocketWriteTimeout to go out (see deadlineConn).
func newWebsocket(es graphql.ExecutableSchema, bdb bun.IDB, cfg Config, docs *trustedDocuments, streams *streamCounts) *handler.Server {
	srv := handler.New(es)
	srv.AddTransport(transport.Websocket{
		Implementation: writeDeadline{
			// upgradeOr has checked the Origin against the CORS
			// origins already.
			inner:   transport.CoderWebsocketImplementation{AcceptOptions: websocket.AcceptOptions{InsecureSkipVerify: true}},
			timeout: cfg.WebsocketWriteTimeout,
			idle:    cfg.WebsocketIdleTimeout,
		},
		KeepAlivePingInterval: wsPingInterval,
		PingPongInterval:      pongInterval(cfg.WebsocketWriteTimeout),
		InitTimeout:           wsInitTimeout,
		ErrorFunc:             closeOnReadError,
	})
	queries := newQueryCache(srv)
	srv.Use(subscriptionsOnly{})
	useIntrospection(srv, cfg)
	if docs != nil {
		srv.Use(docs)
	}
	srv.SetParserTokenLimit(cfg.MaxTokens)
	srv.Use(depthLimit{max: cfg.MaxDepth})
	srv.Use(newCostLimit(cfg, queries))
	srv.Use(streams)
	srv.Use(resolvers.EventLoaders{DB: bdb})
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(resolvers.Recover)
	return srv
}

// pongInterval is how often a graphql-transport-ws connection is pinged
// for a write timeout of writeTimeout. The client's pong comes after it
// has read every message sent before the ping, so a connection whose
// pong is two intervals late has left a write unread for longer than the
// write timeout allows, and is closed; that holds too when the messages
// fit in the buffers of the network, where no write ever waits.
func pongInterval(writeTimeout time.Duration) time.Duration {
	return writeTimeout / 3
}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// upgradeOr sends WebSocket upgrades to ws, as sessions admit them and
// without the HTTP server's read and write deadlines, and every other
// request to next. An upgrade from a
// browser page of an origin that is neither the server's own nor one
// cors allows is refused with 403, since a WebSocket is not bound by
// the browser's same-origin rules as a fetch is.
func upgradeOr(cors *corsPolicy, sessions *wsSessions, ws, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isUpgrade(r) {
			next.ServeHTTP(w, r)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r.Host) && !cors.allows(origin) {
			http.Error(w, "WebSocket refused: the origin "+strconv.Quote(origin)+" is not allowed to call this API", http.StatusForbidden)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		sessions.serve(w, r, exchangeFrom(r.Context()).client, ws)
	})
}

// sameOrigin reports whether origin is of host, the host (and port) the
// request was sent to.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}

// writeDeadline accepts connections through inner and bounds each write
// to them by timeout: gqlgen's transport writes without a deadline, so a
// client that never reads would hold the writing goroutine, and what it
// holds, for as long as the connection stays up. It starts each
// session's idle timer of idle.
type writeDeadline struct {
	inner   transport.WebsocketImplementation
	timeout time.Duration
	idle    time.Duration
}

func (d writeDeadline) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	c, err := d.inner.Accept(w, r, o)
	if err != nil {
		return nil, err
	}
	dc := &deadlineConn{WebsocketConn: c, timeout: d.timeout}
	sessionFrom(r.Context()).accepted(dc, d.idle)
	return dc, nil
}

// deadlineConn closes its connection when a write has not gone out
// within timeout, which ends the write with an error and the connection
// with it.
type deadlineConn struct {
	transport.WebsocketConn
	timeout time.Duration
}

var (
	_ transport.WebsocketReadLimiter   = (*deadlineConn)(nil)
	_ transport.WebsocketReadDeadliner = (*deadlineConn)(nil)
)

func (c *deadlineConn) WriteJSON(v any) error {
	timer := time.AfterFunc(c.timeout, func() { _ = c.WebsocketConn.Close() })
	err := c.WebsocketConn.WriteJSON(v)
	if !timer.Stop() && err == nil {
		err = errWriteTimeout
	}
	return err
}

// WriteClose closes with graphql-transport-ws's own code where gqlgen
// uses the generic protocol error.
func (c *deadlineConn) WriteClose(code int, message string) error {
	return c.WebsocketConn.WriteClose(transportClose(c.Subprotocol(), code, message), message)
}

// errWriteTimeout ends a connection whose client did not read a write
// within the write timeout.
var errWriteTimeout = errors.New("websocket write timed out: the client does not read")

// SetReadLimit and SetReadDeadline pass the transport's read bounds on
// to the connection, when it has them.
func (c *deadlineConn) SetReadLimit(limit int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(limit)
	}
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// subscriptionsOnly refuses queries and mutations over the WebSocket:
// they go over HTTP, where their answer is one response.
type subscriptionsOnly struct{}

func (subscriptionsOnly) ExtensionName() string { return "SubscriptionsOnly" }

func (subscriptionsOnly) Validate(graphql.ExecutableSchema) error { return nil }

func (subscriptionsOnly) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation != nil && opCtx.Operation.Operation != ast.Subscription {
		return refusal(codeNotSubscription, "only subscriptions go over the WebSocket; send %ss by HTTP POST or GET to /graphql", opCtx.Operation.Operation)
	}
	return nil
}

// noSubscriptions refuses subscriptions over HTTP: their events go over
// the WebSocket, and a GET or POST answer is one response, which would
// leave the subscription's stream running with nobody to read it.
type noSubscriptions struct{}

func (noSubscriptions) ExtensionName() string { return "NoSubscriptions" }

func (noSubscriptions) Validate(graphql.ExecutableSchema) error { return nil }

func (noSubscriptions) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation != nil && opCtx.Operation.Operation == ast.Subscription {
		return refusal(codeWebsocketOnly, "subscriptions go over the WebSocket at /graphql (graphql-transport-ws), not over HTTP")
	}
	return nil
}

// streamCounts bounds the subscriptions open at once: MaxSubscriptions
// per connection and per client (the rate limit's key), limit over the
// whole server. A subscription counts from its start until its stream
// ends or its operation's context does, whichever comes first.
type streamCounts struct {
	mu      sync.Mutex
	clients map[string]int
	total   int
	limit   int
	// idle is the sessions' idle timeout, restarted when a connection's
	// last subscription ends.
	idle time.Duration
}

func newStreamCounts(limit int, idle time.Duration) *streamCounts {
	return &streamCounts{clients: map[string]int{}, limit: limit, idle: idle}
}

func (*streamCounts) ExtensionName() string { return "SubscriptionCap" }

func (*streamCounts) Validate(graphql.ExecutableSchema) error { return nil }

func (s *streamCounts) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	conn := sessionFrom(ctx)
	client := exchangeFrom(ctx).client
	s.mu.Lock()
	if conn.streams >= MaxSubscriptions || s.clients[client] >= MaxSubscriptions {
		s.mu.Unlock()
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{refusal(codeTooManyStreams,
			"at most %d subscriptions at once, per connection and per client: complete one first", MaxSubscriptions)}})
	}
	if s.total >= s.limit {
		s.mu.Unlock()
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{refusal(codeTooManyStreams,
			"the server holds its most subscriptions (%d) at once: try again later", s.limit)}})
	}
	conn.streams++
	conn.busy(conn.streams, s.idle)
	s.clients[client]++
	s.total++
	s.mu.Unlock()
	release := sync.OnceFunc(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		conn.streams--
		conn.busy(conn.streams, s.idle)
		s.total--
		if s.clients[client]--; s.clients[client] == 0 {
			delete(s.clients, client)
		}
	})
	context.AfterFunc(ctx, release)
	responses := next(ctx)
	// The transport writes complete as soon as the stream ends, before it
	// cancels the operation's context: the place is given back first, so
	// that a client that subscribes again on reading complete finds it.
	return func(ctx context.Context) *graphql.Response {
		r := responses(ctx)
		if r == nil {
			release()
		}
		return r
	}
}
