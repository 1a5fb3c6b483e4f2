// Package retry holds what papergraph's HTTP clients (the OAI-PMH
// harvester, the enrichers, the embeddings provider, the analyser and
// ask's model) share: the JSON POST of an OpenAI-compatible API, and
// retrying a busy server: reading its Retry-After, waiting under the
// caller's context, and trying again with a doubling backoff.
package retry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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

// Temporary marks an error worth trying again after: a busy or failing
// server, a request lost on the network. Wait is the wait the server
// asked for (0: none).
type Temporary struct {
	Err  error
	Wait time.Duration
}

func (e *Temporary) Error() string { return e.Err.Error() }
func (e *Temporary) Unwrap() error { return e.Err }

// Busy says whether an HTTP status asks the client to try again later: a
// 429 or a 5xx.
func Busy(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// PostJSON builds the POST of a JSON body to an OpenAI-compatible API's
// url, with key as its bearer token when there is one.
func PostJSON(ctx context.Context, url, key string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return req, nil
}

// Refusal is the error for an answer whose status is not 200 OK, named
// by what (the endpoint) with a snippet of its body: a *Temporary, waiting
// what Retry-After asks, when the status says the server is busy.
func Refusal(what string, resp *http.Response, body []byte) error {
	err := fmt.Errorf("%s answered %s: %s", what, resp.Status, Snippet(body))
	if Busy(resp.StatusCode) {
		wait, _ := After(resp.Header.Get("Retry-After"), time.Now())
		return &Temporary{Err: err, Wait: wait}
	}
	return err
}

// Policy says how Do tries again.
type Policy struct {
	// Attempts is the number of times a call is tried (default 5).
	Attempts int
	// Backoff is the first wait before trying again (default 1s), doubled
	// after each; MaxWait bounds every wait, a server's too (default 1m).
	Backoff, MaxWait time.Duration
	// Notify, when set, hears of each failure that will be tried again.
	Notify func(err error, wait time.Duration)
}

// Do calls try until it succeeds, fails with an error that is not a
// *Temporary, or has been tried p.Attempts times, waiting between tries
// the doubling backoff or the wait the *Temporary asks for. The error it
// returns is the last one, without its *Temporary.
func Do[T any](ctx context.Context, p Policy, try func() (T, error)) (T, error) {
	attempts, backoff, maxWait := p.Attempts, p.Backoff, p.MaxWait
	if attempts <= 0 {
		attempts = 5
	}
	if backoff <= 0 {
		backoff = time.Second
	}
	if maxWait <= 0 {
		maxWait = time.Minute
	}
	for attempt := 1; ; attempt++ {
		v, err := try()
		var tmp *Temporary
		if err == nil || !errors.As(err, &tmp) || attempt == attempts || ctx.Err() != nil {
			if tmp != nil {
				err = tmp.Err
			}
			return v, err
		}
		wait := backoff
		if tmp.Wait > 0 {
			wait = tmp.Wait
		}
		wait = min(wait, maxWait)
		if p.Notify != nil {
			p.Notify(tmp.Err, wait)
		}
		if err := Sleep(ctx, wait); err != nil {
			var zero T
			return zero, err
		}
		backoff *= 2
	}
}

// Snippet is the start of a server's answer, on one line, for an error
// that says what the server said.
func Snippet(b []byte) string {
	const most = 200
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > most {
		cut := most
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
