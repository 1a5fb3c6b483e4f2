package ratelimit

import (
	"context"
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
	return &Memory{limit: limit, gcra: gcra}, nil
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
