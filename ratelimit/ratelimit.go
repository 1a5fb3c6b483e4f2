// Package ratelimit spends points of each client's hourly budget, as
// GitHub's GraphQL API does: a request costs points computed before it
// runs, a budget of Limit points refills continuously over the hour, and a
// request that costs more than remains is refused.
//
// Both stores run the generic cell rate algorithm (GCRA): a budget is one
// timestamp per client, the "theoretical arrival time", so that there are
// no counters to reset and no window edge at which a client can spend two
// budgets at once. Memory keeps the timestamps in this process (throttled's
// GCRA over its bounded LRU store); Redis keeps them in Redis (go-redis's
// redis_rate Lua script), where every papergraph instance behind a load
// balancer shares them. Both give the same Result for the same spends;
// the tests hold them to one table.
//
// Points come back at Limit per hour, one every hour/Limit: a client that
// spends 100 of 5,000 points has them all back 72 seconds later. Result
// states the budget in these terms:
//
//   - Remaining: whole points that can be spent now; Used is Limit − Remaining.
//   - Reset: when the budget is whole again (Remaining == Limit). GitHub's
//     Reset is the end of a fixed hour; here it is when the points spent so
//     far have come back, never more than an hour away.
//   - RetryAfter (refusals only): how long until the refused cost is
//     available, which is sooner than Reset.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultLimit is the budget papergraph serve gives each client, in points
// per hour: GitHub's for an authenticated user. A person reading a page of
// the reference front end a minute spends some hundreds of points an hour
// at a few points a page, so a handful of people behind one address fit
// in it; a crawler can sustain about 1.4 one-point requests a second.
const DefaultLimit = 5000

// Limiter spends points of a client's hourly budget.
type Limiter interface {
	// Spend takes cost points of key's budget if that many remain; cost 0
	// only reads the budget. A cost above the whole limit can never be
	// spent: Spend then reads the budget and returns it with an error
	// wrapping ErrCostOverLimit.
	Spend(ctx context.Context, key string, cost int) (Result, error)
	// Adjust changes what key has spent by delta points, after the
	// fact: a request that reserved its estimate before it ran settles
	// its actual cost with it. A negative delta gives points back, never
	// more than make the budget whole; a positive one is spent even when
	// fewer remain, leaving the budget short (Remaining 0) until the
	// points come back. The Result is the budget after it, Allowed.
	Adjust(ctx context.Context, key string, delta int) (Result, error)
}

// Result is a client's budget after a Spend.
type Result struct {
	// Limit is the budget's size, in points per hour.
	Limit int
	// Remaining is the number of points that can be spent now; Used is
	// Limit − Remaining.
	Remaining, Used int
	// Reset is when the budget is whole again.
	Reset time.Time
	// Allowed says the cost was spent (always true for cost 0).
	Allowed bool
	// RetryAfter is, when the cost was refused, how long until that many
	// points are available; zero when it was allowed.
	RetryAfter time.Duration
}

// ErrCostOverLimit says a request costs more points than the whole hourly
// limit, so that no wait would let it run.
var ErrCostOverLimit = errors.New("ratelimit: cost exceeds the hourly limit")

// spendChecked spends cost with spend, a GCRA library's step, after
// refusing the costs that no budget can pay.
func spendChecked(ctx context.Context, key string, cost, limit int, spend func(context.Context, string, int) (Result, error)) (Result, error) {
	if cost < 0 {
		return Result{}, fmt.Errorf("ratelimit: negative cost %d", cost)
	}
	if cost <= limit {
		return spend(ctx, key, cost)
	}
	res, err := spend(ctx, key, 0)
	if err != nil {
		return Result{}, err
	}
	res.Allowed = false
	return res, fmt.Errorf("%w: cost %d, limit %d points per hour", ErrCostOverLimit, cost, limit)
}

// checkLimit refuses limits that describe no budget.
func checkLimit(limit int) error {
	if limit <= 0 {
		return fmt.Errorf("ratelimit: limit must be positive, got %d", limit)
	}
	return nil
}

// newResult states a budget in Result's terms from the relative figures
// both GCRA libraries report. A negative retryAfter is their "not refused".
func newResult(limit, remaining int, allowed bool, resetAfter, retryAfter time.Duration, now time.Time) Result {
	remaining = max(0, min(remaining, limit))
	if allowed || retryAfter < 0 {
		retryAfter = 0
	}
	return Result{
		Limit:      limit,
		Remaining:  remaining,
		Used:       limit - remaining,
		Reset:      now.Add(max(0, resetAfter)),
		Allowed:    allowed,
		RetryAfter: retryAfter,
	}
}
