package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ratelimit"
)

// heapLimit is the most heap any request of the adversarial suite may
// make the process hold.
const heapLimit = 256 << 20

// readmeQuery is the README's first query, which the resolvers' contract
// tests measure.
var readmeQuery = func() string {
	b, err := os.ReadFile("../resolvers/testdata/researcher-page.graphql")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// repeat is n copies of s, each formatted with its index when s has a verb.
func repeat(s string, n int) string {
	var b strings.Builder
	for i := range n {
		if strings.Contains(s, "%d") {
			fmt.Fprintf(&b, s, i)
		} else {
			b.WriteString(s)
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// fragmentBomb is a document whose fragments spread the next one twice, 40
// deep: 2^40 fields once expanded.
func fragmentBomb() string {
	var b strings.Builder
	b.WriteString("{ ...F0 }\n")
	for i := range 40 {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	b.WriteString("fragment F40 on Query { paper(id: \"1\") { title } }\n")
	return b.String()
}

// TestAdversarial sends requests that would take down a server without
// the cost model, and more: each is refused before any SQL with its code, or
// answered with no more objects than the node limit, while the
// heap stays under heapLimit. -short leaves out the answers over the
// 969- and 2,832-author bylines (long).
func TestAdversarial(t *testing.T) {
	tests := []struct {
		name     string
		query    string
		vars     map[string]any
		wantCode string // "" when the request must be answered
		// long: answered over a byline of thousands of authors, a load
		// that -short leaves to the full run.
		long bool
	}{
		{name: "README query, 969-author paper", query: readmeQuery, vars: map[string]any{"paper": "2103.11058", "first": 5}, long: true},
		{name: "README query, 2,832-author paper", query: readmeQuery, vars: map[string]any{"paper": "1411.4413", "first": 5}, long: true},
		{name: "authors of co-authors' papers, 969 authors",
			query: `{ paper(id:"2103.11058") { authors { researcher { papers(first:1) { nodes { authors { name } } } } } } }`, long: true},
		{name: "authors of co-authors' papers, 2,832 authors",
			query: `{ paper(id:"1411.4413") { authors { researcher { papers(first:1) { nodes { authors { name } } } } } } }`, long: true},
		{name: "every page of a byline", query: `{ paper(id:"1411.4413") { authorCount authors(first: 100, after: 2800) { position name } } }`},
		{name: "search fan-out", wantCode: codeNodeLimit,
			query: `{ searchPapers(first: 100) { nodes { authors { researcher { papers(first: 100) { nodes { authors { researcher { name } } } } } } } } }`},
		{name: "overflow under @skip", wantCode: codeNodeLimit,
			query: `{ a: searchPapers(first: 100) { nodes { authors { researcher { papers(first: 100) { nodes { authors { researcher { name } } } } } } } }
				b: searchPapers(first: 2147483647) @skip(if: true) { nodes { title } }
				c: searchPapers(first: 42949672) @include(if: false) { nodes { title } } }`},
		{name: "nested networks", wantCode: codeNodeLimit,
			query: `{ researcher(id: "1") { network(maxNodes: 2000) { nodes { researcher { network(maxNodes: 2000) { nodes { researcher {
				network(maxNodes: 2000) { nodes { researcher { name } } } } } } } } } } }`},
		{name: "10,000 repeated lookups", wantCode: codeTooLarge, query: "{" + repeat(`paper(id:"hep-th/9201001"){title}`, 10_000) + "}"},
		{name: "1,500 repeated leaves", wantCode: codeTooLarge, query: `{ paper(id:"hep-th/9201001") {` + repeat("pdfUrl", 1_500) + "} }"},
		{name: "500 aliased searches", wantCode: codeTooLarge, query: "{" + repeat(`s%d: searchPapers(query:"th*", first:1){ nodes { title } }`, 500) + "}"},
		{name: "3,000 aliased schemas", wantCode: codeTooLarge, query: "{" + repeat(`s%d: __schema { types { name fields { name } } }`, 3_000) + "}"},
		{name: "12,000 aliased lookups", wantCode: codeTooLarge, query: "{" + repeat(`p%d: paper(id:"hep-th/9201001"){title}`, 12_000) + "}"},
		{name: "60 root fields", wantCode: codeTooLarge, query: "{" + repeat(`p%d: paper(id:"hep-th/9201001"){title}`, 60) + "}"},
		{name: "fragment bomb", wantCode: codeTooLarge, query: fragmentBomb()},
		{name: "an unused fragment of 14,900 fields", wantCode: codeTooLarge, query: "{ __typename } fragment F on Query {" + repeat("__typename", 14_900) + "}"},
		{name: "a kind of suggestion named 30 times", wantCode: "BAD_USER_INPUT",
			query: `{ suggest(prefix: "ab", types: [` + repeat("CATEGORY", 30) + `]) { label } }`},
		{name: "a field name of 5,000 characters", wantCode: "GRAPHQL_VALIDATION_FAILED", query: "{ " + strings.Repeat("x", 5000) + " }"},
		{name: "directive flood", wantCode: codeTooLarge, query: `{ paper(id:"1") @skip(if:false) @include(if:true) @skip(if:false) @include(if:true) @skip(if:false) { title } }`},
		{name: "schema with every list", query: `{ __schema { types { name fields { name args { name } } enumValues { name } } } }`},
		{name: "50 aliased lookups", query: "{" + repeat(`p%d: paper(id:"hep-th/9201001"){title authors{name}}`, 50) + "}"},
	}
	dbtest.EachSeeded(t, largeBylines, func(t *testing.T, _ string, bdb *bun.DB) {
		statements := &db.StatementCounter{}
		bdb = bdb.WithQueryHook(statements)
		h := newTestServer(t, bdb, Config{}).Handler()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if tt.long && testing.Short() {
					t.Skip("a long byline's answer; runs without -short")
				}
				before := statements.Count()
				var resp costedResponse
				peak := peakHeap(func() {
					rec := serve(h, post(t, map[string]any{"query": tt.query, "variables": tt.vars}, mediaJSON))
					if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
						t.Fatalf("decode %.300q: %v", rec.Body.String(), err)
					}
				})
				if peak > heapLimit {
					t.Errorf("heap peaked at %d MB, over %d MB", peak>>20, heapLimit>>20)
				}
				t.Logf("heap peak %d MB, %d statements, cost %+v", peak>>20, statements.Count()-before, resp.Extensions.Cost)
				for _, e := range resp.Errors {
					if len(e.Message) > 300 {
						t.Errorf("a message of %d bytes, over 300: %.80q…", len(e.Message), e.Message)
					}
				}
				if tt.wantCode != "" {
					if got := resp.errorCode(); got != tt.wantCode {
						t.Fatalf("code = %q, want %q (errors %+v)", got, tt.wantCode, resp.Errors)
					}
					if n := statements.Count() - before; n != 0 {
						t.Errorf("%d SQL statements ran, want none", n)
					}
					return
				}
				if len(resp.Errors) > 0 {
					t.Fatalf("errors %+v", resp.Errors)
				}
				// The estimate follows the archive's typical lists, so a
				// long byline's answer may hold more; the node limit
				// holds for every answer.
				if got, limit := objects(resp.Data), resp.Extensions.Cost.MaxNodes; got > limit || got == 0 {
					t.Errorf("answer holds %d objects, over the node limit of %d", got, limit)
				}
			})
		}
	})
}

// costedResponse is a GraphQL response with its cost extension.
type costedResponse struct {
	Data   any
	Errors []struct {
		Message    string
		Extensions struct{ Code string }
	}
	Extensions struct {
		Cost struct {
			Cost, NodeCount, Limit, Remaining, Used, MaxCost, MaxNodes int
			ResetAt                                                    time.Time
		}
	}
}

func (r costedResponse) errorCode() string {
	if len(r.Errors) == 0 {
		return ""
	}
	return r.Errors[0].Extensions.Code
}

// objects counts the JSON objects below the top of data: the objects of
// the answer, which the node count bounds.
func objects(data any) int {
	n := 0
	var walk func(v any, top bool)
	walk = func(v any, top bool) {
		switch v := v.(type) {
		case map[string]any:
			if !top {
				n++
			}
			for _, x := range v {
				walk(x, false)
			}
		case []any:
			for _, x := range v {
				walk(x, false)
			}
		}
	}
	walk(data, true)
	return n
}

// peakHeap runs fn and returns the most heap the process held meanwhile,
// sampled every millisecond, after a collection before it starts.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	read := heapObjects
	var peak uint64
	var wg sync.WaitGroup
	ctx, stop := context.WithCancel(context.Background())
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	fn()
	stop()
	wg.Wait()
	return max(peak, read())
}

// heapOverhead returns the memory the soft memory limit counts beside the
// heap's objects: the runtime's other classes, less the heap given back to
// the system.
func heapOverhead() int64 {
	sample := []rtmetrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	rtmetrics.Read(sample)
	return int64(sample[0].Value.Uint64() - sample[1].Value.Uint64() - sample[2].Value.Uint64())
}

// heapObjects returns the bytes of the heap's objects, live and not yet
// swept.
func heapObjects() uint64 {
	sample := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	rtmetrics.Read(sample)
	return sample[0].Value.Uint64()
}

// bylineBomb is the answer bomb: aliases copies of `papers(ids: $ids) {
// byline }`, whose $ids name the 2,832-author paper a thousand times. Its
// estimate is small (a point, aliases × 1,001 objects); its whole answer
// would repeat the longest byline aliases thousand times.
func bylineBomb(aliases int) (string, map[string]any) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = "1411.4413"
	}
	return "query($ids: [String!]!) {" + repeat("p%d: papers(ids: $ids) { byline }", aliases) + "}", map[string]any{"ids": ids}
}

// bombAnswer is what a test reads of a bomb's answer.
type bombAnswer struct {
	Data   map[string][]*struct{ Byline *string }
	Errors []struct {
		Message    string
		Path       []any
		Extensions struct{ Code string }
	}
	Extensions struct {
		Cost struct {
			Cost, NodeCount, ActualCost, ActualNodeCount, ActualBytes, MaxAnswerBytes int
		}
	}
}

// bylines counts the bylines an answer holds.
func (a bombAnswer) bylines() int {
	n := 0
	for _, papers := range a.Data {
		for _, p := range papers {
			if p != nil && p.Byline != nil {
				n++
			}
		}
	}
	return n
}

// TestAnswerBomb sends the answer bomb, alone and four at once, to a
// server with the default limits: 200 aliases are refused for their shape
// before any SQL; each answer of 50 stops at the byte budget, or at the
// server's answer memory, with the bylines built so far and the limit's
// error once, while the heap over the heap before stays within the
// server's answer memory, which bounds the answers in flight; and once
// they are written the whole answer memory is free again. -short sends
// only the refused bombs.
func TestAnswerBomb(t *testing.T) {
	dbtest.EachSeeded(t, largeBylines, func(t *testing.T, _ string, bdb *bun.DB) {
		statements := &db.StatementCounter{}
		cfg := Config{}
		cfg.setDefaults()
		g := newGuards(cfg)
		cfg.guards = g
		h := newTestServer(t, bdb.WithQueryHook(statements), cfg).Handler()
		for _, tt := range []struct {
			aliases, together int
		}{{50, 1}, {50, 4}, {200, 1}, {200, 4}} {
			t.Run(fmt.Sprintf("%d aliases, %d at once", tt.aliases, tt.together), func(t *testing.T) {
				if tt.aliases <= cfg.MaxAliases && testing.Short() {
					t.Skip("answers up to the server's answer memory; runs without -short")
				}
				query, vars := bylineBomb(tt.aliases)
				before := statements.Count()
				recs := make([]*httptest.ResponseRecorder, tt.together)
				for i := range recs {
					// Grown beforehand, so that the heap measured is the
					// server's, not the test's copy of the answers.
					recs[i] = httptest.NewRecorder()
					recs[i].Body.Grow(cfg.MaxAnswerBytes + 1<<20)
				}
				var base, allocated uint64
				peak := peakHeap(func() {
					base = heapObjects()
					// Serve runs under a soft memory limit; without one the
					// collector lets garbage pile up to twice the test's own
					// large heap, which says nothing of what the answers hold.
					defer debug.SetMemoryLimit(debug.SetMemoryLimit(heapOverhead() + int64(base) + cfg.MaxAnswerMemory))
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					allocated = ms.TotalAlloc
					defer func() {
						runtime.ReadMemStats(&ms)
						allocated = ms.TotalAlloc - allocated
					}()
					var wg sync.WaitGroup
					for i := range recs {
						wg.Go(func() {
							h.ServeHTTP(recs[i], post(t, map[string]any{"query": query, "variables": vars}, mediaJSON))
						})
					}
					wg.Wait()
				})
				t.Logf("heap peak %d MB, %d MB over the heap before; %d MB allocated", peak>>20, (peak-base)>>20, allocated>>20)
				// The collector holds the heap to the limit only after the
				// fact: a quarter of the answer memory again is its margin,
				// as in serve's limit.
				if over, bound := peak-base, uint64(cfg.MaxAnswerMemory*5/4); over > bound {
					t.Errorf("heap peaked %d MB over the heap before, past the answer memory and a quarter (%d MB)", over>>20, bound>>20)
				}
				if !memoryIdle(g.memory) {
					t.Fatalf("answer memory of %d MB not all given back after the answers", cfg.MaxAnswerMemory>>20)
				}
				if tt.aliases > cfg.MaxAliases {
					for i, rec := range recs {
						if code := decode(t, rec).errorCode(); code != codeTooLarge {
							t.Errorf("answer %d: code %q, want %s", i, code, codeTooLarge)
						}
					}
					if n := statements.Count() - before; n != 0 {
						t.Errorf("%d SQL statements ran, want none", n)
					}
					return
				}
				answered := 0
				for i, rec := range recs {
					answered += checkBombAnswer(t, i, rec)
				}
				if tt.together == 1 {
					checkBombHeap(t, recs[0], peak-base, allocated)
				}
				if answered == 0 {
					t.Error("no answer holds a byline")
				}
			})
		}
	})
}

// checkBombAnswer holds a bomb's answer to a stop at a limit, with one
// error and the bylines built so far, which it returns: none when the
// answer found the server's answer memory taken by the others.
func checkBombAnswer(t *testing.T, i int, rec *httptest.ResponseRecorder) int {
	t.Helper()
	var a bombAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer %d: decode %.300q: %v", i, rec.Body.String(), err)
	}
	if len(a.Errors) != 1 {
		t.Fatalf("answer %d: %d errors, want 1: %+v", i, len(a.Errors), a.Errors[:min(len(a.Errors), 3)])
	}
	e, c, n := a.Errors[0], a.Extensions.Cost, a.bylines()
	switch {
	case e.Extensions.Code == codeServerBusy:
	case e.Extensions.Code == codeAnswerTooBig && n > 0:
	default:
		t.Errorf("answer %d: code %q with %d bylines, want %s with some, or %s", i, e.Extensions.Code, n, codeAnswerTooBig, codeServerBusy)
	}
	if byline := len(e.Path) == 3 && e.Path[2] == "byline"; !byline && len(e.Path) != 1 {
		t.Errorf("answer %d: error at %v, want a byline's path or an alias's", i, e.Path)
	}
	if c.ActualBytes > c.MaxAnswerBytes {
		t.Errorf("answer %d: actual bytes %d, over the budget of %d", i, c.ActualBytes, c.MaxAnswerBytes)
	}
	// The nulls of the bylines after the stop are not counted.
	if len(rec.Body.Bytes()) > c.MaxAnswerBytes+8<<20 {
		t.Errorf("answer %d: %d bytes, over the budget of %d", i, len(rec.Body.Bytes()), c.MaxAnswerBytes)
	}
	return n
}

// checkBombHeap holds the heap one bomb's answer took, over the heap before
// it, to the memory the answer meter drew for it: answerMemoryFactor a
// byte of its JSON and nodeMemory an object. An answer that takes more
// than its draw lets the answers in flight hold more than the server's
// answer memory; a response encoded whole, beside gqlgen's buffer of the
// data, takes more.
func checkBombHeap(t *testing.T, rec *httptest.ResponseRecorder, heap, allocated uint64) {
	t.Helper()
	var a bombAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	c := a.Extensions.Cost
	if c.ActualBytes < c.MaxAnswerBytes/2 {
		t.Fatalf("the answer holds %d bytes, want it stopped near the budget of %d", c.ActualBytes, c.MaxAnswerBytes)
	}
	drawn := uint64(answerMemoryFactor*c.ActualBytes + nodeMemory*c.ActualNodeCount)
	t.Logf("answer %d bytes, %d objects", c.ActualBytes, c.ActualNodeCount)
	if heap > drawn {
		t.Errorf("the answer of %d MB and %d objects took %d MB of heap, over the %d MB the meter drew for it",
			c.ActualBytes>>20, c.ActualNodeCount, heap>>20, drawn>>20)
	}
}

// conflictProbe is the probe, which fails validation: n fields
// `authors(first: N)` of one paper with differing N. A salt makes each
// document new.
func conflictProbe(n, salt int) string {
	return fmt.Sprintf(`query Probe%d { paper(id: "1411.4413") {`, salt) + repeat("authors(first: %d) { name }", n) + "} }"
}

// TestFailingDocuments floods the server with documents that fail before
// they run, 32 and 64 at once from one client: the probe (refused
// for its conflicts before validation), and documents under that bound
// that fail validation, new and repeated. Every answer is a request error
// with the rate-limit headers and costs a point, the heap stays under
// heapLimit, and a repeated failing document is answered from the cache
// of failures, without being checked again.
func TestFailingDocuments(t *testing.T) {
	const limit = 1000
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	limiter, err := ratelimit.NewMemory(limit, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{RateLimiter: limiter}
	cfg.setDefaults()
	g := newGuards(cfg)
	cfg.guards = g
	h := newTestServer(t, bdb, cfg).Handler()
	spent := 0
	for _, tt := range []struct {
		name     string
		query    func(i int) string
		wantCode string
	}{
		{"the probe, 497 fields", func(i int) string { return conflictProbe(497, i) }, codeTooLarge},
		{"new documents that fail validation", func(i int) string { return conflictProbe(14, i) }, "GRAPHQL_VALIDATION_FAILED"},
		{"one document that fails validation", func(int) string { return conflictProbe(14, 1_000_000) }, "GRAPHQL_VALIDATION_FAILED"},
	} {
		for _, together := range []int{32, 64} {
			t.Run(fmt.Sprintf("%s, %d at once", tt.name, together), func(t *testing.T) {
				recs := make([]*httptest.ResponseRecorder, together)
				peak := peakHeap(func() {
					var wg sync.WaitGroup
					for i := range recs {
						wg.Go(func() { recs[i] = serve(h, post(t, map[string]any{"query": tt.query(i)}, mediaJSON)) })
					}
					wg.Wait()
				})
				t.Logf("heap peak %d MB", peak>>20)
				if peak > heapLimit {
					t.Errorf("heap peaked at %d MB, over %d MB", peak>>20, heapLimit>>20)
				}
				for i, rec := range recs {
					resp := decode(t, rec)
					code := resp.errorCode()
					if code != tt.wantCode && code != codeRateLimited {
						t.Errorf("answer %d: code %q, want %s (or %s when its client's checks are busy)", i, code, tt.wantCode, codeRateLimited)
					}
					if rec.Header().Get("X-RateLimit-Remaining") == "" || len(resp.Data) > 0 {
						t.Errorf("answer %d: headers %v, data %s; want the rate-limit headers and no data", i, rec.Header(), resp.Data)
					}
				}
				spent += together
				res, err := limiter.Spend(t.Context(), "ip:192.0.2.1", 0)
				if err != nil {
					t.Fatal(err)
				}
				if res.Remaining != limit-spent {
					t.Errorf("remaining %d, want %d: a point for each failing document", res.Remaining, limit-spent)
				}
			})
		}
	}
	hash := sha256.Sum256([]byte(conflictProbe(14, 1_000_000)))
	if errs, ok := g.failures.Get(t.Context(), string(hash[:])+"\x00"); !ok || len(errs) == 0 {
		t.Errorf("the repeated failing document is not among the failures")
	}
}

// TestCheckSlotsLeaveOthers holds the server to one check slot a core but
// one, and a client to half of them: one client holding its whole share of
// slots (as a flood of its new documents does) cannot take the next slot
// itself, and another client's new document is parsed, validated and
// answered, at once where the server has more slots than a client's share,
// and first when the flooding client's check ends where it has not.
func TestCheckSlotsLeaveOthers(t *testing.T) {
	for _, procs := range []int{1, 2, 3, 4, 8} {
		per, server := checkSlotsFor(procs)
		if server != int64(max(procs-1, 1)) || per < 1 || (server > 1 && 2*per > server) {
			t.Errorf("%d cores: %d slots, %d a client; want one a core but one, at most half a client (one at least)", procs, server, per)
		}
	}
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	cfg := Config{}
	cfg.setDefaults()
	g := newGuards(cfg)
	cfg.guards = g
	h := newTestServer(t, bdb, cfg).Handler()
	// The flooding client, the tests' default address, holds all its slots.
	const flooder = "ip:192.0.2.1"
	var release []func()
	for i := range g.checks.per {
		done, ok := g.checks.acquire(t.Context(), flooder, time.Hour)
		if !ok {
			t.Fatalf("slot %d of the flooding client refused", i)
		}
		release = append(release, done)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, ok := g.checks.acquire(ctx, flooder, time.Hour); ok {
		t.Error("the flooding client got a slot past its share")
	}
	// Another client's new document.
	answered := make(chan gqlResponse, 1)
	go func() {
		req := post(t, map[string]any{"query": `query Other { paper(id: "1411.4413") { title } }`}, mediaJSON)
		req.RemoteAddr = "198.51.100.7:40000"
		answered <- decode(t, serve(h, req))
	}()
	if g.checks.per == int64(cap(g.checks.server)) {
		// The flooding client holds the server's every slot: the other
		// waits at the server's slots, and has the next.
		waitQueued(t, g.checks, "ip:198.51.100.7")
		for _, done := range release {
			done()
		}
		release = nil
	}
	resp := <-answered
	if code := resp.errorCode(); code == codeRateLimited {
		t.Fatalf("another client's new document was refused for the flooding client's checks: %+v", resp.Errors)
	}
	if len(resp.Data) == 0 {
		t.Errorf("another client's new document was not answered: %+v", resp.Errors)
	}
	for _, done := range release {
		done()
	}
}

// waitQueued waits until client holds a slot of its own in s, waiting for
// one of the server's.
func waitQueued(t *testing.T, s *checkSlots, client string) {
	t.Helper()
	for {
		s.mu.Lock()
		c := s.clients[client]
		queued := c != nil && len(c.slots) > 0
		s.mu.Unlock()
		if queued {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal("the other client's document never reached the server's slots")
		case <-time.After(time.Millisecond):
		}
	}
}
