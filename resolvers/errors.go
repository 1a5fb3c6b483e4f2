package resolvers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/reqid"
)

// Error codes in extensions.code.
const (
	CodeBadUserInput = "BAD_USER_INPUT"
	CodeInternal     = "INTERNAL_SERVER_ERROR"
	// CodePathSearchLimit is a collaboration path search that reached too
	// many researchers and gave up (network.ErrPathBudget).
	CodePathSearchLimit = "PATH_SEARCH_LIMIT"
	// CodeTimeout is a field stopped because its request ran past its
	// deadline; CodeCancelled one stopped because the request was
	// cancelled (the client went away, or the server is shutting down).
	CodeTimeout   = "TIMEOUT"
	CodeCancelled = "CANCELLED"
)

// badInput is the error for a malformed argument; the message starts with
// the argument's name, and extensions.argument is that name. It wraps an
// *InputError, for callers outside GraphQL. Quote what the client sent
// with QuoteInput.
func badInput(arg, format string, args ...any) error {
	ie := &InputError{Arg: arg, Msg: fmt.Sprintf(format, args...)}
	return &gqlerror.Error{
		Message:    ie.Error(),
		Err:        ie,
		Extensions: map[string]any{"code": CodeBadUserInput, "argument": arg},
	}
}

// InputError is a malformed argument: Arg is its name as the schema
// spells it ("query", "filter.researcher"), Msg what is wrong with it.
type InputError struct{ Arg, Msg string }

func (e *InputError) Error() string { return e.Arg + ": " + e.Msg }

// internalError is what a client sees of a failure on our side: a request
// id to quote, nothing else. The details went to the log under that id.
type internalError struct{ requestID string }

func (e *internalError) Error() string { return "internal server error (request " + e.requestID + ")" }

// requestID is the id the HTTP server gave the request (see package
// reqid), or a fresh one when there is none.
func requestID(ctx context.Context) string {
	if id := reqid.From(ctx); id != "" {
		return id
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ErrorPresenter turns resolver errors into GraphQL errors. Errors meant
// for the client (bad input, validation) pass as they are; anything else
// (a database error, say) is logged with slog under the request's id and
// reaches the client as INTERNAL_SERVER_ERROR with that id only, so that no
// response carries SQL, a stack or a server path. Install it with
// handler.Server.SetErrorPresenter.
//
// Arguments gqlgen cannot read (a malformed Time, say) are BAD_USER_INPUT
// naming the argument, and no message is longer than maxMessageBytes:
// messages of gqlgen's and gqlparser's own (an unknown enum value) quote
// what the client sent in full.
func ErrorPresenter(ctx context.Context, err error) *gqlerror.Error {
	var ie *internalError
	switch {
	case errors.As(err, &ie):
	case forClient(err):
		return shortened(graphql.DefaultErrorPresenter(ctx, err))
	case ctx.Err() != nil:
		// Whatever the driver made of it, the request's end stopped the
		// field; the client should hear that, not of an internal error.
		code, msg := CodeCancelled, "the request was cancelled before this field was read"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			code, msg = CodeTimeout, "the request ran past its time limit before this field was read; ask for less"
		}
		return &gqlerror.Error{Message: msg, Path: graphql.GetPath(ctx), Extensions: map[string]any{"code": code}}
	default:
		if ae := argumentError(ctx, err); ae != nil {
			return shortened(ae)
		}
		ie = &internalError{requestID: requestID(ctx)}
		slog.ErrorContext(ctx, "graphql: resolver failed", "request_id", ie.requestID, "path", graphql.GetPath(ctx).String(), "err", err)
	}
	return &gqlerror.Error{
		Message:    ie.Error(),
		Path:       graphql.GetPath(ctx),
		Extensions: map[string]any{"code": CodeInternal, "requestId": ie.requestID},
	}
}

// maxMessageBytes is the longest message an error has, and
// maxPathNameBytes the longest name in its path: a path names the keys of
// the client's own variables, which may be of any length.
const (
	maxMessageBytes  = 300
	maxPathNameBytes = 100
)

// shortened is e with its message cut to maxMessageBytes and each name in
// its path to maxPathNameBytes.
func shortened(e *gqlerror.Error) *gqlerror.Error {
	long := slices.ContainsFunc(e.Path, func(p ast.PathElement) bool {
		name, ok := p.(ast.PathName)
		return ok && len(name) > maxPathNameBytes
	})
	if len(e.Message) <= maxMessageBytes && !long {
		return e
	}
	cut := *e
	cut.Message = truncated(cut.Message, maxMessageBytes)
	if long {
		cut.Path = make(ast.Path, len(e.Path))
		for i, p := range e.Path {
			if name, ok := p.(ast.PathName); ok {
				p = ast.PathName(truncated(string(name), maxPathNameBytes))
			}
			cut.Path[i] = p
		}
	}
	return &cut
}

// truncated is s cut to at most n bytes, ending in "…" when it was cut,
// on a character boundary.
func truncated(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// argumentError is err as badInput when gqlgen met it reading the
// arguments of the current field, nil otherwise: such an error's path goes
// on from the field's into one of its arguments ("filter",
// "publishedFrom"), which it names.
func argumentError(ctx context.Context, err error) *gqlerror.Error {
	var ge *gqlerror.Error
	fc := graphql.GetFieldContext(ctx)
	if !errors.As(err, &ge) || fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil {
		return nil
	}
	field := fc.Path()
	if len(ge.Path) <= len(field) || !slices.Equal(ge.Path[:len(field)], field) {
		return nil
	}
	var names []string
	for _, p := range ge.Path[len(field):] {
		if n, ok := p.(ast.PathName); ok {
			names = append(names, string(n))
		}
	}
	if len(names) == 0 || fc.Field.Definition.Arguments.ForName(names[0]) == nil {
		return nil
	}
	var bad *gqlerror.Error
	errors.As(badInput(strings.Join(names, "."), "%s", ge.Message), &bad)
	bad.Path = field
	return bad
}

// forClient reports whether err is a GraphQL error made for the client:
// one with a code, or one that wraps no Go error.
func forClient(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if ge, ok := err.(*gqlerror.Error); ok && (ge.Err == nil || ge.Extensions["code"] != nil) {
			return true
		}
	}
	return false
}

// Recover turns a panic in a resolver into an internal error, logging the
// panic and its stack under the error's request id. Install it with
// handler.Server.SetRecoverFunc.
func Recover(ctx context.Context, v any) error {
	ie := &internalError{requestID: requestID(ctx)}
	slog.ErrorContext(ctx, "graphql: resolver panicked", "request_id", ie.requestID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	return ie
}
