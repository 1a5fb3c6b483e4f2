package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/papergraph/papergraph/ratelimit"
	"github.com/papergraph/papergraph/reqid"
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
	// after the request, nil when no limiter is set, and limited says
	// the request was refused for it.
	client  string
	rate    *ratelimit.Result
	limited bool
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

// rateHeaders names each request's rate-limit budget and states it in the
// X-RateLimit-* headers of the answer, which is a 429 with Retry-After when
// the cost extension refused the request for it.
func rateHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ex := exchangeFrom(r.Context())
		ex.client = ratelimit.ClientKey(r, nil)
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
		if w.ex.rate != nil {
			ratelimit.WriteHeaders(w.Header(), *w.ex.rate)
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
