package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/papergraph/papergraph/retry"
)

// An adversarial run starts papergraph serve with its default limits on
// a fresh demo database, once per probe, and sends it an attack beside a
// well-behaved client that loops the README's first query: it reports
// whether the server lived, the most memory it held and what the other
// client saw.

// attackProbe is one attack: workers connections, each sending body in a loop.
type attackProbe struct {
	Name    string `json:"name"`
	Workers int    `json:"workers"`
	body    func(i int) []byte
}

// attackResult is what one probe on one database measured.
type attackResult struct {
	DB    string `json:"db"`
	Probe string `json:"probe"`
	// Alive says the server answered a query after the attack.
	Alive bool `json:"alive"`
	// PeakRSSMB is the child's VmHWM, the most resident memory it held
	// from its start.
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// Attacks are the attack's requests answered; Codes the error codes
	// their answers carried, by count.
	Attacks int            `json:"attacks"`
	Codes   map[string]int `json:"codes"`
	// Requests, P50Ms, P99Ms and Errors are the well-behaved client's.
	Requests int     `json:"requests"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	Errors   int     `json:"errors"`
	// FirstError is the first of those errors, for its cause.
	FirstError string `json:"first_error,omitempty"`
}

// adversarialProbes are the attacks: the answer bomb and the flood of
// failing documents, and a quiet probe with no attack, which gives the
// well-behaved client's latency alone.
func adversarialProbes() []attackProbe {
	bomb := func(aliases int) func(int) []byte {
		ids := make([]string, 1000)
		for i := range ids {
			ids[i] = "1411.4413"
		}
		var q strings.Builder
		q.WriteString("query($ids: [String!]!) {")
		for i := range aliases {
			fmt.Fprintf(&q, " p%d: papers(ids: $ids) { byline }", i)
		}
		q.WriteString(" }")
		b, _ := json.Marshal(map[string]any{"query": q.String(), "variables": map[string]any{"ids": ids}})
		return func(int) []byte { return b }
	}
	// The flood's documents are each new: 497 fields authors(first: N)
	// of one paper with differing N, which fail for their conflicts.
	failing := func(i int) []byte {
		var q strings.Builder
		fmt.Fprintf(&q, `query Probe%d { paper(id: "1411.4413") {`, i)
		for n := range 497 {
			fmt.Fprintf(&q, " authors(first: %d) { name }", n)
		}
		q.WriteString(" } }")
		b, _ := json.Marshal(map[string]any{"query": q.String()})
		return b
	}
	return []attackProbe{
		{Name: "quiet"},
		{Name: "bomb 50 aliases ×4", Workers: 4, body: bomb(50)},
		{Name: "bomb 200 aliases ×4", Workers: 4, body: bomb(200)},
		{Name: "failing documents ×32", Workers: 32, body: failing},
		{Name: "failing documents ×64", Workers: 64, body: failing},
	}
}

func cmdAdversarial(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("adversarial", stderr)
	adminDSN := fs.String("pg", defaultPG, "a PostgreSQL server (any database) to create the demo database on")
	bin := fs.String("papergraph", "", "the papergraph binary to serve (default: build ./cmd/papergraph)")
	dbs := fs.String("db", "sqlite,postgres", "comma-separated databases to serve from: sqlite, postgres")
	d := fs.Duration("duration", 10*time.Second, "how long each probe runs")
	first := fs.Int("first", 5, "the well-behaved client's $first")
	work := fs.String("work", "", "keep the SQLite database in `DIR` and the PostgreSQL one after the run, and reuse them\nwhen DIR holds one already (default: a new temporary directory, removed after)")
	only := fs.String("only", "", "comma-separated probes to run, by the first word of their name (quiet, bomb, failing)\nor their whole name; empty: all")
	var extra stringList
	fs.Var(&extra, "serve-flag", "a flag to give serve besides --rate-limit 0 (repeatable), to measure a setting")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New("adversarial takes no arguments")
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "adversarial: "+format+"\n", a...) }
	dir, cleanup, err := adversarialWorkDir(ctx, *work, bin, logf)
	if err != nil {
		return err
	}
	defer cleanup()
	admin, err := pgx.Connect(ctx, *adminDSN)
	if err != nil {
		return fmt.Errorf("--pg: %w", err)
	}
	defer admin.Close(context.Background())
	const pgDB = "papergraph_bench_adversarial"
	pgDSN, err := withDatabase(*adminDSN, pgDB)
	if err != nil {
		return err
	}
	sqliteFile := filepath.Join(dir, "papergraph.db")
	if err := demoDatabases(ctx, admin, *bin, dir, pgDB, pgDSN, sqliteFile, *work != "", logf); err != nil {
		return err
	}
	if *work == "" {
		defer admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{pgDB}.Sanitize()+" WITH (FORCE)")
	}
	ids, err := paperIDs(ctx, pgDSN)
	if err != nil {
		return err
	}
	papers, err := rotation(ids, minRotation, 1)
	if err != nil {
		return err
	}
	bodies := requestBodies(readmeQuery, papers, *first)
	var results []attackResult
	for _, name := range strings.Split(*dbs, ",") {
		dsn := map[string]string{"sqlite": sqliteFile, "postgres": pgDSN}[name]
		if dsn == "" {
			return fmt.Errorf("--db: unknown database %q", name)
		}
		for _, p := range adversarialProbes() {
			if !probeSelected(p.Name, *only) {
				continue
			}
			logf("%s: %s", name, p.Name)
			r, err := runProbe(ctx, dir, *bin, dsn, extra, p, bodies, *d)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", name, p.Name, err)
			}
			r.DB = name
			results = append(results, r)
		}
	}
	if err := attackTable(stderr, results); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"started": time.Now().UTC(), "duration_s": d.Seconds(), "first": *first,
		"serve_flags": append([]string{"--rate-limit", "0"}, extra...), "load": loadAverage("/proc"), "results": results})
}

// adversarialWorkDir returns the directory the run keeps its databases
// in: work, made when missing, or a new temporary one that cleanup
// removes. With *bin empty it builds papergraph there and sets *bin.
func adversarialWorkDir(ctx context.Context, work string, bin *string, logf func(string, ...any)) (dir string, cleanup func(), err error) {
	cleanup = func() {}
	if dir = work; dir == "" {
		if dir, err = os.MkdirTemp("", "papergraph-adversarial-"); err != nil {
			return "", cleanup, err
		}
		cleanup = func() { os.RemoveAll(dir) }
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", cleanup, err
	}
	if *bin == "" {
		*bin = filepath.Join(dir, "papergraph")
		logf("building papergraph")
		if err := buildPapergraph(ctx, *bin); err != nil {
			cleanup()
			return "", func() {}, err
		}
	}
	return dir, cleanup, nil
}

// demoDatabases imports the demo set into a new PostgreSQL database pgDB
// and SQLite file, or, when reuse and both are there, keeps them.
func demoDatabases(ctx context.Context, admin *pgx.Conn, bin, dir, pgDB, pgDSN, sqliteFile string, reuse bool, logf func(string, ...any)) error {
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", pgDB).Scan(&exists); err != nil {
		return err
	}
	if _, err := os.Stat(sqliteFile); reuse && exists && err == nil {
		logf("reusing %s and the database %s", sqliteFile, pgDB)
		return nil
	}
	_ = os.Remove(sqliteFile)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{pgDB}.Sanitize()+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{pgDB}.Sanitize()); err != nil {
		return err
	}
	logf("importing the demo set into PostgreSQL (%s) and SQLite", pgDB)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = quiet(ctx, dir, "import-pg", bin, "import", "--db", pgDSN, "demo") })
	wg.Go(func() { errs[1] = quiet(ctx, dir, "import-sqlite", bin, "import", "--db", sqliteFile, "demo") })
	wg.Wait()
	return errors.Join(errs...)
}

// probeSelected says whether the probe named name is among only, a
// comma-separated list of probe names or their first words; an empty list
// selects every probe.
func probeSelected(name, only string) bool {
	if only == "" {
		return true
	}
	first, _, _ := strings.Cut(name, " ")
	for _, o := range strings.Split(only, ",") {
		if o = strings.TrimSpace(o); o == name || o == first {
			return true
		}
	}
	return false
}

// defaultPG is the PostgreSQL the benchmarks use unless told otherwise.
const defaultPG = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// runProbe starts a server on dsn, runs p beside the well-behaved client
// for d and stops the server. The server runs with its default limits;
// only the rate limit is off, as for an attacker with many addresses,
// and so that the well-behaved client is not refused for its own pace.
func runProbe(ctx context.Context, dir, bin, dsn string, extra []string, p attackProbe, bodies [][]byte, d time.Duration) (attackResult, error) {
	good := benchClient(true)
	t, err := startServe(ctx, good, dir, bin, dsn, extra)
	if err != nil {
		return attackResult{}, err
	}
	defer stop(t)
	// The client's document is known to the server before the attack,
	// as a front end's is: the attack meets its requests, not its first.
	var warm struct{ Data map[string]any }
	if err := post(ctx, good, t.url, bodies[len(bodies)-1], &warm); err != nil {
		return attackResult{}, err
	}
	r := attackResult{Probe: p.Name, Codes: map[string]int{}}
	run, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var endAttack io.WriteCloser
	var report func() (attackReport, error)
	if p.Workers > 0 {
		if endAttack, report, err = startAttack(ctx, p.Name, t.url); err != nil {
			return r, err
		}
		defer endAttack.Close()
	}
	var lat []time.Duration
	for i := 0; run.Err() == nil; i++ {
		start := time.Now()
		var answer struct {
			Data   map[string]any
			Errors []any
		}
		err := post(run, good, t.url, bodies[i%len(bodies)], &answer)
		if run.Err() != nil {
			break
		}
		lat = append(lat, time.Since(start))
		if err != nil || len(answer.Errors) > 0 || answer.Data["paper"] == nil {
			r.Errors++
			switch {
			case r.FirstError != "":
			case err != nil:
				r.FirstError = firstLine(err.Error())
			case len(answer.Errors) > 0:
				r.FirstError = fmt.Sprintf("%.300v", answer.Errors)
			default:
				r.FirstError = "no paper"
			}
		}
	}
	if report != nil {
		endAttack.Close()
		a, err := report()
		if err != nil {
			return r, err
		}
		r.Attacks, r.Codes = a.Attacks, a.Codes
	}
	slices.Sort(lat)
	r.Requests, r.P50Ms, r.P99Ms = len(lat), ms(percentile(lat, 0.5)), ms(percentile(lat, 0.99))
	var after struct{ Data map[string]any }
	r.Alive = post(ctx, good, t.url, []byte(`{"query":"{ __typename }"}`), &after) == nil && after.Data != nil
	hwm, err := statusKB(t.cmd.Process.Pid, "VmHWM")
	if err != nil {
		return r, err
	}
	r.PeakRSSMB = round1(float64(hwm) / 1024)
	return r, nil
}

// startServe starts papergraph serve on dsn and waits until it answers.
// A free port may be taken by the time the server binds it (a load's
// connection from a loopback address may hold it), so a server that
// exits at start is started again on another.
func startServe(ctx context.Context, client *http.Client, dir, bin, dsn string, extra []string) (*target, error) {
	var err error
	for range 10 {
		addr := freePort()
		args := append([]string{"serve", "--db", dsn, "--addr", addr, "--rate-limit", "0", "--demo=false"}, extra...)
		t := &target{name: "papergraph-adversarial", url: "http://" + addr + "/graphql", cmd: exec.Command(bin, args...)}
		if err = start(dir, t); err != nil {
			return nil, err
		}
		if err = waitReady(ctx, client, t, time.Minute); err == nil {
			return t, nil
		}
		stop(t)
	}
	return nil, err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// attackTable writes the results as a table.
func attackTable(w io.Writer, rs []attackResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "db\tprobe\talive\tpeak RSS MB\tattacks\tclient reqs\tp50 ms\tp99 ms\tclient errors\tattack codes\t")
	for _, r := range rs {
		codes := make([]string, 0, len(r.Codes))
		for c, n := range r.Codes {
			codes = append(codes, fmt.Sprintf("%s %d", c, n))
		}
		slices.Sort(codes)
		fmt.Fprintf(tw, "%s\t%s\t%t\t%.0f\t%d\t%d\t%.1f\t%.1f\t%d\t%s\t\n", r.DB, r.Probe, r.Alive, r.PeakRSSMB,
			r.Attacks, r.Requests, r.P50Ms, r.P99Ms, r.Errors, strings.Join(codes, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rs {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s, %s: the client's first error: %s\n", r.DB, r.Probe, r.FirstError)
		}
	}
	return nil
}

// The attacks of papergraph-bench adversarial run in a process of their
// own (papergraph-bench attack, which the probe starts), as the idle
// floods do: reading the bomb's answers of tens of megabytes would
// otherwise share the Go scheduler and the collector with the client the
// probe times, and its latency would measure the attacker's work as well
// as the server's.

// attackReport is the line the attack writes once its standard input
// ends: the requests answered and the error codes their answers carried.
type attackReport struct {
	Attacks int            `json:"attacks"`
	Codes   map[string]int `json:"codes"`
}

// cmdAttack sends the --probe's attack to --url, each of its workers from
// an address of its own, until stdin ends, and then reports on stdout.
func cmdAttack(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("attack", stderr)
	name := fs.String("probe", "", "the adversarial probe's attack to send, by its whole name")
	u := fs.String("url", "", "the server's /graphql URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	i := slices.IndexFunc(adversarialProbes(), func(p attackProbe) bool { return p.Name == *name })
	if i < 0 || *u == "" {
		return fmt.Errorf("attack: want the whole name of a probe as --probe and a --url")
	}
	p := adversarialProbes()[i]
	run, cancel := context.WithCancel(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		cancel()
	}()
	r := attackReport{Codes: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := benchClient(false)
	for w := range p.Workers {
		wg.Go(func() {
			for i := w; run.Err() == nil; i += p.Workers {
				codes, err := attack1(run, client, *u, p.body(i))
				if run.Err() != nil {
					return
				}
				mu.Lock()
				r.Attacks++
				if err != nil {
					codes = []string{"transport: " + firstLine(err.Error())}
				}
				for _, c := range codes {
					r.Codes[c]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return json.NewEncoder(stdout).Encode(r)
}

// startAttack runs this program's attack subcommand for probe against u;
// closing the returned stdin ends it, and its report then comes on report.
func startAttack(ctx context.Context, probe, u string) (stdin io.WriteCloser, report func() (attackReport, error), err error) {
	cmd, stdin, stdout, err := startSelf(ctx, "attack", "--probe", probe, "--url", u)
	if err != nil {
		return nil, nil, err
	}
	return stdin, func() (attackReport, error) {
		var r attackReport
		derr := json.NewDecoder(stdout).Decode(&r)
		werr := cmd.Wait()
		if derr != nil {
			return r, errors.Join(fmt.Errorf("attack: %w", derr), werr)
		}
		return r, werr
	}, nil
}

// attack1 sends one attack request and returns the error codes of its
// answer, or its status when it is not JSON.
func attack1(ctx context.Context, client *http.Client, url string, body []byte) ([]string, error) {
	req, err := retry.PostJSON(ctx, url, "", body)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	errs, err := answerErrors(res.Body)
	if _, cerr := io.Copy(io.Discard, res.Body); err == nil && cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return []string{"HTTP " + strconv.Itoa(res.StatusCode)}, nil
	}
	if len(errs) == 0 {
		return []string{"answered"}, nil
	}
	codes := []string{}
	for _, e := range errs {
		if c := cmp.Or(e.Extensions.Code, "no code"); !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	return codes, nil
}

// answerError is the part of a GraphQL error the attack counts.
type answerError struct {
	Extensions struct{ Code string }
}

// answerErrors reads a GraphQL response's errors from r without decoding
// its data: the server writes the errors before the data (gqlgen's
// encoding of a response and the server's own writing of a large one
// both do), so the reader stops at the data's key, and the rest of an
// answer of tens of megabytes is only read, not decoded.
func answerErrors(r io.Reader) ([]answerError, error) {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, cmp.Or(err, errors.New("not a JSON object"))
	}
	var errs []answerError
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t {
		case "errors":
			if err := dec.Decode(&errs); err != nil {
				return nil, err
			}
		case "data":
			return errs, nil
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
	return errs, nil
}
