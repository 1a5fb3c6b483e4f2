package enrich

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/papergraph/papergraph/retry"
)

// ErrRequestCap stops a run that has made the requests Options.MaxRequests
// allows; the next run goes on where it stopped.
var ErrRequestCap = errors.New("request cap reached")

// maxBody bounds one response: a page of 100 works with thousands of
// authors each stays far below it.
const maxBody = 256 << 20

// client makes the requests of one run, one at a time: it keeps the
// delay between them, retries a 429 or 503 after the Retry-After the
// server asks for (or an exponential backoff when it names none), and
// counts every attempt against the run's cap.
type client struct {
	http        *http.Client
	delay       time.Duration
	backoff     time.Duration
	maxWait     time.Duration
	tries       int
	maxRequests int
	sleep       func(context.Context, time.Duration) error

	requests int
	last     time.Time
}

// httpError is a response the run cannot use.
type httpError struct {
	method, url string
	status      int
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.method, e.url, e.status, http.StatusText(e.status))
}

// do sends the request and returns the body of its 200 response.
func (c *client) do(ctx context.Context, method, url string, header http.Header, body []byte) ([]byte, error) {
	for try := 1; ; try++ {
		if c.maxRequests > 0 && c.requests >= c.maxRequests {
			return nil, ErrRequestCap
		}
		if wait := c.delay - time.Since(c.last); !c.last.IsZero() && wait > 0 {
			if err := c.sleep(ctx, wait); err != nil {
				return nil, err
			}
		}
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		c.requests++
		resp, err := c.http.Do(req)
		c.last = time.Now()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, url, err)
		}
		switch {
		case resp.StatusCode == http.StatusOK:
			return b, nil
		case resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable,
			try >= c.tries:
			return nil, &httpError{method: method, url: url, status: resp.StatusCode}
		}
		if err := c.sleep(ctx, c.retryWait(resp.Header.Get("Retry-After"), try)); err != nil {
			return nil, err
		}
	}
}

// retryWait is how long to wait before try+1: what Retry-After asks (in
// seconds or as a date), else the backoff doubled per try, at most maxWait.
func (c *client) retryWait(retryAfter string, try int) time.Duration {
	d := c.backoff << (try - 1)
	if wait, ok := retry.After(retryAfter, time.Now()); ok {
		d = wait
	}
	return max(0, min(d, c.maxWait))
}
