package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
)

// DefaultMaxKeys bounds the budgets Memory keeps: about 20 MB of heap when
// full (measured with IPv6 keys). A client that sends requests from ever
// new addresses only pushes out the budgets least recently used, which by
// then are usually whole again anyway; pushing out its own spent budget
// would take DefaultMaxKeys addresses, each a budget in itself.
const DefaultMaxKeys = 100_000

// Memory is a Limiter whose budgets live in this process.
type Memory struct {
	limit int
	gcra  *throttled.GCRARateLimiterCtx
	// store holds each budget as throttled's GCRA does: the theoretical
	// arrival time, in Unix nanoseconds; every is one point's share of
	// the hour.
	store throttled.GCRAStoreCtx
	every time.Duration
}

// NewMemory returns a Limiter of limit points per hour that keeps the
// budgets of the maxKeys clients seen most recently (DefaultMaxKeys when
// maxKeys is 0 or less).
func NewMemory(limit, maxKeys int) (*Memory, error) {
	if err := checkLimit(limit); err != nil {
		return nil, err
	}
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	store, err := memstore.NewCtx(maxKeys)
	if err != nil {
		return nil, err
	}
	// throttled allows MaxBurst+1 points at once.
	gcra, err := throttled.NewGCRARateLimiterCtx(store, throttled.RateQuota{MaxRate: throttled.PerHour(limit), MaxBurst: limit - 1})
	if err != nil {
		return nil, err
	}
	return &Memory{limit: limit, gcra: gcra, store: store, every: time.Hour / time.Duration(limit)}, nil
}

// Spend implements Limiter.
func (m *Memory) Spend(ctx context.Context, key string, cost int) (Result, error) {
	return spendChecked(ctx, key, cost, m.limit, m.spend)
}

func (m *Memory) spend(ctx context.Context, key string, cost int) (Result, error) {
	limited, r, err := m.gcra.RateLimitCtx(ctx, key, cost)
	if err != nil {
		return Result{}, err
	}
	return newResult(m.limit, r.Remaining, !limited, r.ResetAfter, r.RetryAfter, time.Now()), nil
}

// casAttempts bounds Adjust's compare-and-swap retries, as throttled
// bounds its own.
const casAttempts = 10

// Adjust implements Limiter: it moves the budget's arrival time by delta
// points, never before now (a whole budget).
func (m *Memory) Adjust(ctx context.Context, key string, delta int) (Result, error) {
	for range casAttempts {
		tatVal, now, err := m.store.GetWithTime(ctx, key)
		if err != nil {
			return Result{}, err
		}
		tat := now
		if tatVal != -1 {
			tat = later(now, time.Unix(0, tatVal))
		}
		next := later(now, tat.Add(time.Duration(delta)*m.every))
		var swapped bool
		if tatVal == -1 {
			swapped, err = m.store.SetIfNotExistsWithTTL(ctx, key, next.UnixNano(), next.Sub(now))
		} else {
			swapped, err = m.store.CompareAndSwapWithTTL(ctx, key, tatVal, next.UnixNano(), next.Sub(now))
		}
		if err != nil {
			return Result{}, err
		}
		if swapped {
			ahead := next.Sub(now)
			return newResult(m.limit, int((time.Duration(m.limit)*m.every-ahead)/m.every), true, ahead, -1, now), nil
		}
	}
	return Result{}, fmt.Errorf("ratelimit: budget of %q changed under %d adjustments in a row", key, casAttempts)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
