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
	"net/netip"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/trace"

	"github.com/papergraph/papergraph/ask"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/notify"
	"github.com/papergraph/papergraph/ratelimit"
	"github.com/papergraph/papergraph/resolvers"
	"github.com/papergraph/papergraph/vector"
)

// Defaults for the Config fields left zero.
const (
	DefaultAddr         = ":8080"
	DefaultMaxDepth     = 12
	DefaultMaxBodyBytes = 1 << 20
	// DefaultShutdownGrace is how long a shutdown waits for the requests
	// in flight before it cancels them.
	DefaultShutdownGrace = 15 * time.Second
	// DefaultMaxAnswerMemory is the memory of the answers in flight over
	// the server: two answers of the largest size.
	DefaultMaxAnswerMemory = 256 << 20
)

// Timeouts of the HTTP server. A query gets less time than the response
// write, so that a slow query is cancelled (and its SQL with it) while its
// error can still reach the client.
const (
	readTimeout  = 15 * time.Second
	queryTimeout = 20 * time.Second
	writeTimeout = 30 * time.Second
	// abortWait bounds the wait for cancelled requests to answer.
	abortWait = 5 * time.Second
)

// Config is what New needs. DB is required; zero values of the other
// fields take the defaults above.
type Config struct {
	// Vectors is the vector index of paper embeddings that SEMANTIC and
	// HYBRID searches, exports and feeds, Paper.related and
	// Researcher.similar read; nil when there are none (HYBRID is then
	// the keyword search).
	Vectors *vector.Live
	// DB is the migrated database the API reads, in production
	// db.OpenReader's pool: the server never writes. The server counts
	// the statements it sends through it for /metrics (New leaves DB's
	// own hooks as they are).
	DB *bun.DB
	// Writer, when set, is the database mutations write (on SQLite
	// db.Open's one writer connection) and where API keys' last use is
	// recorded; nil serves a read-only database, whose mutations are
	// refused with READ_ONLY.
	Writer *bun.DB
	// ReadyDB answers /readyz, so that a busy DB does not make the server
	// look down: in production a db.OpenReader pool of one connection of
	// its own. Nil means DB.
	ReadyDB *bun.DB
	// TracerProvider, when set, receives a span for every HTTP request,
	// with the GraphQL operation's name on it, and one for every SQL
	// statement under it (OpenTelemetry). Nil: no tracing, at no cost.
	TracerProvider trace.TracerProvider
	// Replicas, when DB is a db.OpenReplicated pool, are its streaming
	// replicas, whose state /readyz and /metrics show.
	Replicas *db.Replicas
	// StatementSlots is how many statements the server runs on DB at
	// once, all clients together; zero means as many as DB has
	// connections. A client alone may use every slot; while statements
	// wait, the slots are shared among their clients by weight (see
	// db.Scheduler and identify).
	StatementSlots int
	// ShutdownGrace is how long Serve (and Run, on each of its listeners)
	// waits for requests in flight once its context ends; then it cancels
	// them with errShutdown and gives them abortWait to answer.
	ShutdownGrace time.Duration

	// Addr is the address Run listens on.
	Addr string
	// CORSOrigins are the browser origins allowed to call /graphql:
	// "*", "scheme://host:*" (any port) or "scheme://host[:port]".
	// Empty means DefaultCORSOrigins.
	CORSOrigins []string
	// MaxDepth, MaxNodes and MaxCost bound operations: deeper ones, ones
	// whose answer could hold more objects, or that cost more points, are
	// refused before they run (see the cost package).
	MaxDepth int
	MaxNodes int
	MaxCost  int
	// MaxServerSubscriptions bounds the subscriptions open at once over
	// the whole server (DefaultMaxServerSubscriptions when zero).
	MaxServerSubscriptions int
	// WebsocketWriteTimeout bounds one write to a WebSocket: a client
	// that stops reading has its connection closed once a write has
	// waited that long (DefaultWebsocketWriteTimeout when zero).
	WebsocketWriteTimeout time.Duration
	// MaxClientWebsockets and MaxWebsockets bound the WebSocket
	// connections open at once, of one client and of the whole server
	// (DefaultMaxClientWebsockets and DefaultMaxWebsockets when zero);
	// WebsocketIdleTimeout closes a connection that holds no subscription
	// that long (DefaultWebsocketIdleTimeout when zero).
	MaxClientWebsockets, MaxWebsockets int
	WebsocketIdleTimeout               time.Duration
	// MaxClientConns and MaxConns bound the TCP connections the API's
	// listener holds open, of one address (an IPv6 /64; a trusted
	// proxy's count only over the server) and of the whole server
	// (DefaultMaxClientConns and DefaultMaxConns when zero, the latter
	// lowered to the descriptors the process may open): one past them is
	// answered 429 or 503 when accepted, and closed.
	MaxClientConns, MaxConns int
	// HeaderTimeout is how long a connection may take to send a
	// request's headers, so how long one that sends nothing stays open
	// (DefaultHeaderTimeout when zero); IdleTimeout how long a keep-alive
	// connection may wait for its next request (DefaultIdleTimeout).
	HeaderTimeout, IdleTimeout time.Duration
	// MaxTokens, MaxFields, MaxAliases, MaxRootFields, MaxDirectives and
	// MaxConflicts bound a document before it is validated.
	MaxTokens, MaxFields, MaxAliases, MaxRootFields, MaxDirectives, MaxConflicts int
	// MaxAnswerBytes bounds the JSON of one answer's data: an answer stops
	// where it passes them, as it stops past MaxNodes objects.
	MaxAnswerBytes int
	// MaxAnswerMemory bounds the memory of the answers in flight over
	// the whole server, all requests together, each answer's byte counted
	// as the four it takes while it is built and encoded
	// (DefaultMaxAnswerMemory when zero): an operation waits up to a
	// second for its first share, and an answer that cannot grow stops
	// with SERVER_BUSY.
	MaxAnswerMemory int64
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// Logger receives one line per request; nil means slog.Default().
	Logger *slog.Logger
	// RateLimiter spends each GraphQL request's cost from its client's
	// hourly budget, refusing the request when too little remains; nil
	// turns rate limiting off.
	RateLimiter ratelimit.Limiter
	// APIKeys, when set, are the keys clients may send besides the
	// database's (db.CreateAPIKey): a request with one spends its key's
	// budget, one with another key is refused, one with none spends its
	// address's. The database's keys also sign a user in (see identify).
	APIKeys *ratelimit.Keys
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client whose address budget a request spends.
	TrustedProxies []netip.Prefix

	// DisableIntrospection refuses operations that select __schema or
	// __type, with the code INTROSPECTION_DISABLED.
	DisableIntrospection bool
	// DisableGraphiQL answers / with a 404 that points at /graphql
	// instead of GraphiQL.
	DisableGraphiQL bool
	// LLM, when set, is the language model that answers the ask field
	// from its passages, the askStream subscription and /ask (see
	// askStream); nil: they give passages alone.
	LLM *ask.LLM
	// DisableMCP turns the MCP endpoint at /mcp off (see newMCP). It is
	// off as well with TrustedDocuments, whose list its tools' documents
	// are not on.
	DisableMCP bool
	// MetricsAddr, when set, is the address Run serves /metrics on, and
	// the API's address does not serve it; Go's profiles are served there
	// too, under /debug/pprof/, and never on Addr. Empty: /metrics on
	// Addr, and no profiles.
	MetricsAddr string
	// Collectors are served on /metrics beside the server's own, such as
	// those of a harvest running in the process.
	Collectors []prometheus.Collector
	// Bus, when set, tells subscriptions what writers commit, and
	// /graphql takes WebSocket upgrades for them (see newWebsocket); nil:
	// no live updates.
	Bus *notify.Bus
	// TrustedDocuments, when not nil, are the only documents the API
	// runs, by document id (see ReadTrustedDocuments); New refuses ids
	// that are not their document's hash and documents that do not
	// validate.
	TrustedDocuments map[string]string

	// SiteURL is the base URL of the front end whose pages /sitemap.xml
	// lists (see ParseSiteURL); empty: /sitemap.xml and /sitemaps/ answer
	// 404, saying so.
	SiteURL string
	// sitemapSize and sitemapBatch are the URLs of one sitemap file and
	// of one statement reading it (sitemapMaxURLs and sitemapBatch when
	// zero).
	sitemapSize, sitemapBatch int

	// guards are the bounds the handlers share, which New makes.
	guards *guards
}

// Server is papergraph's HTTP server.
type Server struct {
	addr    string
	log     *slog.Logger
	grace   time.Duration
	handler http.Handler
	// base is the parent of every request's context, on every listener;
	// Abort cancels it with errShutdown, and with it their resolvers and
	// SQL.
	base  context.Context
	abort context.CancelCauseFunc
	// routes are the patterns handler serves (see routeMux).
	routes []string
	// metricsAddr and metrics are the separate /metrics listener, if any.
	metricsAddr string
	metrics     http.Handler
	// conns bounds the API listener's connections; headerTimeout and
	// idleTimeout close those that wait for a request.
	conns                      *connLimits
	headerTimeout, idleTimeout time.Duration
}

// New checks cfg, fills in its defaults and builds the server.
func New(cfg Config) (*Server, error) {
	if cfg.DB == nil {
		return nil, errors.New("server: no database")
	}
	cfg.setDefaults()
	if cfg.guards == nil {
		cfg.guards = newGuards(cfg)
	}
	var statements *db.StatementCounter
	cfg.DB, statements = countStatements(cfg.DB)
	cfg.DB = traceStatements(cfg.DB, cfg.TracerProvider)
	if cfg.ReadyDB == nil {
		cfg.ReadyDB = cfg.DB
	}
	cors, err := newCORSPolicy(cfg.CORSOrigins)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if cfg.SiteURL != "" {
		if cfg.SiteURL, err = ParseSiteURL(cfg.SiteURL); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	es := resolvers.NewSchema(cfg.DB)
	switch {
	case cfg.Bus != nil && cfg.Writer != nil:
		es = resolvers.NewLiveSchema(cfg.DB, cfg.Writer, cfg.Bus)
	case cfg.Bus != nil:
		es = resolvers.NewLiveSchema(cfg.DB, nil, cfg.Bus)
	case cfg.Writer != nil:
		es = resolvers.NewWritableSchema(cfg.DB, cfg.Writer)
	}
	var docs *trustedDocuments
	if cfg.TrustedDocuments != nil {
		if docs, err = newTrustedDocuments(es.Schema(), cfg.TrustedDocuments); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	sched := db.NewScheduler(cfg.DB, cfg.StatementSlots)
	m := newMetrics(statements, sched, cfg.Replicas)
	if docs != nil {
		m.names.known = docs.names
	}
	for _, c := range cfg.Collectors {
		if err := m.registry.Register(c); err != nil {
			return nil, fmt.Errorf("server: Collectors: %w", err)
		}
	}
	gql := withAsker(cfg.LLM, resolvers.Middleware(cfg.DB)(newGraphQL(es, cfg, docs)))
	api := cors.handler(m.instrument(limitBody(cfg.MaxBodyBytes, withTimeout(queryTimeout, rateHeaders(cfg.RateLimiter, gql)))))
	if cfg.Bus != nil {
		ws := newWebsocket(es, cfg.DB, cfg, docs, newStreamCounts(cfg.MaxServerSubscriptions, cfg.WebsocketIdleTimeout))
		api = upgradeOr(cors, newWSSessions(cfg, m), rateHeaders(cfg.RateLimiter, withAsker(cfg.LLM, resolvers.Middleware(cfg.DB)(ws))), api)
	}
	mux := routes(cfg, es, api)
	if !cfg.DisableMCP && docs == nil {
		mux.Handle("POST /mcp", newMCP(api, cfg.MaxBodyBytes))
	}
	if docs == nil {
		mux.Handle("GET /ask", knownKey(askStream(api, cfg.LLM)))
	}

	base, abort := context.WithCancelCause(context.Background())
	s := &Server{
		addr: cfg.Addr, log: cfg.Logger, grace: cfg.ShutdownGrace, base: base, abort: abort,
		metricsAddr: cfg.MetricsAddr, conns: newConnLimits(cfg, m),
		headerTimeout: cfg.HeaderTimeout, idleTimeout: cfg.IdleTimeout,
	}
	if cfg.MetricsAddr == "" {
		mux.Handle("GET /metrics", m.handler())
	} else {
		metrics := http.NewServeMux()
		metrics.Handle("GET /metrics", m.handler())
		profiles(metrics)
		s.metrics = secureHeaders(metrics)
	}
	s.routes = mux.patterns
	s.handler = traceRequests(observe(cfg.Logger, secureHeaders(identify(cfg.APIKeys, cfg.DB, cfg.Writer, cfg.TrustedProxies, withShare(sched, withVectors(cfg.Vectors, mux))))), cfg.TracerProvider)
	return s, nil
}

// withVectors gives every request the vector index live.
func withVectors(live *vector.Live, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(resolvers.WithVectors(r.Context(), live)))
	})
}

// setDefaults fills in the fields left zero.
func (cfg *Config) setDefaults() {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if len(cfg.CORSOrigins) == 0 {
		cfg.CORSOrigins = DefaultCORSOrigins
	}
	for _, l := range []struct {
		v   *int
		def int
	}{
		{&cfg.MaxDepth, DefaultMaxDepth}, {&cfg.MaxNodes, DefaultMaxNodes}, {&cfg.MaxCost, DefaultMaxCost},
		{&cfg.MaxTokens, DefaultMaxTokens}, {&cfg.MaxFields, DefaultMaxFields}, {&cfg.MaxAliases, DefaultMaxAliases},
		{&cfg.MaxRootFields, DefaultMaxRootFields}, {&cfg.MaxDirectives, DefaultMaxDirectives}, {&cfg.MaxConflicts, DefaultMaxConflicts},
		{&cfg.MaxAnswerBytes, DefaultMaxAnswerBytes},
		{&cfg.MaxServerSubscriptions, DefaultMaxServerSubscriptions},
	} {
		if *l.v <= 0 {
			*l.v = l.def
		}
	}
	orDefault(&cfg.MaxAnswerMemory, max(DefaultMaxAnswerMemory, 8*int64(cfg.MaxAnswerBytes)))
	orDefault(&cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	orDefault(&cfg.ShutdownGrace, DefaultShutdownGrace)
	orDefault(&cfg.WebsocketWriteTimeout, DefaultWebsocketWriteTimeout)
	orDefault(&cfg.MaxClientWebsockets, DefaultMaxClientWebsockets)
	orDefault(&cfg.MaxWebsockets, DefaultMaxWebsockets)
	orDefault(&cfg.WebsocketIdleTimeout, DefaultWebsocketIdleTimeout)
	orDefault(&cfg.MaxClientConns, DefaultMaxClientConns)
	orDefault(&cfg.MaxConns, DefaultMaxConns)
	orDefault(&cfg.HeaderTimeout, DefaultHeaderTimeout)
	orDefault(&cfg.IdleTimeout, DefaultIdleTimeout)
	orDefault(&cfg.sitemapSize, sitemapMaxURLs)
	orDefault(&cfg.sitemapBatch, sitemapBatch)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
}

// orDefault sets *v to def when it is zero or less.
func orDefault[T ~int | ~int64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// routes are the server's paths but /metrics; api answers /graphql.
func routes(cfg Config, es graphql.ExecutableSchema, api http.Handler) *routeMux {
	mux := newRouteMux()
	if cfg.DisableGraphiQL {
		mux.HandleFunc("GET /{$}", noGraphiQL)
	} else {
		mux.Handle("GET /{$}", graphiql("/graphql"))
		mux.Handle("GET "+graphiqlFiles, graphiqlAssets())
	}
	mux.Handle("GET /graphql", cacheableGET(api))
	mux.Handle("POST /graphql", api)
	mux.Handle("OPTIONS /graphql", api)
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /schema.graphql", schemaSDL(es.Schema(), !cfg.DisableIntrospection))
	mux.Handle("GET /llms.txt", llms(cfg))
	mux.HandleFunc("GET /openapi.json", openAPI)
	mux.Handle("GET /readyz", readyz(cfg.ReadyDB, cfg.Replicas, cfg.Logger))
	// Exports spend the budgets GraphQL requests do (see spendPoints).
	exports := newRouteMux()
	handleExports(exports, cfg.DB, cfg.Logger)
	exports.Handle("GET /export/search", searchExport(cfg.DB, cfg.Logger))
	mux.mount("/export/", rateHeaders(cfg.RateLimiter, exports), exports)
	mux.Handle("GET /feeds/latest.atom", rateHeaders(cfg.RateLimiter, withTimeout(queryTimeout, latestFeed(cfg.DB, cfg.Logger))))
	sm := &sitemaps{db: cfg.DB, log: cfg.Logger, site: cfg.SiteURL, size: cfg.sitemapSize, batch: cfg.sitemapBatch}
	mux.Handle("GET /sitemap.xml", rateHeaders(cfg.RateLimiter, withTimeout(queryTimeout, http.HandlerFunc(sm.index))))
	mux.Handle("GET /sitemaps/{file}", rateHeaders(cfg.RateLimiter, http.HandlerFunc(sm.file)))
	return mux
}

// Handler returns the server's routes, for tests or for mounting the
// server in another one.
func (s *Server) Handler() http.Handler { return s.handler }

// MetricsHandler returns the routes of the separate metrics address, or nil
// when /metrics is one of Handler's routes.
func (s *Server) MetricsHandler() http.Handler { return s.metrics }

// Run listens on the configured address (and the metrics address, if
// any) and serves until ctx is cancelled.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	if s.metrics == nil {
		return s.Serve(ctx, ln)
	}
	mln, err := net.Listen("tcp", s.metricsAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("metrics: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	metricsDone := make(chan error, 1)
	go func() { metricsDone <- s.serve(ctx, mln, s.metrics, "metrics") }()
	err = s.Serve(ctx, ln)
	cancel()
	return errors.Join(err, <-metricsDone)
}

// Serve serves on ln until ctx is cancelled, then shuts down: it stops
// accepting connections and waits for the requests in flight, up to the
// grace period (Config.ShutdownGrace) or until Abort. Then it cancels the
// requests still running with errShutdown, so that their SQL stops and a
// streaming export ends with the line that says it is cut short, and
// waits a little (abortWait) for their answers before it closes their
// connections. It returns nil after a clean shutdown. A Server serves
// once.
//
// The connections ln accepts are bounded per client address and over
// the server (see Config.MaxClientConns); those past a bound are answered
// and closed at once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.conns.fitDescriptors()
	return s.serve(ctx, s.conns.listener(ln), s.handler, "api")
}

// serve is Serve for one listener, ln, that answers with handler; what
// names its routes in the log. Run serves the API and the metrics
// address with it, each with the same shutdown.
func (s *Server) serve(ctx context.Context, ln net.Listener, handler http.Handler, what string) error {
	// The requests' contexts keep ctx's values but not its cancellation,
	// which starts the shutdown; they end at the end of the grace period
	// or on Abort.
	base, cancelRequests := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelRequests(nil)
	stopAbort := context.AfterFunc(s.base, func() { cancelRequests(context.Cause(s.base)) })
	defer stopAbort()
	srv := &http.Server{
		BaseContext:       func(net.Listener) context.Context { return base },
		Handler:           handler,
		ReadHeaderTimeout: s.headerTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       s.idleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String(), "routes", what)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "routes", what, "grace", s.grace)
	graceCtx, cancel := context.WithTimeout(base, s.grace)
	defer cancel()
	if err := srv.Shutdown(graceCtx); err != nil {
		s.log.Warn("shutdown: cancelling the requests still running", "routes", what, "err", err)
		cancelRequests(errShutdown)
		// The cancelled requests still answer: a streaming export with
		// the line that says it is cut short, a query with its errors.
		abortCtx, cancel := context.WithTimeout(context.Background(), abortWait)
		defer cancel()
		if err := srv.Shutdown(abortCtx); err != nil {
			srv.Close()
			return fmt.Errorf("shutdown: %s requests still running %v after they were cancelled: %w", what, abortWait, err)
		}
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Abort cancels the requests in flight at once, as a second interrupt
// during a shutdown should.
func (s *Server) Abort() { s.abort(errShutdown) }

// withShare makes each request's statements take their slots from
// sched as its client's (see identify), at the client's weight.
func withShare(sched *db.Scheduler, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ex := exchangeFrom(r.Context())
		ctx, done := sched.Join(r.Context(), ex.client, ex.weight)
		defer done()
		next.ServeHTTP(w, r.WithContext(ctx))
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
