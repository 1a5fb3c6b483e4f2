package ratelimit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/papergraph/papergraph/ratelimit"
)

// closedRedis returns a Redis limiter whose server is a port nothing
// listens on.
func closedRedis(t *testing.T) ratelimit.Limiter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rdb, err := ratelimit.DialRedis("redis://" + addr + "/0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	r, err := ratelimit.NewRedis(rdb, "", limit)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRedisDownIsAnError(t *testing.T) {
	res, err := closedRedis(t).Spend(t.Context(), "a", 1)
	if err == nil || res.Allowed {
		t.Errorf("Spend on a closed port: allowed %v, error %v; want an error", res.Allowed, err)
	}
}

// TestDialRedisFailsFast checks the options that keep a dead Redis from
// stalling requests: go-redis's own defaults (three retries, 5 s dial)
// would hold each request far longer than a Redis answer takes.
func TestDialRedisFailsFast(t *testing.T) {
	rdb, err := ratelimit.DialRedis("redis://127.0.0.1:1/0")
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	o := rdb.Options()
	if o.MaxRetries > 1 || o.DialTimeout > 250*time.Millisecond || o.ReadTimeout > 250*time.Millisecond {
		t.Errorf("MaxRetries %d, DialTimeout %v, ReadTimeout %v; want at most 1, 250ms, 250ms", o.MaxRetries, o.DialTimeout, o.ReadTimeout)
	}
}

func TestFallbackSpendsLocallyWhileRedisIsDown(t *testing.T) {
	var log bytes.Buffer
	l := ratelimit.WithFallback(closedRedis(t), newMemory(t), time.Hour, slog.New(slog.NewTextHandler(&log, nil)))
	for i := 1; i <= 3; i++ {
		res, err := l.Spend(t.Context(), "a", 1)
		if err != nil || !res.Allowed || res.Remaining != limit-i {
			t.Errorf("spend %d: allowed %v, remaining %d, error %v; want allowed, %d, nil", i, res.Allowed, res.Remaining, err, limit-i)
		}
	}
	if got := strings.Count(log.String(), "level=WARN"); got != 1 {
		t.Errorf("%d warnings, want 1 for the outage:\n%s", got, log.String())
	}
}

// flaky is a primary Limiter that fails while err is set.
type flaky struct {
	err   error
	calls int
}

func (f *flaky) Spend(context.Context, string, int) (ratelimit.Result, error) {
	f.calls++
	if f.err != nil {
		return ratelimit.Result{}, f.err
	}
	return ratelimit.Result{Limit: 1, Remaining: 1, Allowed: true}, nil
}

func (f *flaky) Adjust(ctx context.Context, key string, _ int) (ratelimit.Result, error) {
	return f.Spend(ctx, key, 0)
}

func TestFallback(t *testing.T) {
	down := errors.New("down")
	tests := []struct {
		name  string
		retry time.Duration
		// errs are the primary's states, one per Spend: nil is up.
		errs []error
		// wantPrimary says which Spends the primary answers.
		wantPrimary []bool
		wantCalls   int
		wantLog     []string
	}{
		{"primary up", time.Hour, []error{nil, nil}, []bool{true, true}, 2, nil},
		{"outage skips the primary until retry", time.Hour, []error{down, nil, nil}, []bool{false, false, false}, 1,
			[]string{"WARN"}},
		{"primary back after retry", 0, []error{down, down, nil, nil}, []bool{false, false, true, true}, 4,
			[]string{"WARN", "INFO"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			primary := &flaky{}
			l := ratelimit.WithFallback(primary, newMemory(t), tt.retry, slog.New(slog.NewTextHandler(&log, nil)))
			for i, err := range tt.errs {
				primary.err = err
				res, serr := l.Spend(t.Context(), "a", 1)
				if serr != nil {
					t.Fatalf("spend %d: %v", i, serr)
				}
				// The primary's budgets have a limit of 1, the local one's limit.
				if got := res.Limit == 1; got != tt.wantPrimary[i] {
					t.Errorf("spend %d: answered by the primary %v, want %v", i, got, tt.wantPrimary[i])
				}
			}
			if primary.calls != tt.wantCalls {
				t.Errorf("primary called %d times, want %d", primary.calls, tt.wantCalls)
			}
			var levels []string
			for line := range strings.Lines(log.String()) {
				_, rest, _ := strings.Cut(line, "level=")
				level, _, _ := strings.Cut(rest, " ")
				levels = append(levels, level)
			}
			if strings.Join(levels, ",") != strings.Join(tt.wantLog, ",") {
				t.Errorf("logged %v, want %v:\n%s", levels, tt.wantLog, log.String())
			}
		})
	}
}

// TestFallbackAdjustsLocallyWhileRedisIsDown refunds with the local
// limiter the points spent there during an outage.
func TestFallbackAdjustsLocallyWhileRedisIsDown(t *testing.T) {
	l := ratelimit.WithFallback(closedRedis(t), newMemory(t), time.Hour, slog.New(slog.DiscardHandler))
	if _, err := l.Spend(t.Context(), "a", 10); err != nil {
		t.Fatal(err)
	}
	res, err := l.Adjust(t.Context(), "a", -7)
	if err != nil || res.Remaining != limit-3 {
		t.Errorf("Adjust(-7) after spending 10: remaining %d, error %v; want %d, nil", res.Remaining, err, limit-3)
	}
}

func TestFallbackPassesCostOverLimit(t *testing.T) {
	primary, err := ratelimit.NewMemory(limit, 0)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	l := ratelimit.WithFallback(primary, newMemory(t), time.Hour, slog.New(slog.NewTextHandler(&log, nil)))
	if _, err := l.Spend(t.Context(), "a", limit+1); !errors.Is(err, ratelimit.ErrCostOverLimit) {
		t.Errorf("got error %v, want ErrCostOverLimit", err)
	}
	if log.Len() > 0 {
		t.Errorf("a costly request was logged as an outage:\n%s", log.String())
	}
}

func newMemory(t *testing.T) *ratelimit.Memory {
	t.Helper()
	m, err := ratelimit.NewMemory(limit, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
