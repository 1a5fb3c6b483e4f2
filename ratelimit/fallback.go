package ratelimit

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// Fallback is a Limiter that spends with a primary, shared Limiter and,
// while that one fails, with a local one. With Redis as the primary and
// Memory as the local one, an outage of Redis neither stops the API (as
// failing closed would) nor lifts every limit (as failing open would):
// each process enforces the whole budget on its own, so a client can
// spend at most one budget per process until Redis is back.
type Fallback struct {
	primary, local Limiter
	retry          time.Duration
	log            *slog.Logger
	// down is when the primary last failed, in Unix nanoseconds; 0 while
	// it works.
	down atomic.Int64
}

// WithFallback returns a Limiter that spends with primary and, for retry
// after each failure of primary, with local instead. It logs the first
// failure of an outage as a warning and the recovery as information.
func WithFallback(primary, local Limiter, retry time.Duration, log *slog.Logger) *Fallback {
	return &Fallback{primary: primary, local: local, retry: retry, log: log}
}

// Spend implements Limiter.
func (f *Fallback) Spend(ctx context.Context, key string, cost int) (Result, error) {
	return f.with(ctx, func(l Limiter) (Result, error) { return l.Spend(ctx, key, cost) })
}

// Adjust implements Limiter.
func (f *Fallback) Adjust(ctx context.Context, key string, delta int) (Result, error) {
	return f.with(ctx, func(l Limiter) (Result, error) { return l.Adjust(ctx, key, delta) })
}

// with runs op on the primary, or on the local limiter while the primary
// is down.
func (f *Fallback) with(ctx context.Context, op func(Limiter) (Result, error)) (Result, error) {
	now := time.Now()
	down := f.down.Load()
	if down != 0 && now.Sub(time.Unix(0, down)) < f.retry {
		return op(f.local)
	}
	res, err := op(f.primary)
	switch {
	case ctx.Err() != nil:
		// The request gave up, which says nothing about the store.
		return res, err
	case err == nil || errors.Is(err, ErrCostOverLimit):
		if down != 0 && f.down.CompareAndSwap(down, 0) {
			f.log.Info("rate limit store is back: budgets are shared again")
		}
		return res, err
	}
	if f.down.Swap(now.UnixNano()) == 0 {
		f.log.Warn("rate limit store failed: each process keeps its own budgets until it is back",
			"err", err, "retry", f.retry)
	}
	return op(f.local)
}
