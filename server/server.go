// Package server serves papergraph over HTTP: the GraphQL API at /graphql,
// GraphiQL at /, network exports under /export/, health and readiness
// probes and Prometheus metrics.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/resolvers"
)

// Defaults for the Config fields left zero.
const (
	DefaultAddr          = ":8080"
	DefaultMaxDepth      = 12
	DefaultMaxComplexity = resolvers.ComplexityLimit
	DefaultMaxBodyBytes  = 1 << 20
	// DefaultStatementShare is how many SQL statements one request runs at
	// once: a share of the pool (db.SQLiteReaders, db.PostgresConns), so
	// that one request with hundreds of root fields leaves connections to
	// the others.
	DefaultStatementShare = 2
	// DefaultShutdownGrace is how long a shutdown waits for the requests
	// in flight before it cancels them.
	DefaultShutdownGrace = 15 * time.Second
)

// Timeouts of the HTTP server. A query gets less time than the response
// write, so that a slow query is cancelled (and its SQL with it) while its
// error can still reach the client.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	queryTimeout      = 20 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	// abortWait bounds the wait for cancelled requests to answer.
	abortWait = 5 * time.Second
)

// Config is what New needs. DB is required; zero values of the other
// fields take the defaults above.
type Config struct {
	// DB is the migrated database the API reads, in production
	// db.OpenReader's pool: the server never writes. New adds a query hook
	// to it that counts statements for /metrics.
	DB *bun.DB
	// ReadyDB answers /readyz, so that a busy DB does not make the server
	// look down: in production a db.OpenReader pool of one connection of
	// its own. Nil means DB.
	ReadyDB *bun.DB
	// StatementShare is how many statements one request may run at once
	// (see db.WithShare).
	StatementShare int
	// ShutdownGrace is how long Serve waits for requests in flight once
	// its context ends; then it cancels them.
	ShutdownGrace time.Duration

	// Addr is the address Run listens on.
	Addr string
	// CORSOrigins are the browser origins allowed to call /graphql:
	// "*", "scheme://host:*" (any port) or "scheme://host[:port]".
	// Empty means DefaultCORSOrigins.
	CORSOrigins []string
	// MaxDepth and MaxComplexity bound operations; deeper or more complex
	// ones are refused before they run.
	MaxDepth      int
	MaxComplexity int
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// Logger receives one line per request; nil means slog.Default().
	Logger *slog.Logger
}

// Server is papergraph's HTTP server.
type Server struct {
	addr    string
	log     *slog.Logger
	grace   time.Duration
	handler http.Handler
	// base is the context of every request Serve answers; abort cancels
	// it, and with it their resolvers and SQL.
	base  context.Context
	abort context.CancelFunc
}

// New checks cfg, fills in its defaults and builds the server.
func New(cfg Config) (*Server, error) {
	if cfg.DB == nil {
		return nil, errors.New("server: no database")
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if len(cfg.CORSOrigins) == 0 {
		cfg.CORSOrigins = DefaultCORSOrigins
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	if cfg.MaxComplexity <= 0 {
		cfg.MaxComplexity = DefaultMaxComplexity
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ReadyDB == nil {
		cfg.ReadyDB = cfg.DB
	}
	if cfg.StatementShare <= 0 {
		cfg.StatementShare = DefaultStatementShare
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	cors, err := newCORSPolicy(cfg.CORSOrigins)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}

	m := newMetrics(cfg.DB)
	gql := resolvers.Middleware(cfg.DB)(newGraphQL(cfg))
	api := cors.handler(m.instrument(limitBody(cfg.MaxBodyBytes, withTimeout(queryTimeout, gql))))

	mux := http.NewServeMux()
	mux.Handle("GET /{$}", graphiql("/graphql"))
	mux.Handle("GET /graphql", cacheableGET(api))
	mux.Handle("POST /graphql", api)
	mux.Handle("OPTIONS /graphql", api)
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /readyz", readyz(cfg.ReadyDB, cfg.Logger))
	mux.Handle("GET /metrics", m.handler())
	handleExports(mux, cfg.DB, cfg.Logger)
	mux.Handle("GET /export/search", searchExport(cfg.DB, cfg.Logger))

	base, abort := context.WithCancel(context.Background())
	return &Server{
		addr: cfg.Addr, log: cfg.Logger, grace: cfg.ShutdownGrace, base: base, abort: abort,
		handler: observe(cfg.Logger, withShare(cfg.StatementShare, mux)),
	}, nil
}

// Handler returns the server's routes, for tests or for mounting the
// server in another one.
func (s *Server) Handler() http.Handler { return s.handler }

// Run listens on the configured address and serves until ctx is cancelled.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx is cancelled, then shuts down: it stops
// accepting connections and waits for the requests in flight, up to the
// grace period (Config.ShutdownGrace) or until Abort. Then it cancels the
// requests still running, so that their SQL stops, and waits a little
// (abortWait) for their answers before it closes their connections. A
// Server serves once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		BaseContext:       func(net.Listener) context.Context { return s.base },
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String())

	select {
	case err := <-served:
		s.abort()
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "grace", s.grace)
	graceCtx, cancel := context.WithTimeout(s.base, s.grace)
	defer cancel()
	if err := srv.Shutdown(graceCtx); err != nil {
		s.log.Warn("shutdown: cancelling the requests still running", "err", err)
		s.abort()
		// The cancelled requests still answer, with their errors.
		abortCtx, cancel := context.WithTimeout(context.Background(), abortWait)
		defer cancel()
		if err := srv.Shutdown(abortCtx); err != nil {
			srv.Close()
			return fmt.Errorf("shutdown: requests still running %v after they were cancelled: %w", abortWait, err)
		}
	}
	s.abort()
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Abort cancels the requests in flight at once, as a second interrupt
// during a shutdown should.
func (s *Server) Abort() { s.abort() }

// withShare gives each request its share of the database's connections.
func withShare(n int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(db.WithShare(r.Context(), n)))
	})
}

// withTimeout cancels a request's context after d.
func withTimeout(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
