package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Bounds of the TCP connections the API's listener holds open, whatever
// they carry: requests, keep-alive waits, WebSockets.
const (
	// DefaultMaxClientConns is the most connections one address (an IPv6
	// /64) holds open at once: an office behind one NAT address, each
	// browser with its six connections a host and its WebSockets, or a
	// server-side renderer's pool, stay far below it; one client cannot
	// take the server's file descriptors.
	DefaultMaxClientConns = 512
	// DefaultMaxConns is the most the server holds open, all addresses
	// together: above the WebSockets it holds (DefaultMaxWebsockets), and
	// lowered to fit the process's descriptor limit (see fitDescriptors).
	DefaultMaxConns = 16384
	// DefaultHeaderTimeout is how long a connection may take to send a
	// request's headers, the first request's as the next ones': a
	// connection that never sends one is closed after it.
	DefaultHeaderTimeout = 5 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait
	// for its next request.
	DefaultIdleTimeout = 2 * time.Minute
	// descriptorReserve are the descriptors kept beside the connections
	// for the database's pools, the metrics listener, files and logs.
	descriptorReserve = 256
	// connRetryAfter is the Retry-After of a refused connection: a place
	// comes free when a connection closes, which no budget predicts, so a
	// client waits as long as for a refused WebSocket.
	connRetryAfter = wsRetryAfter
	// refusalWrite bounds the write of a refusal, and refusalDrain the
	// wait for the client to read it and close (see refuse).
	refusalWrite = time.Second
	refusalDrain = time.Second
	// refusalsDraining bounds the refused connections waiting for their
	// client at once: past it, a refused connection is closed at once, so
	// that refusals cannot hold the descriptors the bounds keep.
	refusalsDraining = 64
)

// The bounds a connection is refused for, as the refusals counter's label
// names them.
const (
	boundConnClient = "connection-client"
	boundConnServer = "connection-server"
)

// connLimits counts the connections a listener accepted by client address
// and over the server, and refuses those past perClient or perServer.
// Connections from trusted proxies carry many clients: only the server's
// bound counts them.
type connLimits struct {
	perClient, perServer int
	proxies              []netip.Prefix
	refused              *prometheus.CounterVec
	log                  *slog.Logger

	mu       sync.Mutex
	total    int
	byClient map[netip.Addr]int
	draining chan struct{}
	lastLog  time.Time
	unsaid   int
}

// newConnLimits bounds connections as cfg says, counting the open ones and
// the refusals among m's collectors.
func newConnLimits(cfg Config, m *metrics) *connLimits {
	l := &connLimits{perClient: cfg.MaxClientConns, perServer: cfg.MaxConns, proxies: cfg.TrustedProxies,
		log: cfg.Logger, byClient: map[netip.Addr]int{}, draining: make(chan struct{}, refusalsDraining)}
	l.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "papergraph_connections_refused_total",
		Help: "TCP connections refused when accepted, by the bound they were past: connection-client or connection-server.",
	}, []string{"bound"})
	m.registry.MustRegister(l.refused, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "papergraph_connections_open",
		Help: "TCP connections open on the API's listener, all clients together.",
	}, func() float64 {
		l.mu.Lock()
		defer l.mu.Unlock()
		return float64(l.total)
	}))
	return l
}

// connClient is the address a connection counts against: its peer's, an
// IPv6 peer's /64 (one host holds many of those addresses), the zero
// Addr for a peer that is no IP (a Unix socket's) or a trusted proxy.
func (l *connLimits) connClient(addr net.Addr) netip.Addr {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return netip.Addr{}
	}
	a := ap.Addr().Unmap().WithZone("")
	for _, p := range l.proxies {
		if p.Contains(a) {
			return netip.Addr{}
		}
	}
	if a.Is6() {
		return netip.PrefixFrom(a, 64).Masked().Addr()
	}
	return a
}

// admit counts c in, or says which bound it is past.
func (l *connLimits) admit(client netip.Addr) (bound string, limit int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case client.IsValid() && l.byClient[client] >= l.perClient:
		return boundConnClient, l.perClient
	case l.total >= l.perServer:
		return boundConnServer, l.perServer
	}
	l.total++
	if client.IsValid() {
		l.byClient[client]++
	}
	return "", 0
}

// leave counts a closed connection of client's out.
func (l *connLimits) leave(client netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if client.IsValid() {
		if l.byClient[client]--; l.byClient[client] <= 0 {
			delete(l.byClient, client)
		}
	}
}

// limitedListener is a net.Listener whose connections connLimits admits: Accept
// returns only admitted ones, and answers the others itself.
type limitedListener struct {
	net.Listener
	limits *connLimits
}

func (l *connLimits) listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, limits: l}
}

func (ln *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := ln.limits.connClient(c.RemoteAddr())
		bound, limit := ln.limits.admit(client)
		if bound == "" {
			return &limitedConn{Conn: c, limits: ln.limits, client: client}, nil
		}
		ln.limits.refuse(c, bound, limit)
	}
}

// limitedConn counts itself out when it closes, once: after a hijack (a
// WebSocket's) as before.
type limitedConn struct {
	net.Conn
	limits *connLimits
	client netip.Addr
	once   sync.Once
}

// CloseWrite and ReadFrom are the TCP connection's, which net/http uses
// to end a connection cleanly and to send files.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.limits.leave(c.client) })
	return err
}

// connRefusal is the answer to a connection past bound, which allows limit.
func connRefusal(bound string, limit int) []byte {
	status, reason := "429 Too Many Requests", "at most "+strconv.Itoa(limit)+" connections per client address: close one first"
	if bound == boundConnServer {
		status, reason = "503 Service Unavailable", "the server holds its most connections: try again later"
	}
	body := "connection refused: " + reason + "\n"
	return []byte("HTTP/1.1 " + status + "\r\n" +
		"Retry-After: " + strconv.Itoa(int(connRetryAfter/time.Second)) + "\r\n" +
		"X-RateLimit-Resource: " + bound + "\r\n" +
		"X-RateLimit-Limit: " + strconv.Itoa(limit) + "\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		"Connection: close\r\n\r\n" + body)
}

// refuse answers c, past bound, with a complete HTTP answer before it
// reads anything: 429 past the client's bound, as a refused WebSocket
// upgrade, 503 past the server's, each with Retry-After. Every HTTP
// client reads an answer that comes before its request is sent, and
// shows or backs off on it, where a connection closed at once looks
// like a network failure, which browsers and clients retry at once.
//
// Closing a connection with a request unread makes the kernel reset it,
// and the client may lose the answer: so c's writing half is closed and
// c is drained until its client closes, refusalDrain at most, by at most
// refusalsDraining connections at once; past them c is closed at once.
func (l *connLimits) refuse(c net.Conn, bound string, limit int) {
	l.refused.WithLabelValues(bound).Inc()
	l.logRefusal(bound)
	_ = c.SetWriteDeadline(time.Now().Add(refusalWrite))
	if _, err := c.Write(connRefusal(bound, limit)); err != nil {
		c.Close()
		return
	}
	select {
	case l.draining <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.draining }()
		defer c.Close()
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_ = c.SetReadDeadline(time.Now().Add(refusalDrain))
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// logRefusal logs refused connections at most once every refusalLogEvery,
// with how many were refused since its last line: a flood of them must
// not become a flood of log lines, and the counter holds the number.
func (l *connLimits) logRefusal(bound string) {
	l.mu.Lock()
	l.unsaid++
	now := time.Now()
	if !l.lastLog.IsZero() && now.Sub(l.lastLog) < refusalLogEvery {
		l.mu.Unlock()
		return
	}
	n := l.unsaid
	l.lastLog, l.unsaid = now, 0
	l.mu.Unlock()
	l.log.LogAttrs(context.Background(), slog.LevelWarn, "connections refused",
		slog.Int("refused", n), slog.String("bound", bound), slog.Duration("next_line_after", refusalLogEvery))
}

// errNoRlimit says the descriptor limit cannot be read on this system.
var errNoRlimit = errors.New("no descriptor limit")

// fitDescriptors lowers the server's bound to the descriptors the process
// may open, descriptorReserve kept for the rest, saying so in the log: past
// that limit accept fails, for every client alike.
func (l *connLimits) fitDescriptors() {
	limit, err := descriptorLimit()
	if err != nil || limit <= 0 {
		return
	}
	fit := max(int(min(limit, 1<<30))-descriptorReserve, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perServer <= fit {
		return
	}
	l.log.Warn("connections: the server's bound lowered to fit the process's descriptor limit",
		"max_conns", l.perServer, "lowered_to", fit, "descriptor_limit", limit)
	l.perServer = fit
}
