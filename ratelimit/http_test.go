package ratelimit_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/papergraph/papergraph/ratelimit"
)

func TestWriteHeaders(t *testing.T) {
	reset := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name string
		res  ratelimit.Result
		want map[string]string
	}{
		{"allowed",
			ratelimit.Result{Limit: 5000, Remaining: 4990, Used: 10, Reset: reset, Allowed: true},
			map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4990", "X-RateLimit-Used": "10",
				"X-RateLimit-Reset": "1800000000", "Retry-After": ""}},
		{"reset rounded up",
			ratelimit.Result{Limit: 5000, Remaining: 4990, Used: 10, Reset: reset.Add(time.Millisecond), Allowed: true},
			map[string]string{"X-RateLimit-Reset": "1800000001", "Retry-After": ""}},
		{"refused: retry after, rounded up",
			ratelimit.Result{Limit: 5000, Remaining: 3, Used: 4997, Reset: reset, RetryAfter: 1500 * time.Millisecond},
			map[string]string{"X-RateLimit-Remaining": "3", "X-RateLimit-Used": "4997", "Retry-After": "2"}},
		{"refused for good: no retry after",
			ratelimit.Result{Limit: 5000, Remaining: 5000, Reset: reset},
			map[string]string{"X-RateLimit-Remaining": "5000", "Retry-After": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			ratelimit.WriteHeaders(h, tt.res)
			for k, want := range tt.want {
				if got := h.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
		})
	}
}
