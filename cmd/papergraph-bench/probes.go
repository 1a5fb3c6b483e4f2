package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/coder/websocket"
	"github.com/jackc/pgx/v5"
)

// The probes ask a papergraph server, started with its default flags on a
// fresh demo database, whether one client can exhaust it: by holding
// WebSocket connections, by writing in parallel, by feeding its harvest a
// repository that never ends, and by a harvest that outruns its
// subscribers.

var probeNames = []string{"ws-idle", "http-idle", "follows", "repeat-token", "subscribers"}

// defaultProbeParallel is how many connections a flood dials at once by
// default: enough to keep the server's accept loop busy, few enough that
// the dialling goroutines, on the same cores as the server, do not starve
// it and measure the client's scheduling rather than the server's.
const defaultProbeParallel = 32

type probeOptions struct {
	bin        string
	pg         string // the PostgreSQL administration DSN, "" for SQLite only
	only       []string
	conns      int // ws-idle's connections from one address
	parallel   int // ws-idle's connections dialled at once
	serveFlags []string
	requests   int // follows' parallel requests
	aliases    int // follows per request
	records    int // subscribers' harvest
	listeners  int // subscribers' subscriptions
	pageSize   int // the local OAI-PMH repository's page
	harvestGap time.Duration
}

// probeRow is one figure of the table.
type probeRow struct {
	Database, Probe, Figure, Value string
}

func cmdProbe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("probe", stderr)
	var o probeOptions
	fs.StringVar(&o.bin, "papergraph", "", "the papergraph binary to probe; empty: build ./cmd/papergraph of this source tree")
	fs.StringVar(&o.pg, "db", "", "also probe PostgreSQL: a postgres:// `DSN` allowed to create and drop a database of its own")
	withSQLite := fs.Bool("sqlite", true, "probe SQLite (false: PostgreSQL alone, with --db)")
	only := fs.String("only", strings.Join(probeNames, ","), "the probes to run, comma-separated")
	fs.IntVar(&o.conns, "conns", 20000, "ws-idle, http-idle: idle WebSocket or keep-alive connections opened from one address")
	fs.IntVar(&o.parallel, "parallel", defaultProbeParallel, "ws-idle, http-idle: connections dialled at once (the flood, a process of its own, shares the host's cores with the server)")
	fs.Func("serve-flag", "a `flag` added to every papergraph serve the probes start, such as --metrics-addr=127.0.0.1:9091 to profile it; repeatable", func(v string) error {
		o.serveFlags = append(o.serveFlags, v)
		return nil
	})
	fs.IntVar(&o.requests, "requests", 22, "follows: parallel requests from one key")
	fs.IntVar(&o.aliases, "aliases", 50, "follows: aliased followResearcher mutations in each request")
	fs.IntVar(&o.records, "records", 20000, "subscribers: records the harvest writes")
	fs.IntVar(&o.listeners, "subscribers", 21, "subscribers: papersAdded subscriptions, each from an address of its own")
	fs.IntVar(&o.pageSize, "page", 1000, "records on a page of the local OAI-PMH repository")
	fs.DurationVar(&o.harvestGap, "harvest-delay", time.Second, "subscribers: the server's --harvest-delay (repeat-token runs harvest with its default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.parallel < 1 {
		return fmt.Errorf("--parallel %d: want at least 1", o.parallel)
	}
	o.only = strings.Split(*only, ",")
	for _, p := range o.only {
		if !slices.Contains(probeNames, p) {
			return fmt.Errorf("--only: unknown probe %q; the probes are %s", p, strings.Join(probeNames, ", "))
		}
	}
	work, err := os.MkdirTemp("", "papergraph-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if o.bin == "" {
		o.bin = filepath.Join(work, "papergraph")
		fmt.Fprintln(stderr, "probe: building papergraph")
		if err := buildPapergraph(ctx, o.bin); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "probe: load average %s, descriptors of this process: %s\n", loadAverage("/proc"), fdLimit("/proc/self"))
	var rows []probeRow
	if *withSQLite {
		sqlite := &probeDB{name: "SQLite", dsn: filepath.Join(work, "probe.db")}
		rows, err = runProbes(ctx, o, work, sqlite, rows, stderr)
	}
	if err == nil && o.pg != "" {
		var pg *probeDB
		pg, err = newPostgresProbeDB(ctx, o, work, stderr)
		if err == nil {
			defer pg.drop()
			rows, err = runProbes(ctx, o, work, pg, rows, stderr)
		}
	}
	if werr := probeTable(stdout, rows); err == nil {
		err = werr
	}
	return err
}

// probeDB is the fresh database the probes run on.
type probeDB struct {
	name, dsn string
	drop      func()
}

// newPostgresProbeDB creates a database of its own under --db and
// imports the demo set into it, as serve does into an empty SQLite file.
func newPostgresProbeDB(ctx context.Context, o probeOptions, work string, stderr io.Writer) (*probeDB, error) {
	name := fmt.Sprintf("papergraph_probe_%d", os.Getpid())
	dsn, err := withDatabase(o.pg, name)
	if err != nil {
		return nil, err
	}
	admin, err := pgx.Connect(ctx, o.pg)
	if err != nil {
		return nil, err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		admin.Close(ctx)
		return nil, err
	}
	p := &probeDB{name: "PostgreSQL", dsn: dsn, drop: func() {
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = admin.Exec(c, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		admin.Close(c)
	}}
	fmt.Fprintf(stderr, "probe: importing the demo set into %s\n", name)
	if err := quiet(ctx, work, "import-pg", o.bin, "import", "--db", dsn, "demo"); err != nil {
		p.drop()
		return nil, err
	}
	return p, nil
}

func runProbes(ctx context.Context, o probeOptions, work string, d *probeDB, rows []probeRow, log io.Writer) ([]probeRow, error) {
	add := func(probe string, figures []probeRow) {
		for _, f := range figures {
			f.Database, f.Probe = d.name, probe
			rows = append(rows, f)
			fmt.Fprintf(log, "probe: %s %s: %s = %s\n", d.name, probe, f.Figure, f.Value)
		}
	}
	keys := map[string]string{}
	for _, name := range []string{"probe-a", "probe-b"} {
		out, err := exec.CommandContext(ctx, o.bin, "apikey", "create", "--db", d.dsn, "--name", name).Output()
		if err != nil {
			return rows, fmt.Errorf("apikey create on %s: %w", d.name, err)
		}
		keys[name] = strings.TrimSpace(string(out))
	}
	srv, err := startProbeServer(ctx, o, work, d, "serve")
	if err != nil {
		return rows, err
	}
	stopped := false
	defer func() {
		if !stopped {
			stop(srv)
		}
	}()
	client := rotatingClient()
	paper, researchers, err := probeSubjects(ctx, client, srv.url, o.aliases)
	if err != nil {
		return rows, err
	}
	for _, p := range o.only {
		fmt.Fprintf(log, "probe: %s %s\n", d.name, p)
		var figures []probeRow
		switch p {
		case "ws-idle":
			figures, err = probeIdleFlood(ctx, o, "ws", srv, client, paper)
		case "http-idle":
			figures, err = probeIdleFlood(ctx, o, "http", srv, client, paper)
		case "follows":
			figures, err = probeFollows(ctx, o, srv, client, keys["probe-a"], keys["probe-b"], researchers)
		case "repeat-token":
			figures, err = probeRepeatToken(ctx, o, srv, client, d)
		}
		if err != nil {
			return rows, fmt.Errorf("%s %s: %w", d.name, p, err)
		}
		add(p, figures)
	}
	if slices.Contains(o.only, "subscribers") {
		stop(srv)
		stopped = true
		figures, err := probeSubscribers(ctx, o, work, d)
		if err != nil {
			return rows, fmt.Errorf("%s subscribers: %w", d.name, err)
		}
		add("subscribers", figures)
	}
	return rows, nil
}

// startProbeServer starts papergraph serve on d with its default flags
// but for the address and any extra flags, and waits until it answers.
func startProbeServer(ctx context.Context, o probeOptions, work string, d *probeDB, name string, extra ...string) (*target, error) {
	addr := freePort()
	args := append([]string{"serve", "--db", d.dsn, "--addr", addr}, extra...)
	args = append(args, o.serveFlags...)
	t := &target{name: strings.ToLower(d.name) + "-" + name, url: "http://" + addr + "/graphql", cmd: exec.Command(o.bin, args...)}
	if err := start(work, t); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, rotatingClient(), t, 5*time.Minute); err != nil {
		stop(t)
		log, _ := os.ReadFile(filepath.Join(work, t.name+".log"))
		return nil, fmt.Errorf("%w:\n%s", err, tail(log, 2000))
	}
	return t, nil
}

// rotatingClient is "another client": a new connection for each request,
// each from the next loopback address, so that its requests spend the
// rate-limit budgets of many addresses and never the flood's 127.0.0.1.
func rotatingClient() *http.Client {
	c := benchClient(false)
	c.Transport.(*http.Transport).DisableKeepAlives = true
	return c
}

// probeSubjects finds a paper for the README query and n researchers to
// follow.
func probeSubjects(ctx context.Context, client *http.Client, u string, n int) (string, []string, error) {
	var r struct {
		Data struct {
			SearchPapers struct{ Nodes []struct{ ArxivID string } }
		}
	}
	if err := post(ctx, client, u, []byte(`{"query":"{ searchPapers(first: 1) { nodes { arxivId } } }"}`), &r); err != nil {
		return "", nil, err
	}
	if len(r.Data.SearchPapers.Nodes) == 0 {
		return "", nil, errors.New("the demo database lists no paper")
	}
	var ids []string
	for c := 'a'; c <= 'z' && len(ids) < n; c++ {
		var rr struct {
			Data struct {
				SearchResearchers struct{ Nodes []struct{ ID string } }
			}
		}
		q := fmt.Sprintf(`{"query":"{ searchResearchers(query: \"%c\", first: 100) { nodes { id } } }"}`, c)
		if err := post(ctx, client, u, []byte(q), &rr); err != nil {
			return "", nil, err
		}
		for _, x := range rr.Data.SearchResearchers.Nodes {
			if !slices.Contains(ids, x.ID) && len(ids) < n {
				ids = append(ids, x.ID)
			}
		}
	}
	if len(ids) < n {
		return "", nil, fmt.Errorf("found %d researchers to follow, want %d", len(ids), n)
	}
	return r.Data.SearchPapers.Nodes[0].ArxivID, ids, nil
}

// latencies are the times of one client's requests.
type latencies struct {
	mu     sync.Mutex
	d      []time.Duration
	errors []string
}

func (l *latencies) add(d time.Duration, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d = append(l.d, d)
	if err != nil {
		l.errors = append(l.errors, err.Error())
	}
}

// summary is "p50 / p99 / max over n, e errors (the first)".
func (l *latencies) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := slices.Clone(l.d)
	slices.Sort(s)
	out := fmt.Sprintf("p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d", ms(percentile(s, 0.5)), ms(percentile(s, 0.99)), ms(percentile(s, 1)), len(s))
	if len(l.errors) > 0 {
		out += fmt.Sprintf(", %d errors (%.120s)", len(l.errors), l.errors[0])
	}
	return out
}

// meanwhile runs req over and over, its i-th time with i, timing each,
// until the function it returns is called.
func meanwhile(req func(i int) error) (*latencies, func()) {
	l := new(latencies)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			err := req(i)
			l.add(time.Since(start), err)
			time.Sleep(20 * time.Millisecond)
		}
	})
	return l, func() { close(stop); wg.Wait() }
}

// graphQL posts query with variables, and an API key when key is set; an
// answer with errors is an error naming the first one's code.
func graphQL(ctx context.Context, client *http.Client, u, key, query string, vars map[string]any, into any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	b, err := postJSON(ctx, client, u, key, body)
	if err != nil {
		return err
	}
	var r struct {
		Data   json.RawMessage
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("%d errors, the first %s: %s", len(r.Errors), r.Errors[0].Extensions.Code, r.Errors[0].Message)
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(r.Data, into)
}

// procFDs counts the open descriptors of process pid.
func procFDs(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

// fdLimit is the soft limit on open files of the process at dir.
func fdLimit(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "limits"))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Max open files") {
			f := strings.Fields(strings.TrimPrefix(line, "Max open files"))
			if len(f) > 0 {
				return f[0]
			}
		}
	}
	return "unknown"
}

// wsDial opens a graphql-transport-ws connection from source (nil: any)
// and initialises it; it returns the connection once acknowledged, or
// the close status, HTTP status or error that refused it.
func wsDial(ctx context.Context, wsURL string, source net.IP) (*websocket.Conn, string, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	if source != nil {
		tr.DialContext = (&net.Dialer{Timeout: 30 * time.Second, LocalAddr: &net.TCPAddr{IP: source}}).DialContext
	}
	c, res, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"}, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		if res != nil {
			return nil, "HTTP " + strconv.Itoa(res.StatusCode), nil
		}
		return nil, "", err
	}
	c.SetReadLimit(1 << 20)
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_init"}`)); err != nil {
		return nil, closeOutcome(err), nil
	}
	_, b, err := c.Read(ctx)
	if err != nil {
		return nil, closeOutcome(err), nil
	}
	if !bytes.Contains(b, []byte(`"connection_ack"`)) {
		c.CloseNow()
		return nil, "", fmt.Errorf("init answered %.100s", b)
	}
	return c, "", nil
}

// answerPings keeps an idle connection alive as an honest client does:
// it answers the server's graphql-transport-ws pings until the
// connection closes.
func answerPings(ctx context.Context, c *websocket.Conn) {
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		if bytes.Contains(b, []byte(`"ping"`)) {
			if c.Write(ctx, websocket.MessageText, []byte(`{"type":"pong"}`)) != nil {
				return
			}
		}
	}
}

// closeOutcome names the close status of a refused connection.
func closeOutcome(err error) string {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Sprintf("close %d", ce.Code)
	}
	return "error: " + err.Error()
}

// shortErr keeps the kind of a dial error, not its addresses, so that
// like errors count together.
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// probeFollows sends o.requests requests at once from key a, each
// following the same o.aliases researchers under aliases, while key b
// follows and unfollows a category; then it counts what a follows.
func probeFollows(ctx context.Context, o probeOptions, srv *target, client *http.Client, a, b string, researchers []string) ([]probeRow, error) {
	var m strings.Builder
	m.WriteString("mutation {")
	for i, id := range researchers {
		fmt.Fprintf(&m, " f%d: followResearcher(id: %q) { id }", i, id)
	}
	m.WriteString(" }")
	otherKey, stopOther := meanwhile(func(i int) error {
		verb := "followCategory"
		if i%2 == 1 {
			verb = "unfollowCategory"
		}
		return graphQL(ctx, client, srv.url, b, "mutation { "+verb+`(code: "hep-th") { code } }`, nil, nil)
	})
	burst := new(latencies)
	var wg sync.WaitGroup
	keyed := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: o.requests}}
	time.Sleep(500 * time.Millisecond) // the other key's first mutations run before the burst
	start := time.Now()
	for range o.requests {
		wg.Go(func() {
			t := time.Now()
			err := graphQL(ctx, keyed, srv.url, a, m.String(), nil, nil)
			burst.add(time.Since(t), err)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	time.Sleep(500 * time.Millisecond)
	stopOther()
	var v struct {
		Viewer struct {
			Following struct{ Researchers []struct{ ID string } }
		}
	}
	if err := graphQL(ctx, client, srv.url, a, "{ viewer { following { researchers { id } } } }", nil, &v); err != nil {
		return nil, err
	}
	got := map[string]int{}
	for _, r := range v.Viewer.Following.Researchers {
		got[r.ID]++
	}
	missing, twice := 0, 0
	for _, id := range researchers {
		switch got[id] {
		case 0:
			missing++
		case 1:
		default:
			twice++
		}
	}
	return []probeRow{
		{Figure: "requests from one key", Value: fmt.Sprintf("%d at once, %d follows each, all answered in %.1f s", o.requests, o.aliases, elapsed.Seconds())},
		{Figure: "those requests", Value: burst.summary()},
		{Figure: "researchers followed (want each once)", Value: fmt.Sprintf("%d listed, %d distinct of %d, %d missing, %d more than once", len(v.Viewer.Following.Researchers), len(got), len(researchers), missing, twice)},
		{Figure: "another key's mutation meanwhile", Value: otherKey.summary()},
	}, nil
}

// oaiRepository is a local OAI-PMH repository of generated arXivRaw
// records. With repeat, every page after the first gives the first
// page's resumption token again, with new records each time, forever.
type oaiRepository struct {
	records, pageSize int
	prefix            string // of the records' arXiv ids, 2611.
	repeat            bool
	gate              chan struct{} // the first request waits for it, when set
	mu                sync.Mutex
	requests, served  int
	ids               []string
	last              time.Time // when the last page was served
}

const repeatToken = "probe-page-2"

func (r *oaiRepository) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	q := req.URL.Query()
	offset := 0
	if tok := q.Get("resumptionToken"); tok != "" {
		if r.repeat {
			offset = r.served
		} else if offset, _ = strconv.Atoi(tok); offset <= 0 {
			http.Error(w, "bad token", http.StatusBadRequest)
			return
		}
	}
	end := offset + r.pageSize
	if !r.repeat {
		end = min(end, r.records)
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2026-11-28T12:00:00Z</responseDate>` +
		`<request verb="ListRecords">http://` + req.Host + `/oai</request><ListRecords>` + "\n")
	for i := offset; i < end; i++ {
		id := fmt.Sprintf("%s%05d", r.prefix, i+1)
		r.ids = append(r.ids, id)
		fmt.Fprintf(&b, `<record><header><identifier>oai:arXiv.org:%s</identifier><datestamp>2026-11-27</datestamp><setSpec>physics:hep-th</setSpec></header>`+
			`<metadata><arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/"><id>%s</id><submitter>Probe Author</submitter>`+
			`<version version="v1"><date>Fri, 27 Nov 2026 10:00:00 GMT</date><size>10kb</size><source_type>D</source_type></version>`+
			`<title>Probe record %d</title><authors>Ada Probe and B. Sample%d</authors><categories>hep-th</categories>`+
			`<abstract>A generated record of the probe, number %d.</abstract></arXivRaw></metadata></record>`+"\n", id, id, i+1, i%500, i+1)
	}
	r.served = end
	switch {
	case r.repeat:
		fmt.Fprintf(&b, `<resumptionToken cursor="%d">%s</resumptionToken>`, offset, repeatToken)
	case end < r.records:
		fmt.Fprintf(&b, `<resumptionToken cursor="%d" completeListSize="%d">%d</resumptionToken>`, offset, r.records, end)
	default:
		fmt.Fprintf(&b, `<resumptionToken cursor="%d" completeListSize="%d"/>`, offset, r.records)
		r.last = time.Now()
	}
	b.WriteString("</ListRecords></OAI-PMH>\n")
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	io.WriteString(w, b.String())
}

func (r *oaiRepository) listed() (requests int, ids []string, last time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, slices.Clone(r.ids), r.last
}

// probeRepeatToken runs papergraph harvest, with its default flags but
// --no-embed, against a repository that gives the same resumption token
// forever, and asks the server for every record it listed.
func probeRepeatToken(ctx context.Context, o probeOptions, srv *target, client *http.Client, d *probeDB) ([]probeRow, error) {
	repo := &oaiRepository{pageSize: 100, prefix: "2610.", repeat: true}
	hs := httptest.NewServer(repo)
	defer hs.Close()
	hctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(hctx, o.bin, "harvest", "--db", d.dsn, "--oai-url", hs.URL+"/oai", "--no-embed")
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	requests, ids, _ := repo.listed()
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	kept := 0
	for i := 0; i < len(ids); i += 100 {
		var r struct{ Papers []*struct{ ArxivID string } }
		if err := graphQL(ctx, client, srv.url, "", "query($ids: [String!]!) { papers(ids: $ids) { arxivId } }",
			map[string]any{"ids": ids[i:min(i+100, len(ids))]}, &r); err != nil {
			return nil, err
		}
		for _, p := range r.Papers {
			if p != nil {
				kept++
			}
		}
	}
	exit := "exit 0"
	if err != nil {
		exit = err.Error()
	}
	return []probeRow{
		{Figure: "harvest stopped after", Value: fmt.Sprintf("%.1f s, %d requests (%s)", elapsed.Seconds(), requests, exit)},
		{Figure: "its error", Value: lines[len(lines)-1]},
		{Figure: "records listed / kept", Value: fmt.Sprintf("%d / %d", len(ids), kept)},
	}, nil
}

// quietEnd is how long the subscribers probe waits, after the last page
// and the last event, before it counts what each subscriber received:
// far longer than an event takes to reach a subscriber that keeps up.
const quietEnd = 20 * time.Second

// probeSubscribers starts a server that harvests o.records records from a
// local repository once o.listeners subscribers, each from an address of
// its own, listen to papersAdded, and counts what each receives.
func probeSubscribers(ctx context.Context, o probeOptions, work string, d *probeDB) ([]probeRow, error) {
	repo := &oaiRepository{records: o.records, pageSize: o.pageSize, prefix: "2611.", gate: make(chan struct{})}
	hs := httptest.NewServer(repo)
	defer hs.Close()
	opened := false
	defer func() {
		if !opened {
			close(repo.gate)
		}
	}()
	srv, err := startProbeServer(ctx, o, work, d, "harvest", "--harvest-every", "24h", "--oai-url", hs.URL+"/oai",
		"--harvest-delay", o.harvestGap.String(), "--no-embed")
	if err != nil {
		return nil, err
	}
	defer stop(srv)
	pid := srv.cmd.Process.Pid
	rssBefore := statusOrUnknown(pid, "VmRSS")
	wsURL := "ws" + strings.TrimPrefix(srv.url, "http")
	subs := make([]*listener, o.listeners)
	var lastEvent atomic.Int64
	var wg sync.WaitGroup
	var subscribed sync.WaitGroup
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := range subs {
		l := &listener{}
		subs[i] = l
		subscribed.Add(1)
		wg.Go(func() { l.listen(lctx, wsURL, net.IPv4(127, 0, 1, byte(1+i)), &lastEvent, &subscribed) })
	}
	subscribed.Wait()
	time.Sleep(2 * time.Second) // the subscriptions start on the server
	start := time.Now()
	close(repo.gate)
	opened = true
	// The harvest ends some time after the last page is served, and the
	// events some time after that: the subscribers are done once the
	// last page is served and no event has come for quietEnd.
	var peakRSS string
	for {
		time.Sleep(time.Second)
		_, _, last := repo.listed()
		quiet := time.Since(time.Unix(0, max(lastEvent.Load(), last.UnixNano())))
		if !last.IsZero() && quiet > quietEnd || time.Since(start) > 30*time.Minute {
			break
		}
	}
	elapsed := time.Since(start) - quietEnd
	peakRSS = statusOrUnknown(pid, "VmHWM")
	cancel()
	wg.Wait()
	every, dist, closes := listenersSummary(subs, o.records)
	requests, ids, _ := repo.listed()
	return []probeRow{
		{Figure: "harvest", Value: fmt.Sprintf("%d records in %d requests, events done %.1f s after the first", len(ids), requests, elapsed.Seconds())},
		{Figure: "subscribers with every event", Value: fmt.Sprintf("%d of %d (events received: %s)", every, o.listeners, strings.Join(dist, ", "))},
		{Figure: "subscriptions ended by the server", Value: strings.Join(closes, "; ")},
		{Figure: "server memory (RSS at start / peak)", Value: rssBefore + " / " + peakRSS},
	}, nil
}

// listener is one subscriber of the subscribers probe: how many events
// it received, and how its subscription ended when the server ended it.
type listener struct {
	events int
	end    string
}

// listen subscribes to papersAdded from addr and counts its events until
// ctx ends or the server ends the subscription, answering pings; it
// marks subscribed done once its subscribe message is sent (or it could
// not connect) and stores the time of each event in lastEvent.
func (l *listener) listen(ctx context.Context, wsURL string, addr net.IP, lastEvent *atomic.Int64, subscribed *sync.WaitGroup) {
	c, refused, err := wsDial(ctx, wsURL, addr)
	if c == nil {
		l.end = fmt.Sprintf("not connected: %s%v", refused, err)
		subscribed.Done()
		return
	}
	defer c.CloseNow()
	err = c.Write(ctx, websocket.MessageText, []byte(`{"id":"1","type":"subscribe","payload":{"query":"subscription { papersAdded { arxivId } }"}}`))
	subscribed.Done()
	for err == nil {
		var b []byte
		if _, b, err = c.Read(ctx); err != nil {
			break
		}
		var m struct {
			Type    string
			Payload json.RawMessage
		}
		if json.Unmarshal(b, &m) != nil {
			l.end = fmt.Sprintf("bad message %.100s", b)
			return
		}
		switch m.Type {
		case "next":
			l.events++
			lastEvent.Store(time.Now().UnixNano())
		case "ping":
			err = c.Write(ctx, websocket.MessageText, []byte(`{"type":"pong"}`))
		case "error", "complete":
			l.end = fmt.Sprintf("%s %.200s", m.Type, m.Payload)
			return
		}
	}
	if ctx.Err() == nil {
		l.end = closeOutcome(err)
	}
}

// listenersSummary counts the listeners that received every one of
// records events, and describes how many events they received and how
// their subscriptions ended.
func listenersSummary(subs []*listener, records int) (every int, dist, closes []string) {
	counts, ends := map[int]int{}, map[string]int{}
	for _, l := range subs {
		counts[l.events]++
		if l.events == records {
			every++
		}
		if l.end != "" {
			ends[l.end]++
		}
	}
	for n, k := range counts {
		dist = append(dist, fmt.Sprintf("%d×%d", k, n))
	}
	for e, k := range ends {
		closes = append(closes, fmt.Sprintf("%d×%s", k, e))
	}
	slices.Sort(dist)
	slices.Sort(closes)
	if len(closes) == 0 {
		closes = []string{"none"}
	}
	return every, dist, closes
}

func probeTable(w io.Writer, rows []probeRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "database\tprobe\tfigure\tvalue")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Database, r.Probe, r.Figure, r.Value)
	}
	return tw.Flush()
}

// The floods of the ws-idle and http-idle probes run in a process of their
// own (papergraph-bench flood, which the probe starts): the client the
// probe times then shares no Go scheduler with the flood's dialers.

// floodKinds are what a flood holds open: initialised graphql-transport-ws
// connections, or keep-alive HTTP connections that asked one request.
var floodKinds = []string{"ws", "http"}

// floodReport is the line the flood writes once every connection was
// tried; it then holds those admitted until its standard input ends.
type floodReport struct {
	Tried    int            `json:"tried"`
	Seconds  float64        `json:"seconds"`
	Outcomes map[string]int `json:"outcomes"`
}

// cmdFlood opens --conns connections of --kind to --url from 127.0.0.1,
// --parallel at a time, reports them on stdout, and holds the admitted
// ones, answering the server's pings, until stdin ends.
func cmdFlood(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("flood", stderr)
	kind := fs.String("kind", "ws", "what to hold open: ws or http")
	u := fs.String("url", "", "the server's /graphql URL")
	conns := fs.Int("conns", 20000, "connections to try")
	parallel := fs.Int("parallel", defaultProbeParallel, "connections dialled at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !slices.Contains(floodKinds, *kind) || *u == "" || *parallel < 1 {
		return fmt.Errorf("flood: want --kind ws or http, a --url and --parallel of at least 1")
	}
	dial := func() (io.Closer, string, error) { return httpIdleDial(ctx, *u) }
	if *kind == "ws" {
		wsURL := "ws" + strings.TrimPrefix(*u, "http")
		dial = func() (io.Closer, string, error) {
			c, refused, err := wsDial(ctx, wsURL, net.IPv4(127, 0, 0, 1))
			if c == nil {
				return nil, refused, err
			}
			go answerPings(ctx, c)
			return closer(c.CloseNow), "", nil
		}
	}
	var (
		mu       sync.Mutex
		held     []io.Closer
		outcomes = map[string]int{}
		next     atomic.Int64
		workers  sync.WaitGroup
	)
	start := time.Now()
	for range *parallel {
		workers.Go(func() {
			for next.Add(1) <= int64(*conns) {
				c, refused, err := dial()
				mu.Lock()
				switch {
				case err != nil:
					outcomes["error: "+shortErr(err)]++
				case c != nil:
					outcomes["admitted"]++
					held = append(held, c)
				default:
					outcomes["refused, "+refused]++
				}
				mu.Unlock()
			}
		})
	}
	workers.Wait()
	if err := json.NewEncoder(stdout).Encode(floodReport{Tried: *conns, Seconds: time.Since(start).Seconds(), Outcomes: outcomes}); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, stdin)
	for _, c := range held {
		c.Close()
	}
	return nil
}

type closer func() error

func (c closer) Close() error { return c() }

// httpIdleDial opens a TCP connection from 127.0.0.1 to the server of u,
// asks GET /healthz on it as a keep-alive client does, and returns it to
// be held idle when answered 200, or the status that refused it.
func httpIdleDial(ctx context.Context, u string) (io.Closer, string, error) {
	host := strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
	host, _, _ = strings.Cut(host, "/")
	d := &net.Dialer{Timeout: 30 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, "", err
	}
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); err != nil {
		c.Close()
		return nil, "", err
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, "", err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	_ = c.SetDeadline(time.Time{})
	if res.StatusCode != http.StatusOK {
		c.Close()
		return nil, "HTTP " + strconv.Itoa(res.StatusCode), nil
	}
	return c, "", nil
}

// flood is a running papergraph-bench flood.
type flood struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	report chan floodReport
	err    chan error
}

// startFlood runs this program's flood subcommand against u.
func startFlood(ctx context.Context, kind, u string, conns, parallel int) (*flood, error) {
	cmd, stdin, stdout, err := startSelf(ctx, "flood", "--kind", kind, "--url", u,
		"--conns", strconv.Itoa(conns), "--parallel", strconv.Itoa(parallel))
	if err != nil {
		return nil, err
	}
	f := &flood{cmd: cmd, stdin: stdin, report: make(chan floodReport, 1), err: make(chan error, 1)}
	go func() {
		var r floodReport
		if err := json.NewDecoder(stdout).Decode(&r); err != nil {
			f.err <- fmt.Errorf("flood: %w", err)
			return
		}
		f.report <- r
	}()
	return f, nil
}

// wait waits for the flood's report.
func (f *flood) wait() (floodReport, error) {
	select {
	case r := <-f.report:
		return r, nil
	case err := <-f.err:
		f.stop()
		return floodReport{}, err
	}
}

// stop makes the flood close what it holds, and waits for it to end.
func (f *flood) stop() {
	f.stdin.Close()
	if err := f.cmd.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "flood:", err)
	}
}

// probeIdleFlood runs a flood of kind (ws or http) of o.conns connections
// from 127.0.0.1 in a process of its own, and holds those admitted, while
// another client asks the README query from other addresses: before the
// flood, while it dials, and while it holds; the server's descriptors are
// sampled throughout.
func probeIdleFlood(ctx context.Context, o probeOptions, kind string, srv *target, client *http.Client, paper string) ([]probeRow, error) {
	pid := srv.cmd.Process.Pid
	var peakFDs atomic.Int64
	sampling := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			if n := int64(procFDs(pid)); n > peakFDs.Load() {
				peakFDs.Store(n)
			}
			select {
			case <-sampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	defer func() { close(sampling); sampler.Wait() }()
	ask := func(int) error {
		return graphQL(ctx, client, srv.url, "", readmeQuery, map[string]any{"paper": paper, "first": 10}, nil)
	}
	alone, stopAlone := meanwhile(ask)
	time.Sleep(15 * time.Second)
	stopAlone()
	readme, stopReadme := meanwhile(ask)
	f, err := startFlood(ctx, kind, srv.url, o.conns, o.parallel)
	if err != nil {
		stopReadme()
		return nil, err
	}
	report, err := f.wait()
	stopReadme()
	if err != nil {
		return nil, err
	}
	holding, stopHolding := meanwhile(ask)
	time.Sleep(5 * time.Second) // the held connections sit idle while the other client goes on
	heldFDs := procFDs(pid)
	stopHolding()
	f.stop()
	var kinds []string
	for k, n := range report.Outcomes {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(kinds)
	return []probeRow{
		{Figure: "connections tried from 127.0.0.1 (another process)", Value: fmt.Sprintf("%d in %.1f s, %d at a time", report.Tried, report.Seconds, o.parallel)},
		{Figure: "outcomes", Value: strings.Join(kinds, "; ")},
		{Figure: "server descriptors (held / peak / limit)", Value: fmt.Sprintf("%d / %d / %s", heldFDs, peakFDs.Load(), fdLimit(fmt.Sprintf("/proc/%d", pid)))},
		{Figure: "README query from other addresses, before", Value: alone.summary()},
		{Figure: "README query from other addresses during the flood", Value: readme.summary()},
		{Figure: "README query from other addresses while those admitted are held", Value: holding.summary()},
	}, nil
}
