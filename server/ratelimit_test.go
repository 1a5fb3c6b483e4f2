package server

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ratelimit"
)

// limiters are the limiters of one hourly budget of limit points that the
// rate-limit tests run with: in memory, and through Redis when
// PAPERGRAPH_TEST_REDIS is set, each constructor making one "process" of
// a budget shared by the limiters it returns.
func limiters(t *testing.T, limit int) map[string]func() ratelimit.Limiter {
	out := map[string]func() ratelimit.Limiter{}
	m, err := ratelimit.NewMemory(limit, 0)
	if err != nil {
		t.Fatal(err)
	}
	out["memory"] = func() ratelimit.Limiter { return m }
	if url := os.Getenv("PAPERGRAPH_TEST_REDIS"); url != "" {
		prefix := "test-" + rand.Text() + ":"
		out["redis"] = func() ratelimit.Limiter {
			rdb, err := ratelimit.DialRedis(url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				keys, _ := rdb.Keys(t.Context(), "rate:"+prefix+"*").Result()
				if len(keys) > 0 {
					rdb.Del(t.Context(), keys...)
				}
				rdb.Close()
			})
			l, err := ratelimit.NewRedis(rdb, prefix, limit)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
	}
	return out
}

// TestRateLimit spends a budget of 5 points with one-point queries: each
// answer states the budget in its headers and extensions.cost, the sixth
// is refused with 429 before any SQL, and a dry run prices a query
// without spending or running it. With Redis, two servers (two
// processes) spend one budget.
func TestRateLimit(t *testing.T) {
	const limit = 5
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		statements := &db.StatementCounter{}
		bdb = bdb.WithQueryHook(statements)
		for name, limiter := range limiters(t, limit) {
			t.Run(name, func(t *testing.T) {
				servers := []http.Handler{
					newTestServer(t, bdb, Config{RateLimiter: limiter()}).Handler(),
					newTestServer(t, bdb, Config{RateLimiter: limiter()}).Handler(),
				}
				ask := func(i int, query string) (*costedResponse, http.Header, int) {
					t.Helper()
					rec := serve(servers[i%2], post(t, map[string]any{"query": query}, mediaJSON))
					var resp costedResponse
					if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
						t.Fatalf("decode %q: %v", rec.Body.String(), err)
					}
					return &resp, rec.Header(), rec.Code
				}

				merged, _, _ := ask(0, `{ rateLimit(dryRun: true) { cost } rateLimit(dryRun: true) { remaining } }`)
				if got, _ := merged.Data.(map[string]any)["rateLimit"].(map[string]any); got["cost"] == nil || got["remaining"] == nil {
					t.Errorf("dry run of two rateLimit selections: %v, want cost and remaining", merged.Data)
				}
				dry, _, _ := ask(0, `{ rateLimit(dryRun: true) { cost nodeCount remaining } paper(id: "hep-th/9201001") { authors { name } } }`)
				if got := dry.Data.(map[string]any); len(got) != 1 || got["rateLimit"].(map[string]any)["nodeCount"] != 102.0 || got["rateLimit"].(map[string]any)["remaining"] != float64(limit) {
					t.Errorf("dry run: data %v, want only rateLimit with nodeCount 102 (itself, the paper, 100 authors) and %d remaining", got, limit)
				}

				get := httptest.NewRequest(http.MethodGet, "/graphql?query="+url.QueryEscape(`{ rateLimit(dryRun: true) { cost } }`), nil)
				if cc := serve(servers[0], get).Header().Get("Cache-Control"); cc != cacheMaxAgePrivate {
					t.Errorf("a GET answer stating a budget: Cache-Control %q, want %q", cc, cacheMaxAgePrivate)
				}
				for i := 1; i <= limit; i++ {
					resp, h, code := ask(i, `{ paper(id: "hep-th/9201001") { title } }`)
					if code != http.StatusOK || len(resp.Errors) > 0 {
						t.Fatalf("query %d: status %d, errors %+v", i, code, resp.Errors)
					}
					c := resp.Extensions.Cost
					if c.Cost != 1 || c.Limit != limit || c.Remaining != limit-i || c.Used != i {
						t.Errorf("query %d: extensions.cost %+v, want cost 1, limit %d, remaining %d, used %d", i, c, limit, limit-i, i)
					}
					if got := h.Get("X-RateLimit-Remaining"); got != strconv.Itoa(limit-i) {
						t.Errorf("query %d: X-RateLimit-Remaining %q, want %d", i, got, limit-i)
					}
				}
				before := statements.Count()
				resp, h, code := ask(0, `{ paper(id: "hep-th/9201001") { title } }`)
				if code != http.StatusTooManyRequests || resp.errorCode() != codeRateLimited || h.Get("Retry-After") == "" || h.Get("X-RateLimit-Remaining") != "0" {
					t.Errorf("spent budget: status %d, code %q, Retry-After %q, Remaining %q; want 429, %s, a delay, 0",
						code, resp.errorCode(), h.Get("Retry-After"), h.Get("X-RateLimit-Remaining"), codeRateLimited)
				}
				if n := statements.Count() - before; n != 0 {
					t.Errorf("%d statements ran for a refused request, want none", n)
				}
				rl, _, _ := ask(1, `{ rateLimit { limit cost remaining used } }`)
				if code := rl.errorCode(); code != codeRateLimited {
					t.Errorf("rateLimit with a spent budget: code %q, want %s", code, codeRateLimited)
				}
			})
		}
	})
}

// TestRateLimitClients checks who spends a budget: a request with an
// issued API key spends the key's wherever it comes from, one with an
// unknown key is refused with 401, and behind a trusted proxy the address
// X-Forwarded-For names spends its own.
func TestRateLimitClients(t *testing.T) {
	const key = "notebook-0123456789abcdef"
	keys, err := ratelimit.LoadKeys(strings.NewReader(key + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	limiter, err := ratelimit.NewMemory(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	h := sqliteServer(t, Config{RateLimiter: limiter, APIKeys: keys,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}).Handler()
	ask := func(peer string, header ...string) (int, string) {
		t.Helper()
		req := post(t, map[string]string{"query": `{ __typename }`}, mediaJSON)
		req.RemoteAddr = peer
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := serve(h, req)
		return rec.Code, rec.Header().Get("X-RateLimit-Remaining")
	}
	steps := []struct {
		name          string
		peer          string
		header        []string
		wantStatus    int
		wantRemaining string
	}{
		{"address", "192.0.2.1:1000", nil, 200, "2"},
		{"key from the same address", "192.0.2.1:1000", []string{"Authorization", "Bearer " + key}, 200, "2"},
		{"key from elsewhere", "198.51.100.7:1000", []string{"X-API-Key", key}, 200, "1"},
		{"unknown key", "192.0.2.1:1000", []string{"X-API-Key", "guess-0123456789abcdef"}, 401, ""},
		{"address again", "192.0.2.1:1000", nil, 200, "1"},
		{"behind a trusted proxy", "10.1.2.3:1000", []string{"X-Forwarded-For", "203.0.113.9"}, 200, "2"},
		{"forged hop before an untrusted peer", "192.0.2.1:1000", []string{"X-Forwarded-For", "203.0.113.9"}, 200, "0"},
	}
	for _, s := range steps {
		status, remaining := ask(s.peer, s.header...)
		if status != s.wantStatus || remaining != s.wantRemaining {
			t.Errorf("%s: status %d, remaining %q; want %d, %q", s.name, status, remaining, s.wantStatus, s.wantRemaining)
		}
	}
}

// TestCostSettles runs a query whose estimate is larger than what it
// reads (two of its 250 ids name papers): extensions.cost states both, the budget is charged the actual
// cost (the rest of the reserved estimate given back), and the headers
// agree. A query refused for its node count states the budget as it is,
// unspent.
func TestCostSettles(t *testing.T) {
	const limit = 100
	ids := []string{"1411.4413", "2103.11058"}
	for i := range 248 {
		ids = append(ids, fmt.Sprintf("2901.%05d", i))
	}
	query := `query($ids: [String!]!) { papers(ids: $ids) { title authors(first: 10) { name } references(first: 10) { nodes { title } } } }`
	dbtest.EachSeeded(t, largeBylines, func(t *testing.T, _ string, bdb *bun.DB) {
		for name, limiter := range limiters(t, limit) {
			t.Run(name, func(t *testing.T) {
				h := newTestServer(t, bdb, Config{RateLimiter: limiter()}).Handler()
				rec := serve(h, post(t, map[string]any{"query": query, "variables": map[string]any{"ids": ids}}, mediaJSON))
				var resp struct {
					Errors     []any
					Extensions struct {
						Cost struct{ Cost, NodeCount, ActualCost, ActualNodeCount, ActualBytes, Limit, Remaining, Used int }
					}
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Errors) > 0 {
					t.Fatalf("decode %.300q: %v", rec.Body.String(), err)
				}
				c := resp.Extensions.Cost
				if c.ActualCost >= c.Cost || c.ActualNodeCount == 0 || c.ActualNodeCount > c.NodeCount || c.ActualBytes == 0 {
					t.Errorf("extensions.cost %+v: want an actual cost below the estimate, and actual nodes within it", c)
				}
				if c.Used != c.ActualCost || c.Remaining != limit-c.ActualCost || c.Limit != limit {
					t.Errorf("extensions.cost %+v: want the actual cost used of %d", c, limit)
				}
				if got := rec.Header().Get("X-RateLimit-Remaining"); got != strconv.Itoa(limit-c.ActualCost) {
					t.Errorf("X-RateLimit-Remaining %q, want %d", got, limit-c.ActualCost)
				}

				refused := newTestServer(t, bdb, Config{RateLimiter: limiter(), MaxNodes: 3}).Handler()
				var r costedResponse
				rec = serve(refused, post(t, map[string]any{"query": query, "variables": map[string]any{"ids": ids}}, mediaJSON))
				if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				if got := r.Extensions.Cost; r.errorCode() != codeNodeLimit || got.Limit != limit || got.Remaining != limit-c.ActualCost {
					t.Errorf("refused: code %q, extensions.cost %+v; want %s, limit %d, remaining %d",
						r.errorCode(), got, codeNodeLimit, limit, limit-c.ActualCost)
				}
			})
		}
	})
}
