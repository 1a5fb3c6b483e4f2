package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/demo"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/notify"
	"github.com/papergraph/papergraph/ratelimit"
	"github.com/papergraph/papergraph/server"
	"github.com/papergraph/papergraph/vector"
)

// serveFlags is serve's command line.
type serveFlags struct {
	dsn, addr, origins, redisURL, apiKeys, proxies, otlp *string
	loadDemo, logJSON                                    *bool
	rateLimit, maxNodes, maxCost, maxDepth               *int
	maxAnswer, answerMemory, memoryLimit                 *int
	clientWebsockets, websockets                         *int
	websocketIdle                                        *time.Duration
	clientConns, conns                                   *int
	headerTimeout, idleTimeout                           *time.Duration
	replicas                                             repeated
	maxLag, harvestEvery, vectorsRefresh                 *time.Duration
	prod                                                 production
	harvest                                              *harvestFlags
}

// parseServeFlags reads serve's command line and checks the harvest flags.
func parseServeFlags(args []string, stderr io.Writer) (*serveFlags, error) {
	fs, dsn := newFlags("serve", "serve [--db DSN] [--addr :8080] [--cors-origins LIST] [--rate-limit N] [--redis URL] [--demo=false]\n"+
		"       [--introspection=false] [--graphiql=false] [--mcp=false] [--metrics-addr ADDR] [--trusted-documents FILE]\n"+
		"       [--db-replica DSN]... [--replica-max-lag 10s] [--otlp-endpoint URL]", stderr)
	f := &serveFlags{dsn: dsn}
	f.addr = fs.String("addr", server.DefaultAddr, "listen address")
	f.origins = fs.String("cors-origins", "", "comma-separated origins browsers may call the API from\n(scheme://host, scheme://host:port or scheme://host:* for any port; * for all);\nempty: "+strings.Join(server.DefaultCORSOrigins, ", "))
	f.loadDemo = fs.Bool("demo", true, "load the demo data set into an empty, writable SQLite database first")
	f.logJSON = fs.Bool("log-json", false, "log JSON lines instead of text")
	f.rateLimit = fs.Int("rate-limit", ratelimit.DefaultLimit, "`points` each client may spend per hour; 0 turns rate limiting off")
	f.redisURL = fs.String("redis", "", "share rate limits with every process that uses the Redis at `URL`\n(redis://[user:password@]host:port/db); empty: each process keeps its own")
	f.maxNodes = fs.Int("max-nodes", server.DefaultMaxNodes, "refuse queries whose answer could hold more than `N` objects")
	f.maxCost = fs.Int("max-cost", server.DefaultMaxCost, "refuse queries that cost more than `N` points")
	f.maxDepth = fs.Int("max-depth", server.DefaultMaxDepth, "refuse queries nested deeper than `N` fields")
	f.maxAnswer = fs.Int("max-answer-bytes", server.DefaultMaxAnswerBytes, "stop an answer whose JSON passes `BYTES`, with ANSWER_TOO_LARGE and the data built so far")
	f.answerMemory = fs.Int("max-answer-memory", server.DefaultMaxAnswerMemory>>20,
		"`MiB` of memory for the answers in flight, all requests together (an answer's byte counts four);\n"+
			"an operation waits up to a second for its share, an answer that cannot grow stops with SERVER_BUSY")
	f.memoryLimit = fs.Int("memory-limit", 0, "the Go runtime's soft memory limit in `MiB`, past which it collects as often as it must;\n0: GOMEMLIMIT when set, else 320 (raise it with --max-answer-memory)")
	f.clientWebsockets = fs.Int("max-client-websockets", server.DefaultMaxClientWebsockets, "WebSocket connections one client may hold open at once; more are refused with 429 before the upgrade")
	f.websockets = fs.Int("max-websockets", server.DefaultMaxWebsockets, "WebSocket connections the server holds open at once, all clients together")
	f.websocketIdle = fs.Duration("websocket-idle-timeout", server.DefaultWebsocketIdleTimeout, "close a WebSocket connection that holds no subscription for `DURATION`")
	f.clientConns = fs.Int("max-client-conns", server.DefaultMaxClientConns, "TCP connections one address (an IPv6 /64) may hold open at once; more are answered 429 and closed\n"+
		"(a --trusted-proxies address counts only against --max-conns)")
	f.conns = fs.Int("max-conns", server.DefaultMaxConns, "TCP connections the server holds open at once, all addresses together; more are answered 503 and closed\n"+
		"(lowered to fit the process's descriptor limit)")
	f.headerTimeout = fs.Duration("header-timeout", server.DefaultHeaderTimeout, "close a connection that has not sent a request's headers within `DURATION`")
	f.idleTimeout = fs.Duration("idle-timeout", server.DefaultIdleTimeout, "close a keep-alive connection that sends no next request within `DURATION`")
	f.apiKeys = fs.String("api-keys", "", "API keys clients may send, one a line (the key, or sha256:HEX of it), in `FILE`:\na request with one spends its key's budget, with another is refused")
	f.proxies = fs.String("trusted-proxies", "", "comma-separated `CIDRs` of proxies whose X-Forwarded-For names the client")
	fs.Var(&f.replicas, "db-replica", "read from the PostgreSQL streaming replica at `DSN` (repeatable); the primary (--db)\nserves reads while no replica keeps up")
	f.maxLag = fs.Duration("replica-max-lag", db.DefaultReplicaMaxLag, "skip a replica whose replay is further behind the primary than `DURATION`")
	f.otlp = fs.String("otlp-endpoint", "", "export OpenTelemetry traces over OTLP/HTTP to `URL` (http://collector:4318);\nempty: to OTEL_EXPORTER_OTLP_ENDPOINT if set, else no tracing")
	f.prod = productionFlags(fs)
	f.harvestEvery = fs.Duration("harvest-every", 0, "harvest arXiv's OAI-PMH interface at start and then every `DURATION` (6h, say),\n"+
		"one instance at a time; the harvest flags below apply; 0: never")
	f.harvest = addHarvestFlags(fs)
	f.vectorsRefresh = fs.Duration("vectors-refresh", embed.DefaultRefresh, "look every `DURATION` for papers another process (an import, papergraph embed) embedded,\n"+
		"and add them to the vector index searched")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if *f.clientConns <= 0 || *f.conns <= 0 || *f.headerTimeout <= 0 || *f.idleTimeout <= 0 {
		return nil, fmt.Errorf("%w: --max-client-conns, --max-conns, --header-timeout and --idle-timeout must be positive", errUsage)
	}
	if *f.maxAnswer <= 0 || *f.answerMemory <= 0 || *f.memoryLimit < 0 {
		return nil, fmt.Errorf("%w: --max-answer-bytes and --max-answer-memory must be positive, --memory-limit not negative", errUsage)
	}
	if *f.vectorsRefresh <= 0 {
		return nil, fmt.Errorf("%w: --vectors-refresh %s: want a positive interval", errUsage, *f.vectorsRefresh)
	}
	if *f.harvestEvery < 0 || *f.harvestEvery > 0 && db.ReadOnlyDSN(*dsn) {
		return nil, fmt.Errorf("%w: --harvest-every %s: want a positive interval and a writable database", errUsage, *f.harvestEvery)
	}
	if err := f.harvest.options().Check(); *f.harvestEvery > 0 && err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := f.harvest.embed.check(); err != nil {
		return nil, err
	}
	return f, nil
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	tuneGC(int64(*f.memoryLimit) << 20)
	var cfg server.Config
	tp, stopTracing, err := tracerProvider(ctx, *f.otlp)
	if err != nil {
		return err
	}
	defer stopTracing()
	cfg.TracerProvider = tp
	if err := f.prod.apply(&cfg, stderr); err != nil {
		return err
	}
	if err := clientFlags(&cfg, *f.apiKeys, *f.proxies); err != nil {
		return err
	}
	logger := f.logger(stderr)
	limiter, closeLimiter, err := newRateLimiter(ctx, *f.rateLimit, *f.redisURL, logger)
	if err != nil {
		return err
	}
	defer closeLimiter()
	closeDatabases, err := f.openDatabases(ctx, &cfg, stdout, stderr)
	if err != nil {
		return err
	}
	defer closeDatabases()
	if *f.origins != "" {
		cfg.CORSOrigins = strings.Split(*f.origins, ",")
	}
	cfg.Addr, cfg.Logger, cfg.RateLimiter = *f.addr, logger, limiter
	cfg.MaxNodes, cfg.MaxCost, cfg.MaxDepth = *f.maxNodes, *f.maxCost, *f.maxDepth
	cfg.MaxAnswerBytes, cfg.MaxAnswerMemory = *f.maxAnswer, int64(*f.answerMemory)<<20
	cfg.MaxClientWebsockets, cfg.MaxWebsockets, cfg.WebsocketIdleTimeout = *f.clientWebsockets, *f.websockets, *f.websocketIdle
	cfg.MaxClientConns, cfg.MaxConns = *f.clientConns, *f.conns
	cfg.HeaderTimeout, cfg.IdleTimeout = *f.headerTimeout, *f.idleTimeout
	var publish bun.IDB = cfg.DB
	if cfg.Writer != nil {
		publish = cfg.Writer
	}
	cfg.Bus = serveBus(*f.dsn, publish, logger)
	defer cfg.Bus.Close()
	cfg.Vectors = startVectors(ctx, cfg.DB, f.harvest.embed.config(), *f.vectorsRefresh, logger)
	var hm *harvestMetrics
	if *f.harvestEvery > 0 {
		hm = newHarvestMetrics()
		cfg.Collectors = hm.collectors()
	}
	srv, err := server.New(cfg)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if hm != nil {
		stopHarvest, err := f.startHarvest(ctx, cfg.Bus, cfg.Vectors, logger, hm)
		if err != nil {
			return err
		}
		defer stopHarvest()
	}
	fmt.Fprintf(stdout, "papergraph on %s: %s\n", redactDSN(*f.dsn), f.prod.where(*f.addr))
	stopped := make(chan struct{})
	defer close(stopped)
	go abortOnSecondSignal(ctx, stopped, srv)
	return srv.Run(ctx)
}

// logger is the server's logger, text or JSON lines as --log-json says.
func (f *serveFlags) logger(stderr io.Writer) *slog.Logger {
	if *f.logJSON {
		return slog.New(slog.NewJSONHandler(stderr, nil))
	}
	return slog.New(slog.NewTextHandler(stderr, nil))
}

// openDatabases opens the databases the server uses into cfg and prepares
// the database to serve (see prepareToServe); the function it returns
// closes them.
//
// The API reads through a pool of its own (spread over the replicas if
// there are any, see db.Replicas); /readyz has one more connection, so
// that a busy pool does not make it fail; mutations (signed-in users'
// follows) write through a writer, none when the database is opened
// read-only. All connect when first used, after prepareToServe.
func (f *serveFlags) openDatabases(ctx context.Context, cfg *server.Config, stdout, stderr io.Writer) (func(), error) {
	var opened []*bun.DB
	closeAll := func() {
		for i := len(opened) - 1; i >= 0; i-- {
			opened[i].Close()
		}
	}
	reader, set, err := openServingPool(*f.dsn, f.replicas, *f.maxLag)
	if err != nil {
		return nil, err
	}
	opened = append(opened, reader)
	probe, err := db.OpenReader(*f.dsn, 1)
	if err != nil {
		closeAll()
		return nil, err
	}
	opened = append(opened, probe)
	if err := prepareToServe(ctx, *f.dsn, *f.loadDemo, stdout, stderr); err != nil {
		closeAll()
		return nil, err
	}
	cfg.DB, cfg.ReadyDB, cfg.Replicas = reader, probe, set
	if !db.ReadOnlyDSN(*f.dsn) {
		writer, err := db.Open(*f.dsn)
		if err != nil {
			closeAll()
			return nil, err
		}
		opened = append(opened, writer)
		cfg.Writer = writer
	}
	return closeAll, nil
}

// startHarvest harvests every --harvest-every through a writer of its
// own, announcing what it writes on bus and adding the papers it embeds
// to live, the index the server searches (nil when it has none); the
// function it returns stops the harvest, waits for it and closes the
// writer.
func (f *serveFlags) startHarvest(ctx context.Context, bus *notify.Bus, live *vector.Live, logger *slog.Logger, hm *harvestMetrics) (func(), error) {
	writer, err := db.Open(*f.dsn)
	if err != nil {
		return nil, err
	}
	hctx, stop := context.WithCancel(ctx)
	harvested := make(chan struct{})
	go func() {
		defer close(harvested)
		o := f.harvest.options()
		o.OnCommit = publisher(hctx, bus, logger)
		harvestEvery(hctx, writer, *f.harvestEvery, o, f.harvest.embed, logger, hm, live)
	}()
	return func() {
		stop()
		<-harvested
		writer.Close()
	}, nil
}

// openServingPool opens the API's read pool on dsn, spread over the
// streaming replicas if there are any.
func openServingPool(dsn string, replicas []string, maxLag time.Duration) (*bun.DB, *db.Replicas, error) {
	if len(replicas) == 0 {
		reader, err := db.OpenReader(dsn, 0)
		return reader, nil, err
	}
	if !db.IsPostgresDSN(dsn) {
		return nil, nil, fmt.Errorf("%w: --db-replica needs a PostgreSQL --db", errUsage)
	}
	return db.OpenReplicated(dsn, 0, replicas, db.ReplicaOptions{MaxLag: maxLag})
}

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ",") }

func (r *repeated) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// prepareToServe migrates the database through the writer, loads the
// demo set into an empty, writable SQLite database if asked to and no
// import is running, and says whether an import is running or
// unfinished. The writer is closed before serving starts.
func prepareToServe(ctx context.Context, dsn string, loadDemo bool, stdout, stderr io.Writer) error {
	bdb, err := openDB(ctx, dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	importing, err := db.ImportRunning(ctx, bdb)
	if err != nil {
		return err
	}
	if loadDemo && importing == nil && !db.IsPostgres(bdb) && !db.ReadOnlyDSN(dsn) {
		if err := loadDemoIfEmpty(ctx, bdb, stdout, stderr); err != nil {
			return err
		}
	}
	// An import into an empty archive that is running, or was killed,
	// has the readers' indexes unbuilt (see db.BeginBulk). Ending its bulk
	// load here would race a running one, so serve only says so.
	if importing != nil {
		fmt.Fprintf(stderr, "papergraph: another papergraph import is writing to this database (%s): "+
			"serving what it has written so far; search and some lists may be slow or incomplete until it ends\n", importing)
	} else if open, err := db.BulkOpen(ctx, bdb); err != nil {
		return err
	} else if open {
		fmt.Fprintln(stderr, "papergraph: an import into this database was stopped before it finished: search and some lists are slow or empty "+
			"until it ends: run it again, or run `papergraph migrate` to end it with what it wrote")
	}
	return nil
}

// abortOnSecondSignal waits for the interrupt that ended ctx to come again
// during the shutdown, and then cancels the requests still running.
func abortOnSecondSignal(ctx context.Context, stopped <-chan struct{}, srv *server.Server) {
	select {
	case <-ctx.Done():
	case <-stopped:
		return
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	select {
	case <-again:
		srv.Abort()
	case <-stopped:
	}
}

// clientFlags reads the API keys file and the trusted proxies into cfg.
func clientFlags(cfg *server.Config, keysFile, proxies string) error {
	if keysFile != "" {
		f, err := os.Open(keysFile)
		if err != nil {
			return fmt.Errorf("%w: --api-keys: %v", errUsage, err)
		}
		defer f.Close()
		if cfg.APIKeys, err = ratelimit.LoadKeys(f); err != nil {
			return fmt.Errorf("%w: --api-keys %s: %v", errUsage, keysFile, err)
		}
	}
	for _, p := range strings.Split(proxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return fmt.Errorf("%w: --trusted-proxies: %q is not an address or CIDR", errUsage, p)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		cfg.TrustedProxies = append(cfg.TrustedProxies, prefix.Masked())
	}
	return nil
}

// Rate limits shared through Redis live under redisPrefix; while Redis
// fails, each process spends its own budgets and asks Redis again after
// redisRetry.
const (
	redisPrefix = "papergraph:"
	redisRetry  = 5 * time.Second
)

// newRateLimiter builds the limiter of limit points per hour that serve's
// flags ask for (nil for limit 0), and a function that releases it.
func newRateLimiter(ctx context.Context, limit int, redisURL string, logger *slog.Logger) (ratelimit.Limiter, func() error, error) {
	noop := func() error { return nil }
	if limit < 0 {
		return nil, noop, fmt.Errorf("%w: --rate-limit %d: want a number of points per hour, or 0 for no limit", errUsage, limit)
	}
	if limit == 0 {
		return nil, noop, nil
	}
	local, err := ratelimit.NewMemory(limit, 0)
	if err != nil {
		return nil, noop, err
	}
	if redisURL == "" {
		return local, noop, nil
	}
	rdb, err := ratelimit.DialRedis(redisURL)
	if err != nil {
		return nil, noop, fmt.Errorf("%w: --redis %s: %v", errUsage, redactDSN(redisURL), err)
	}
	shared, err := ratelimit.NewRedis(rdb, redisPrefix, limit)
	if err != nil {
		rdb.Close()
		return nil, noop, err
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		logger.Warn("redis does not answer: each process keeps its own rate limits until it does",
			"redis", redactDSN(redisURL), "err", err)
	}
	return ratelimit.WithFallback(shared, local, redisRetry, logger), rdb.Close, nil
}

// loadDemoIfEmpty imports the demo set into a database without papers, so
// that a first start ends in a playground with real data.
func loadDemoIfEmpty(ctx context.Context, bdb *bun.DB, stdout, stderr io.Writer) error {
	s, err := db.ReadStats(ctx, bdb)
	if err != nil || s.Papers > 0 {
		return err
	}
	release, err := db.LockImport(ctx, bdb)
	if err != nil {
		return err
	}
	defer release()
	fmt.Fprintln(stdout, "empty database: loading the demo data set (about a quarter of a minute, once)")
	jobs := demo.Imports()
	for i, o := range jobs {
		o.SkipDerive = i < len(jobs)-1
		if _, err := runImport(ctx, bdb, o, stdout, stderr); err != nil {
			return err
		}
	}
	if _, err := runAnalysisImport(ctx, bdb, demo.Analyses(), stdout, stderr); err != nil {
		return err
	}
	return runEmbed(ctx, bdb, embed.Config{}, embed.BuiltinOptions{}, stdout, stderr)
}

// playgroundHost turns a listen address into a host:port to browse to.
func playgroundHost(addr string) string {
	if strings.HasPrefix(addr, ":") {
		return "localhost" + addr
	}
	return addr
}
