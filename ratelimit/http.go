package ratelimit

import (
	"net/http"
	"strconv"
	"time"
)

// WriteHeaders states res in h the way GitHub does: X-RateLimit-Limit,
// -Remaining, -Used, and -Reset in Unix seconds (rounded up, so that the
// budget is whole by then). For a refusal it adds Retry-After in seconds,
// rounded up; the caller answers it with http.StatusTooManyRequests.
func WriteHeaders(h http.Header, res Result) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(res.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
	h.Set("X-RateLimit-Used", strconv.Itoa(res.Used))
	reset := res.Reset.Unix()
	if res.Reset.Nanosecond() > 0 {
		reset++
	}
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
	if !res.Allowed && res.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(ceilSeconds(res.RetryAfter), 10))
	}
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
