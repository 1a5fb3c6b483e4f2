package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// serveOn serves s on a listener of 127.0.0.1 until the test ends, and
// returns its address.
func serveOn(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// dialFrom opens a TCP connection to addr from the loopback address from
// (Linux routes all of 127.0.0.0/8 to the loopback), which ends with the
// test.
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 30 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	t.Cleanup(func() { c.Close() })
	// A bound on a test that fails, not a measure: every read below
	// waits for an event that comes far sooner.
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return c
}

// get sends GET path on c and reads the answer, whose body it returns.
func get(t *testing.T, c net.Conn, path string) (*http.Response, string) {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: papergraph\r\n\r\n"); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return readAnswer(t, bufio.NewReader(c), path)
}

func readAnswer(t *testing.T, r *bufio.Reader, path string) (*http.Response, string) {
	t.Helper()
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("GET %s: body: %v", path, err)
	}
	return res, string(body)
}

// One address holds at most MaxClientConns connections: the next one is
// answered 429, before it sends anything, with Retry-After and the bound,
// and closed, while another address is served; the refusal is counted,
// and a place freed is open again.
func TestConnectionsPerClient(t *testing.T) {
	addr := serveOn(t, sqliteServer(t, Config{MaxClientConns: 3, HeaderTimeout: time.Hour}))
	var held []net.Conn
	for range 3 {
		held = append(held, dialFrom(t, "127.0.0.1", addr))
	}
	extra := dialFrom(t, "127.0.0.1", addr)
	res, body := readAnswer(t, bufio.NewReader(extra), "(nothing sent)")
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "at most 3 connections per client address") {
		t.Errorf("fourth connection: %s %q, want 429 naming the bound", res.Status, body)
	}
	for k, v := range map[string]string{"Retry-After": "10", "X-RateLimit-Resource": boundConnClient, "X-RateLimit-Limit": "3"} {
		if got := res.Header.Get(k); got != v {
			t.Errorf("fourth connection: %s = %q, want %q", k, got, v)
		}
	}
	if _, err := extra.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("fourth connection after its answer: %v, want EOF", err)
	}

	other := dialFrom(t, "127.0.0.2", addr)
	if res, body := get(t, other, "/healthz"); res.StatusCode != http.StatusOK || body != "ok\n" {
		t.Errorf("another address: %s %q, want 200 ok", res.Status, body)
	}
	if _, body := get(t, other, "/metrics"); !strings.Contains(body, `papergraph_connections_refused_total{bound="connection-client"} 1`) ||
		!strings.Contains(body, "papergraph_connections_open 4") {
		t.Errorf("metrics lack one refusal and four connections open:\n%s", grepLines(body, "papergraph_connections"))
	}

	// The server counts the closed connection out once it reads its end.
	held[0].Close()
	waitUntil(t, "a place freed open again", func() bool {
		c := dialFrom(t, "127.0.0.1", addr)
		defer c.Close()
		res, _ := get(t, c, "/healthz")
		return res.StatusCode == http.StatusOK
	})
}

// waitUntil calls done until it is true, failing the test when it stays
// false for what bounds a test that fails.
func waitUntil(t *testing.T, what string, done func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); !done(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("never: %s", what)
		}
	}
}

// The whole server holds at most MaxConns connections: past them a new
// one is answered 503, whatever its address.
func TestConnectionsPerServer(t *testing.T) {
	addr := serveOn(t, sqliteServer(t, Config{MaxConns: 2}))
	a := dialFrom(t, "127.0.0.1", addr)
	b := dialFrom(t, "127.0.0.2", addr)
	for _, c := range []net.Conn{a, b} {
		if res, _ := get(t, c, "/healthz"); res.StatusCode != http.StatusOK {
			t.Fatalf("connection within the bound: %s", res.Status)
		}
	}
	res, body := readAnswer(t, bufio.NewReader(dialFrom(t, "127.0.0.3", addr)), "(nothing sent)")
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
		res.Header.Get("X-RateLimit-Resource") != boundConnServer {
		t.Errorf("third connection: %s %v %q, want 503 with Retry-After", res.Status, res.Header, body)
	}
}

// A trusted proxy carries many clients: its connections count only
// against the server's bound.
func TestConnectionsOfTrustedProxies(t *testing.T) {
	addr := serveOn(t, sqliteServer(t, Config{MaxClientConns: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}))
	for range 3 {
		if res, _ := get(t, dialFrom(t, "127.0.0.1", addr), "/healthz"); res.StatusCode != http.StatusOK {
			t.Fatalf("proxy's connection: %s, want 200", res.Status)
		}
	}
}

// A connection that never sends a request is closed after HeaderTimeout,
// and a keep-alive connection that sends no next request after
// IdleTimeout; each is then counted out.
func TestIdleConnectionsClosed(t *testing.T) {
	addr := serveOn(t, sqliteServer(t, Config{HeaderTimeout: 50 * time.Millisecond, IdleTimeout: 50 * time.Millisecond}))
	silent := dialFrom(t, "127.0.0.1", addr)
	if n, err := silent.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("connection that sends nothing: read %d bytes, %v, want the server's close", n, err)
	}
	kept := dialFrom(t, "127.0.0.2", addr)
	r := bufio.NewReader(kept)
	if _, err := io.WriteString(kept, "GET /healthz HTTP/1.1\r\nHost: papergraph\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if res, _ := readAnswer(t, r, "/healthz"); res.StatusCode != http.StatusOK || res.Close {
		t.Fatalf("keep-alive request: %s, close %v, want 200 kept alive", res.Status, res.Close)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("idle keep-alive connection: read %d bytes, %v, want the server's close", n, err)
	}
	waitUntil(t, "the closed connections counted out", func() bool {
		c := dialFrom(t, "127.0.0.3", addr)
		defer c.Close()
		_, body := get(t, c, "/metrics")
		return strings.Contains(body, "papergraph_connections_open 1\n")
	})
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
