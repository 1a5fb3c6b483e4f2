package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/papergraph/papergraph/ratelimit"
)

// limit is the budget of the table's tests: 360 points an hour is one
// point back every 10 seconds, slow enough that no point comes back while
// a test runs.
const (
	limit    = 360
	perPoint = time.Hour / limit
)

// redisEnv names the Redis the tests use when it is set, e.g.
// redis://127.0.0.1:6379/0.
const redisEnv = "PAPERGRAPH_TEST_REDIS"

// eachLimiter runs test against Memory and, when PAPERGRAPH_TEST_REDIS is
// set, against Redis, each with a function that makes fresh limiters of
// one store: two limiters made by one call of newLimiter share budgets
// when the store is shared.
func eachLimiter(t *testing.T, test func(t *testing.T, newLimiter func(limit int) ratelimit.Limiter)) {
	t.Run("memory", func(t *testing.T) {
		test(t, func(limit int) ratelimit.Limiter {
			m, err := ratelimit.NewMemory(limit, 0)
			if err != nil {
				t.Fatal(err)
			}
			return m
		})
	})
	t.Run("redis", func(t *testing.T) {
		url := os.Getenv(redisEnv)
		if url == "" {
			t.Skip(redisEnv + " is not set")
		}
		prefix := testPrefix(t, url)
		test(t, func(limit int) ratelimit.Limiter {
			rdb, err := ratelimit.DialRedis(url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rdb.Close() })
			r, err := ratelimit.NewRedis(rdb, prefix, limit)
			if err != nil {
				t.Fatal(err)
			}
			return r
		})
	})
}

// testPrefix returns a key prefix of t's own and deletes its keys when t
// ends.
func testPrefix(t *testing.T, url string) string {
	t.Helper()
	prefix := fmt.Sprintf("papergraph-test:%s:%d:", t.Name(), time.Now().UnixNano())
	rdb, err := ratelimit.DialRedis(url)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("%s=%s: %v", redisEnv, url, err)
	}
	t.Cleanup(func() {
		defer rdb.Close()
		ctx := context.Background()
		keys, err := rdb.Keys(ctx, "rate:"+prefix+"*").Result()
		if err == nil && len(keys) > 0 {
			err = rdb.Del(ctx, keys...).Err()
		}
		if err != nil {
			t.Errorf("cleaning up %s*: %v", prefix, err)
		}
	})
	return prefix
}

// spend is one Spend of a test and the Result it must give.
type spend struct {
	key  string
	cost int
	want want
}

type want struct {
	allowed   bool
	remaining int
	// resetIn and retryAfter are expected to within a second.
	resetIn, retryAfter time.Duration
	err                 error
}

func TestSpend(t *testing.T) {
	tests := []struct {
		name   string
		spends []spend
	}{
		{"first point", []spend{
			{"a", 1, want{allowed: true, remaining: limit - 1, resetIn: perPoint}},
		}},
		{"points add up", []spend{
			{"a", 10, want{allowed: true, remaining: limit - 10, resetIn: 10 * perPoint}},
			{"a", 5, want{allowed: true, remaining: limit - 15, resetIn: 15 * perPoint}},
		}},
		{"the whole budget at once", []spend{
			{"a", limit, want{allowed: true, remaining: 0, resetIn: time.Hour}},
		}},
		{"refused when spent, and the refusal costs nothing", []spend{
			{"a", limit, want{allowed: true, remaining: 0, resetIn: time.Hour}},
			{"a", 1, want{allowed: false, remaining: 0, resetIn: time.Hour, retryAfter: perPoint}},
			{"a", 0, want{allowed: true, remaining: 0, resetIn: time.Hour}},
		}},
		{"refused when more than remains; what remains can still be spent", []spend{
			{"a", limit - 10, want{allowed: true, remaining: 10, resetIn: (limit - 10) * perPoint}},
			{"a", 30, want{allowed: false, remaining: 10, resetIn: (limit - 10) * perPoint, retryAfter: 20 * perPoint}},
			{"a", 10, want{allowed: true, remaining: 0, resetIn: time.Hour}},
		}},
		{"a cost over the limit is refused at once, and costs nothing", []spend{
			{"a", 5, want{allowed: true, remaining: limit - 5, resetIn: 5 * perPoint}},
			{"a", limit + 1, want{allowed: false, remaining: limit - 5, resetIn: 5 * perPoint, err: ratelimit.ErrCostOverLimit}},
			{"a", 0, want{allowed: true, remaining: limit - 5, resetIn: 5 * perPoint}},
		}},
		{"cost 0 reads a fresh budget", []spend{
			{"a", 0, want{allowed: true, remaining: limit}},
			{"a", 0, want{allowed: true, remaining: limit}},
		}},
		{"cost 0 reads a spent budget without spending", []spend{
			{"a", 7, want{allowed: true, remaining: limit - 7, resetIn: 7 * perPoint}},
			{"a", 0, want{allowed: true, remaining: limit - 7, resetIn: 7 * perPoint}},
			{"a", 0, want{allowed: true, remaining: limit - 7, resetIn: 7 * perPoint}},
		}},
		{"separate keys, separate budgets", []spend{
			{"a", limit, want{allowed: true, remaining: 0, resetIn: time.Hour}},
			{"b", 1, want{allowed: true, remaining: limit - 1, resetIn: perPoint}},
			{"a", 1, want{allowed: false, remaining: 0, resetIn: time.Hour, retryAfter: perPoint}},
		}},
	}
	eachLimiter(t, func(t *testing.T, newLimiter func(int) ratelimit.Limiter) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				l := newLimiter(limit)
				// Keys of their own, since a Redis limiter's budgets outlive it.
				prefix := tt.name + ":"
				for i, s := range tt.spends {
					before := time.Now()
					got, err := l.Spend(t.Context(), prefix+s.key, s.cost)
					after := time.Now()
					what := fmt.Sprintf("spend %d (%s, %d)", i, s.key, s.cost)
					if !errors.Is(err, s.want.err) {
						t.Fatalf("%s: error %v, want %v", what, err, s.want.err)
					}
					checkResult(t, what, got, s.want, before, after)
				}
			})
		}
	})
}

func checkResult(t *testing.T, what string, got ratelimit.Result, want want, before, after time.Time) {
	t.Helper()
	if got.Limit != limit || got.Allowed != want.allowed || got.Remaining != want.remaining || got.Used != limit-want.remaining {
		t.Errorf("%s: got limit %d, allowed %v, remaining %d, used %d; want %d, %v, %d, %d",
			what, got.Limit, got.Allowed, got.Remaining, got.Used, limit, want.allowed, want.remaining, limit-want.remaining)
	}
	if lo, hi := before.Add(want.resetIn-time.Second), after.Add(want.resetIn+time.Second); got.Reset.Before(lo) || got.Reset.After(hi) {
		t.Errorf("%s: reset in %v, want %v", what, got.Reset.Sub(before), want.resetIn)
	}
	if d := got.RetryAfter - want.retryAfter; d < -time.Second || d > time.Second {
		t.Errorf("%s: retry after %v, want %v", what, got.RetryAfter, want.retryAfter)
	}
}

// TestAdjust settles actual costs after estimates were spent: a refund
// gives points back but never more than a whole budget, and a charge past
// what remains leaves the budget short until its points come back.
func TestAdjust(t *testing.T) {
	type step struct {
		spend, adjust int // one of them
		want          want
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"refund of part of an estimate", []step{
			{spend: 50, want: want{allowed: true, remaining: limit - 50, resetIn: 50 * perPoint}},
			{adjust: -45, want: want{allowed: true, remaining: limit - 5, resetIn: 5 * perPoint}},
		}},
		{"refund of more than was spent makes the budget whole, no more", []step{
			{spend: 5, want: want{allowed: true, remaining: limit - 5, resetIn: 5 * perPoint}},
			{adjust: -20, want: want{allowed: true, remaining: limit}},
			{spend: 0, want: want{allowed: true, remaining: limit}},
		}},
		{"refund on a budget never seen", []step{
			{adjust: -3, want: want{allowed: true, remaining: limit}},
		}},
		{"a charge beyond the budget leaves it short", []step{
			{spend: limit - 2, want: want{allowed: true, remaining: 2, resetIn: (limit - 2) * perPoint}},
			{adjust: 10, want: want{allowed: true, remaining: 0, resetIn: (limit + 8) * perPoint}},
			{spend: 1, want: want{allowed: false, remaining: 0, resetIn: (limit + 8) * perPoint, retryAfter: 9 * perPoint}},
		}},
		{"the refunded points can be spent", []step{
			{spend: limit, want: want{allowed: true, remaining: 0, resetIn: time.Hour}},
			{adjust: -limit + 1, want: want{allowed: true, remaining: limit - 1, resetIn: perPoint}},
			{spend: limit - 1, want: want{allowed: true, remaining: 0, resetIn: time.Hour}},
		}},
	}
	eachLimiter(t, func(t *testing.T, newLimiter func(int) ratelimit.Limiter) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				l := newLimiter(limit)
				key := tt.name
				for i, s := range tt.steps {
					before := time.Now()
					var got ratelimit.Result
					var err error
					what := fmt.Sprintf("step %d (spend %d, adjust %d)", i, s.spend, s.adjust)
					if s.adjust != 0 {
						got, err = l.Adjust(t.Context(), key, s.adjust)
					} else {
						got, err = l.Spend(t.Context(), key, s.spend)
					}
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					checkResult(t, what, got, s.want, before, time.Now())
				}
			})
		}
	})
}

func TestSpendRejectsNegativeCost(t *testing.T) {
	eachLimiter(t, func(t *testing.T, newLimiter func(int) ratelimit.Limiter) {
		if _, err := newLimiter(limit).Spend(t.Context(), "a", -1); err == nil {
			t.Error("Spend(-1) gave no error")
		}
	})
}

func TestNewRejectsNonPositiveLimit(t *testing.T) {
	if _, err := ratelimit.NewMemory(0, 0); err == nil {
		t.Error("NewMemory(0, 0) gave no error")
	}
	if _, err := ratelimit.NewRedis(redis.NewClient(&redis.Options{}), "", 0); err == nil {
		t.Error("NewRedis with limit 0 gave no error")
	}
}

// TestProcessesShareBudget runs two Redis limiters, as two papergraph
// processes would, spending one client's budget at once: exactly the
// budget is allowed, however the spends interleave.
func TestProcessesShareBudget(t *testing.T) {
	url := os.Getenv(redisEnv)
	if url == "" {
		t.Skip(redisEnv + " is not set")
	}
	prefix := testPrefix(t, url)
	const budget, spenders, each = 40, 8, 10
	var processes [2]ratelimit.Limiter
	for i := range processes {
		rdb, err := ratelimit.DialRedis(url)
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		if processes[i], err = ratelimit.NewRedis(rdb, prefix, budget); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	allowed := [2]int{}
	var wg sync.WaitGroup
	for s := range spenders {
		p := s % len(processes)
		wg.Go(func() {
			for range each {
				res, err := processes[p].Spend(t.Context(), "client", 1)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					mu.Lock()
					allowed[p]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if got := allowed[0] + allowed[1]; got != budget {
		t.Errorf("allowed %d + %d = %d spends of %d, want the budget, %d", allowed[0], allowed[1], got, spenders*each, budget)
	}
	for i, p := range processes {
		res, err := p.Spend(t.Context(), "client", 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Remaining != 0 || res.Used != budget {
			t.Errorf("process %d reads remaining %d, used %d; want 0, %d", i, res.Remaining, res.Used, budget)
		}
	}
}

// TestMemoryKeepsMaxKeys fills a Memory of two budgets with three clients:
// the one least recently seen is forgotten, and so whole again.
func TestMemoryKeepsMaxKeys(t *testing.T) {
	m, err := ratelimit.NewMemory(limit, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "b", "c"} {
		if _, err := m.Spend(t.Context(), key, limit); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		key  string
		want int
	}{{"c", 0}, {"a", limit}} {
		res, err := m.Spend(t.Context(), tt.key, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Remaining != tt.want {
			t.Errorf("%s: remaining %d, want %d", tt.key, res.Remaining, tt.want)
		}
	}
}

// BenchmarkSpend spends one point per operation from budgets large enough
// never to refuse, for one client and for a new client each time (which,
// past DefaultMaxKeys, evicts one).
func BenchmarkSpend(b *testing.B) {
	const big = 1 << 30
	limiters := map[string]ratelimit.Limiter{}
	m, err := ratelimit.NewMemory(big, 0)
	if err != nil {
		b.Fatal(err)
	}
	limiters["memory"] = m
	if url := os.Getenv(redisEnv); url != "" {
		rdb, err := ratelimit.DialRedis(url)
		if err != nil {
			b.Fatal(err)
		}
		defer rdb.Close()
		prefix := fmt.Sprintf("papergraph-bench:%d:", time.Now().UnixNano())
		defer func() {
			ctx := context.Background()
			iter := rdb.Scan(ctx, 0, "rate:"+prefix+"*", 1000).Iterator()
			for iter.Next(ctx) {
				rdb.Del(ctx, iter.Val())
			}
		}()
		r, err := ratelimit.NewRedis(rdb, prefix, big)
		if err != nil {
			b.Fatal(err)
		}
		limiters["redis"] = r
	}
	for _, name := range []string{"memory", "redis"} {
		l, ok := limiters[name]
		if !ok {
			continue
		}
		b.Run(name+"/one client", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Spend(b.Context(), "ip:192.0.2.1", 1); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/new clients", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := l.Spend(b.Context(), "ip:"+strconv.Itoa(i), 1); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/one client parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := l.Spend(b.Context(), "ip:192.0.2.1", 1); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
