package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/ratelimit"
	"github.com/papergraph/papergraph/reqid"
	"github.com/papergraph/papergraph/resolvers"
)

// requestIDHeader carries a request's id in from a proxy or client and back
// out in the response.
const requestIDHeader = "X-Request-Id"

// exchange is what the server learns about one request while answering it;
// the outermost middleware owns it and logs it once the response is done.
type exchange struct {
	status    int
	operation string // GraphQL operation name, if any
	errors    bool   // whether the GraphQL response carried errors
	// client names the request's rate-limit budget; rate is that budget
	// after the request's latest spend, nil when no limiter is set, and
	// limited says the request was refused for it. rate is read and set
	// through latestRate and setRate: the subscriptions of a WebSocket
	// share their connection's exchange and spend at once.
	client string
	rateMu sync.Mutex
	rate   *ratelimit.Result
	// weight is the client's weight in the share of the database's
	// statement slots (see db.Scheduler): its database API key's,
	// db.DefaultClientWeight for any other client.
	weight  int
	limited bool
	// limiter is the server's rate limiter, nil when there is none;
	// unknownKey says the request sent an API key the server did not
	// issue.
	limiter    ratelimit.Limiter
	unknownKey bool
	// quiet leaves the request out of the request log: a refusal that a
	// counter counts and a rate-limited line reports (see refusalLog).
	quiet bool
}

// latestRate is the client's budget after the request's latest spend,
// nil before any or without a limiter.
func (ex *exchange) latestRate() *ratelimit.Result {
	ex.rateMu.Lock()
	defer ex.rateMu.Unlock()
	return ex.rate
}

func (ex *exchange) setRate(res ratelimit.Result) {
	ex.rateMu.Lock()
	ex.rate = &res
	ex.rateMu.Unlock()
}

type exchangeKey struct{}

// exchangeFrom returns the request's exchange. Requests that did not pass
// through observe get a throwaway one, so callers need not check.
func exchangeFrom(ctx context.Context) *exchange {
	if ex, ok := ctx.Value(exchangeKey{}).(*exchange); ok {
		return ex
	}
	return &exchange{}
}

// observe gives each request an id and an exchange, and logs one line per
// request when it is answered.
func observe(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(requestIDHeader)
		if !validRequestID(id) {
			id = rand.Text()
		}
		w.Header().Set(requestIDHeader, id)
		ex := &exchange{}
		ctx := context.WithValue(reqid.With(r.Context(), id), exchangeKey{}, ex)
		next.ServeHTTP(&statusRecorder{ResponseWriter: w, ex: ex}, r.WithContext(ctx))
		if ex.quiet {
			return
		}
		if ex.status == 0 {
			ex.status = http.StatusOK
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", ex.status),
			slog.Duration("duration", time.Since(start)),
			slog.String("request_id", id),
		}
		if ex.operation != "" {
			attrs = append(attrs, slog.String("operation", ex.operation))
		}
		level := slog.LevelInfo
		if ex.status >= http.StatusInternalServerError {
			level = slog.LevelWarn
		}
		log.LogAttrs(r.Context(), level, "request", attrs...)
	})
}

// validRequestID reports whether a client-supplied id is safe to echo and
// log: 1 to 64 characters from [A-Za-z0-9._:-].
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '.' || c == '_' || c == ':' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// statusRecorder notes the status code written through it on the exchange.
type statusRecorder struct {
	http.ResponseWriter
	ex *exchange
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.ex.status == 0 {
		s.ex.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.ex.status == 0 {
		s.ex.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// limitBody answers 413 to requests whose body exceeds limit bytes. It reads
// the body whole (gqlgen would anyway) so that the refusal comes from here,
// with its proper status, rather than as a decoding error inside gqlgen.
func limitBody(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		if err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "could not read request body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// identify names each request's client: its API key's when it sends one
// the server issued, else its address, read through trustedProxies. The
// client's name keys its rate-limit budget and its share of the database,
// in which a database key's weight counts (keys of the file weigh
// db.DefaultClientWeight, as addresses do).
//
// A key is issued when it is one of keys (serve's --api-keys file) or a
// key of the database that is not revoked (papergraph apikey create,
// recognised by db.APIKeyPrefix, read through users); only the latter
// signs a user in. A request with a key of that prefix that neither knows
// is refused (see rateHeaders), as is any other key the file lacks when
// there is a file; other keys are ignored without one. When writer is not
// nil, a database key's last use is recorded, at most once an hour.
func identify(keys *ratelimit.Keys, users, writer *bun.DB, trustedProxies []netip.Prefix, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		ex := exchangeFrom(ctx)
		key := ratelimit.PresentedKey(r)
		userKey := strings.HasPrefix(key, db.APIKeyPrefix) && len(key) <= maxUserKeyLen && users != nil
		if userKey {
			k, err := db.ActiveAPIKey(ctx, users, db.HashAPIKey(key))
			if err != nil {
				slog.ErrorContext(ctx, "api key: lookup failed", "request_id", reqid.From(ctx), "err", err)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"errors":[{"message":"the API key could not be checked: try again","extensions":{"code":"UNAVAILABLE"}}]}` + "\n"))
				return
			}
			if k != nil {
				ex.client, ex.weight = ratelimit.KeyClient(key), k.Weight
				ctx = resolvers.WithViewer(ctx, k)
				touch(ctx, writer, k)
			}
		}
		switch {
		case ex.client != "":
		case keys != nil:
			client, err := keys.Client(r)
			ex.client, ex.unknownKey = client, err != nil
		case strings.HasPrefix(key, db.APIKeyPrefix):
			ex.unknownKey = true
		}
		if ex.client == "" {
			ex.client = ratelimit.ClientKey(r, trustedProxies)
		}
		if ex.weight == 0 {
			ex.weight = db.DefaultClientWeight
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// maxUserKeyLen bounds the keys identify looks up: a key of
// db.CreateAPIKey's is 46 characters.
const maxUserKeyLen = 64

// touchEvery is how stale a key's last use may be before identify
// records a new one.
const touchEvery = time.Hour

// touch records k's use through writer when its last is older than
// touchEvery; a failure is logged, not the request's.
func touch(ctx context.Context, writer *bun.DB, k *db.APIKey) {
	now := time.Now()
	if writer == nil || now.Sub(k.LastUsedAt) < touchEvery {
		return
	}
	if err := db.TouchAPIKey(ctx, writer, k.ID, now); err != nil {
		slog.WarnContext(ctx, "api key: could not record its use", "request_id", reqid.From(ctx), "err", err)
	}
}

// rateHeaders states the request's budget in the X-RateLimit-* headers of
// the answer, which is a 429 with Retry-After when the cost extension
// refused the request for it. A request that sent an API key the server
// did not issue is refused with 401.
func rateHeaders(limiter ratelimit.Limiter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ex := exchangeFrom(r.Context())
		ex.limiter = limiter
		if ex.unknownKey {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("WWW-Authenticate", `Bearer realm="papergraph"`)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"errors":[{"message":"unknown API key: send one the server issued, or none","extensions":{"code":"UNAUTHENTICATED"}}]}` + "\n"))
			return
		}
		next.ServeHTTP(&rateWriter{ResponseWriter: w, ex: ex}, r)
	})
}

type rateWriter struct {
	http.ResponseWriter
	ex      *exchange
	written bool
}

func (w *rateWriter) WriteHeader(code int) {
	if !w.written {
		w.written = true
		if rate := w.ex.latestRate(); rate != nil {
			ratelimit.WriteHeaders(w.Header(), *rate)
		}
		if w.ex.limited {
			code = http.StatusTooManyRequests
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *rateWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *rateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// errBudgetSpent is a request refused because its client's budget holds
// fewer points than it costs.
type errBudgetSpent struct{ res ratelimit.Result }

func (e *errBudgetSpent) Error() string {
	return fmt.Sprintf("the hourly budget is spent: %d points remain; try again in %s",
		e.res.Remaining, (e.res.RetryAfter + time.Second - 1).Truncate(time.Second))
}

// spendPoints spends points of the request's budget, for GraphQL and the
// exports alike (an export spends a point per page it reads). It returns
// the budget after it, nil when no limiter is set; *errBudgetSpent when
// too few points remain, and the request is then answered 429;
// ratelimit.ErrCostOverLimit (with the budget) when points is more than
// the whole budget.
func spendPoints(ctx context.Context, points int) (*ratelimit.Result, error) {
	res, err := spendMore(ctx, points)
	if _, spent := errors.AsType[*errBudgetSpent](err); spent {
		exchangeFrom(ctx).limited = true
	}
	return res, err
}

// spendMore is spendPoints for points beyond what the request was
// admitted for (a model's tokens), whose refusal leaves the answer it
// refuses them in its status.
func spendMore(ctx context.Context, points int) (*ratelimit.Result, error) {
	ex := exchangeFrom(ctx)
	if ex.limiter == nil {
		return nil, nil
	}
	res, err := ex.limiter.Spend(ctx, ex.client, points)
	if err != nil && !errors.Is(err, ratelimit.ErrCostOverLimit) {
		return nil, err
	}
	ex.setRate(res)
	if err == nil && !res.Allowed {
		err = &errBudgetSpent{res}
	}
	return &res, err
}
