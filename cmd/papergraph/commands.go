package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
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
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/ratelimit"
	"github.com/papergraph/papergraph/server"
)

// newFlags makes a flag set with the --db flag every command takes.
func newFlags(name, synopsis string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := os.Getenv("PAPERGRAPH_DB")
	if dsn == "" {
		dsn = db.DefaultDSN
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: papergraph %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs, fs.String("db", dsn, "database: SQLite file, sqlite:PATH or postgres:// URL (env PAPERGRAPH_DB)")
}

// parse parses args, turning flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

// openDB opens and migrates the database.
func openDB(ctx context.Context, dsn string) (*bun.DB, error) {
	bdb, err := db.Open(dsn)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, bdb); err != nil {
		bdb.Close()
		if errors.Is(err, db.ErrReadOnly) {
			return nil, fmt.Errorf("%s: the schema is not current and the database is read-only: "+
				"run `papergraph migrate` on it once with write access (without mode=ro or immutable=1): %w",
				redactDSN(dsn), err)
		}
		return nil, fmt.Errorf("%s: %w", redactDSN(dsn), err)
	}
	return bdb, nil
}

// redactDSN hides a password in a DSN shown in messages.
func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			if colon := strings.Index(dsn[i+3:at], ":"); colon >= 0 {
				return dsn[:i+3+colon] + ":***" + dsn[at:]
			}
		}
	}
	return dsn
}

func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("migrate", "migrate [--db DSN]", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	bdb, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	// An import that was stopped before its end left the readers' indexes
	// unbuilt, if it was a bulk load, and the derived figures stale: the
	// derive that ends an import ends them, at a cost that follows what
	// imports changed since the last one. Under a running import it would
	// race it.
	release, err := db.LockImport(ctx, bdb)
	if err != nil {
		return err
	}
	defer release()
	steps, err := ingest.DeriveSteps(ctx, bdb, nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "schema and derived figures are up to date")
	fmt.Fprintf(stdout, "derived figures by step: %s\n", stepTimes(steps))
	return nil
}

func cmdStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("stats", "stats [--db DSN] [--json]", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	bdb, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	s, err := db.ReadStats(ctx, bdb)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(s)
	}
	fmt.Fprintf(stdout, "papers        %d\nresearchers   %d\ninstitutions  %d\nauthorships   %d\ncitations     %d\n",
		s.Papers, s.Researchers, s.Institutions, s.Authorships, s.Citations)
	return nil
}

func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var help strings.Builder
	help.WriteString("import [--db DSN] [--max-errors N] [--batch N] FORMAT PATH... [+ FORMAT PATH...]...\n\n" +
		"Formats joined by + are read one after the other in one run, which derives the figures once, at\n" +
		"its end; into an empty archive the run is one bulk load, which builds the indexes once (faster\n" +
		"than one import a format: citations are counted before the full-text indexes exist). A file\n" +
		"named + is ./+.\n\nFORMAT is one of:\n")
	for _, f := range ingest.Formats() {
		fmt.Fprintf(&help, "  %-11s %s\n", f.Name, f.Reads)
	}
	help.WriteString("  demo        the demo data set shipped with papergraph (no PATH)\n\nFiles may be plain or gzip; .abs files may come in a tar.gz.")
	fs, dsn := newFlags("import", help.String(), stderr)
	maxErrors := fs.Int("max-errors", 0, "stop after N malformed records (0: never)")
	batch := fs.Int("batch", 2000, "records per transaction")
	var prof profiles
	fs.StringVar(&prof.cpu, "cpuprofile", "", "write a pprof CPU profile of the import to `FILE`")
	fs.StringVar(&prof.mem, "memprofile", "", "write a pprof heap profile to `FILE` at the Go heap's highest")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("%w: import needs a FORMAT", errUsage)
	}
	jobs, err := importJobs(fs.Args())
	if err != nil {
		return err
	}
	bdb, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	release, err := db.LockImport(ctx, bdb)
	if err != nil {
		return err
	}
	defer release()
	stopProfiles, err := prof.start(stderr)
	if err != nil {
		return err
	}
	failed := false
	announce := publisher(ctx, writerBus(*dsn, bdb), slog.New(slog.NewTextHandler(stderr, nil)))
	for i, o := range jobs {
		o.MaxErrors, o.BatchSize, o.OnCommit = *maxErrors, *batch, announce
		o.SkipDerive = i < len(jobs)-1 // one derive at the end of a run
		ok, err := runImport(ctx, bdb, o, stdout, stderr)
		if err != nil {
			stopProfiles()
			return err
		}
		failed = failed || !ok
	}
	if err := stopProfiles(); err != nil {
		return err
	}
	if failed {
		return errReported
	}
	return nil
}

// importSeparator joins the formats of one import run.
const importSeparator = "+"

// importJobs reads an import's arguments, FORMAT PATH... [+ FORMAT
// PATH...]..., into its jobs, in order.
func importJobs(args []string) ([]ingest.Options, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%w: import needs a FORMAT", errUsage)
	}
	var jobs []ingest.Options
	start := 0
	for i := 0; i <= len(args); i++ {
		if i < len(args) && args[i] != importSeparator {
			continue
		}
		group := args[start:i]
		start = i + 1
		if len(group) == 0 {
			return nil, fmt.Errorf("%w: %q must stand between two FORMAT PATH... groups", errUsage, importSeparator)
		}
		name, paths := group[0], group[1:]
		if name == "demo" {
			if len(paths) > 0 {
				return nil, fmt.Errorf("%w: import demo takes no paths", errUsage)
			}
			jobs = append(jobs, demo.Imports()...)
			continue
		}
		f, ok := ingest.FormatByName(name)
		if !ok {
			return nil, fmt.Errorf("%w: unknown format %q; run papergraph import -h for the list", errUsage, name)
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("%w: import %s needs at least one PATH", errUsage, name)
		}
		jobs = append(jobs, ingest.Options{Format: f, Paths: paths})
	}
	return jobs, nil
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("serve", "serve [--db DSN] [--addr :8080] [--cors-origins LIST] [--rate-limit N] [--redis URL] [--demo=false]\n"+
		"       [--introspection=false] [--graphiql=false] [--metrics-addr ADDR] [--trusted-documents FILE]\n"+
		"       [--db-replica DSN]... [--replica-max-lag 10s] [--otlp-endpoint URL]", stderr)
	addr := fs.String("addr", server.DefaultAddr, "listen address")
	origins := fs.String("cors-origins", "", "comma-separated origins browsers may call the API from\n(scheme://host, scheme://host:port or scheme://host:* for any port; * for all);\nempty: "+strings.Join(server.DefaultCORSOrigins, ", "))
	loadDemo := fs.Bool("demo", true, "load the demo data set into an empty, writable SQLite database first")
	logJSON := fs.Bool("log-json", false, "log JSON lines instead of text")
	rateLimit := fs.Int("rate-limit", ratelimit.DefaultLimit, "`points` each client may spend per hour; 0 turns rate limiting off")
	redisURL := fs.String("redis", "", "share rate limits with every process that uses the Redis at `URL`\n(redis://[user:password@]host:port/db); empty: each process keeps its own")
	maxNodes := fs.Int("max-nodes", server.DefaultMaxNodes, "refuse queries whose answer could hold more than `N` objects")
	maxCost := fs.Int("max-cost", server.DefaultMaxCost, "refuse queries that cost more than `N` points")
	maxDepth := fs.Int("max-depth", server.DefaultMaxDepth, "refuse queries nested deeper than `N` fields")
	maxAnswer := fs.Int("max-answer-bytes", server.DefaultMaxAnswerBytes, "stop an answer whose JSON passes `BYTES`, with ANSWER_TOO_LARGE and the data built so far")
	answerMemory := fs.Int("max-answer-memory", server.DefaultMaxAnswerMemory>>20,
		"`MiB` of memory for the answers in flight, all requests together (an answer's byte counts four);\n"+
			"an operation waits up to a second for its share, an answer that cannot grow stops with SERVER_BUSY")
	memoryLimit := fs.Int("memory-limit", 0, "the Go runtime's soft memory limit in `MiB`, past which it collects as often as it must;\n0: GOMEMLIMIT when set, else 1024")
	apiKeys := fs.String("api-keys", "", "API keys clients may send, one a line (the key, or sha256:HEX of it), in `FILE`:\na request with one spends its key's budget, with another is refused")
	proxies := fs.String("trusted-proxies", "", "comma-separated `CIDRs` of proxies whose X-Forwarded-For names the client")
	var replicas repeated
	fs.Var(&replicas, "db-replica", "read from the PostgreSQL streaming replica at `DSN` (repeatable); the primary (--db)\nserves reads while no replica keeps up")
	maxLag := fs.Duration("replica-max-lag", db.DefaultReplicaMaxLag, "skip a replica whose replay is further behind the primary than `DURATION`")
	otlp := fs.String("otlp-endpoint", "", "export OpenTelemetry traces over OTLP/HTTP to `URL` (http://collector:4318);\nempty: to OTEL_EXPORTER_OTLP_ENDPOINT if set, else no tracing")
	prod := productionFlags(fs)
	harvestEveryFlag := fs.Duration("harvest-every", 0, "harvest arXiv's OAI-PMH interface at start and then every `DURATION` (6h, say),\n"+
		"one instance at a time; the harvest flags below apply; 0: never")
	hf := addHarvestFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *maxAnswer <= 0 || *answerMemory <= 0 || *memoryLimit < 0 {
		return fmt.Errorf("%w: --max-answer-bytes and --max-answer-memory must be positive, --memory-limit not negative", errUsage)
	}
	tuneGC(int64(*memoryLimit) << 20)
	if *harvestEveryFlag < 0 || *harvestEveryFlag > 0 && db.ReadOnlyDSN(*dsn) {
		return fmt.Errorf("%w: --harvest-every %s: want a positive interval and a writable database", errUsage, *harvestEveryFlag)
	}
	if err := hf.options().Check(); *harvestEveryFlag > 0 && err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	var cfg server.Config
	tp, stopTracing, err := tracerProvider(ctx, *otlp)
	if err != nil {
		return err
	}
	defer stopTracing()
	cfg.TracerProvider = tp
	if err := prod.apply(&cfg, stderr); err != nil {
		return err
	}
	if err := clientFlags(&cfg, *apiKeys, *proxies); err != nil {
		return err
	}
	var handler slog.Handler = slog.NewTextHandler(stderr, nil)
	if *logJSON {
		handler = slog.NewJSONHandler(stderr, nil)
	}
	logger := slog.New(handler)
	limiter, closeLimiter, err := newRateLimiter(ctx, *rateLimit, *redisURL, logger)
	if err != nil {
		return err
	}
	defer closeLimiter()
	// The API reads through a pool of its own (spread over the replicas
	// if there are any, see db.Replicas); /readyz has one more
	// connection, so that a busy pool does not make it fail; mutations
	// (signed-in users' follows) write through a writer, none when the
	// database is opened read-only. All connect when first used, after
	// prepareToServe.
	reader, set, err := openServingPool(*dsn, replicas, *maxLag)
	if err != nil {
		return err
	}
	defer reader.Close()
	probe, err := db.OpenReader(*dsn, 1)
	if err != nil {
		return err
	}
	defer probe.Close()
	if err := prepareToServe(ctx, *dsn, *loadDemo, stdout, stderr); err != nil {
		return err
	}
	if !db.ReadOnlyDSN(*dsn) {
		writer, err := db.Open(*dsn)
		if err != nil {
			return err
		}
		defer writer.Close()
		cfg.Writer = writer
	}
	var list []string
	if *origins != "" {
		list = strings.Split(*origins, ",")
	}
	cfg.DB, cfg.ReadyDB, cfg.Replicas, cfg.Addr, cfg.CORSOrigins, cfg.Logger, cfg.RateLimiter = reader, probe, set, *addr, list, logger, limiter
	cfg.MaxNodes, cfg.MaxCost, cfg.MaxDepth = *maxNodes, *maxCost, *maxDepth
	cfg.MaxAnswerBytes, cfg.MaxAnswerMemory = *maxAnswer, int64(*answerMemory)<<20
	var publish bun.IDB = reader
	if cfg.Writer != nil {
		publish = cfg.Writer
	}
	cfg.Bus = serveBus(*dsn, publish, logger)
	defer cfg.Bus.Close()
	var hm *harvestMetrics
	if *harvestEveryFlag > 0 {
		hm = newHarvestMetrics()
		cfg.Collectors = hm.collectors()
	}
	srv, err := server.New(cfg)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if hm != nil {
		writer, err := db.Open(*dsn)
		if err != nil {
			return err
		}
		defer writer.Close()
		hctx, stopHarvest := context.WithCancel(ctx)
		harvested := make(chan struct{})
		go func() {
			defer close(harvested)
			o := hf.options()
			o.OnCommit = publisher(hctx, cfg.Bus, logger)
			harvestEvery(hctx, writer, *harvestEveryFlag, o, logger, hm)
		}()
		defer func() { stopHarvest(); <-harvested }()
	}
	fmt.Fprintf(stdout, "papergraph on %s: %s\n", redactDSN(*dsn), prod.where(*addr))
	stopped := make(chan struct{})
	defer close(stopped)
	go abortOnSecondSignal(ctx, stopped, srv)
	return srv.Run(ctx)
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
	return nil
}

// playgroundHost turns a listen address into a host:port to browse to.
func playgroundHost(addr string) string {
	if strings.HasPrefix(addr, ":") {
		return "localhost" + addr
	}
	return addr
}
