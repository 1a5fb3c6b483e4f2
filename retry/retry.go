// Package retry holds what papergraph's HTTP clients (the OAI-PMH
// harvester and the enrichers) share to retry a busy server: reading its
// Retry-After and waiting under the caller's context.
package retry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// After reads a Retry-After header, seconds or an HTTP date, as the wait
// from now it asks for (0 for a date already past); false when there is
// none or it is neither.
func After(header string, now time.Time) (time.Duration, bool) {
	header = strings.TrimSpace(header)
	if header == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(header); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(header); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// Sleep waits d, or until ctx ends, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
