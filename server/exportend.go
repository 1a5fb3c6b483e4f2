package server

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/papergraph/papergraph/reqid"
	"github.com/papergraph/papergraph/resolvers"
	"github.com/papergraph/papergraph/vector"
)

// How an export says whether it is whole. An export that cannot start
// answers a 5xx status with a JSON error (exportError) before any byte of
// the file. Once the file has started, its status is sent, so the end of
// the file says: the search export ends with a line of its own, the
// network exports with their closing tag or bracket, and every export
// sends the HTTP trailer Papergraph-Export-Status ("complete" or
// "incomplete"; the search export adds Papergraph-Export-Rows). A file
// with neither its end nor the trailer was cut with the connection.
const (
	exportStatusTrailer = "Papergraph-Export-Status"
	exportRowsTrailer   = "Papergraph-Export-Rows"
)

// errShutdown is the cause of the cancellation of the requests still
// running when the server is about to stop (see Server.Serve).
var errShutdown = errors.New("the server is shutting down")

// exportFailure is what a client is told of an export that failed: a
// code, a message with no internals, and the request id the log has the
// details under.
type exportFailure struct {
	Message   string `json:"message"`
	Code      string `json:"code"`
	RequestID string `json:"requestId,omitempty"`
	status    int
}

// failure classifies err, met while serving r, for the client, and logs
// it with what the export was doing.
func failure(r *http.Request, log *slog.Logger, doing string, err error) exportFailure {
	id := reqid.From(r.Context())
	f := exportFailure{Code: "INTERNAL_SERVER_ERROR", Message: "internal server error", RequestID: id, status: http.StatusInternalServerError}
	var spent *errBudgetSpent
	switch {
	case errors.As(err, &spent):
		f.Code, f.Message, f.status = codeRateLimited, spent.Error(), http.StatusTooManyRequests
	case errors.Is(context.Cause(r.Context()), errShutdown):
		f.Code, f.Message, f.status = "SERVICE_UNAVAILABLE", errShutdown.Error(), http.StatusServiceUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		f.Code, f.Message, f.status = "DEADLINE_EXCEEDED", "a read of the database took too long", http.StatusServiceUnavailable
	case errors.Is(err, context.Canceled):
		f.Code, f.Message, f.status = "CANCELLED", "the request was cancelled", http.StatusServiceUnavailable
	case unavailable(err):
		f.Code, f.Message, f.status = "SERVICE_UNAVAILABLE", "the database is unavailable", http.StatusServiceUnavailable
	case errors.Is(err, vector.ErrBuilding):
		f.Code, f.Message, f.status = resolvers.CodeSemanticUnavailable, "mode: "+vector.ErrBuilding.Error(), http.StatusServiceUnavailable
	case errors.Is(err, vector.ErrNoVectors):
		f.Code, f.Message, f.status = resolvers.CodeSemanticUnavailable, "mode: "+vector.ErrNoVectors.Error(), http.StatusServiceUnavailable
	}
	log.WarnContext(r.Context(), doing, "request_id", id, "code", f.Code, "err", err)
	return f
}

// unavailable reports whether err says the database cannot be reached
// rather than that a statement failed.
func unavailable(err error) bool {
	var ne net.Error
	return errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) || errors.As(err, &ne) ||
		// database/sql does not export the error of a closed *sql.DB.
		strings.Contains(err.Error(), "sql: database is closed")
}

// exportError answers an export that cannot start: the failure's status
// and {"error": {"message", "code", "requestId"}}.
func exportError(w http.ResponseWriter, f exportFailure) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(f.status)
	_ = json.NewEncoder(w).Encode(struct {
		Error exportFailure `json:"error"`
	}{f})
}

// answerError answers a request that could not start with err: a 400
// naming the parameter for a malformed one (a *resolvers.InputError),
// else the failure of doing. It says whether it answered, that is whether
// err is not nil.
func answerError(w http.ResponseWriter, r *http.Request, log *slog.Logger, doing string, err error) bool {
	var ie *resolvers.InputError
	switch {
	case errors.As(err, &ie):
		http.Error(w, strings.TrimPrefix(ie.Arg, "filter.")+": "+ie.Msg, http.StatusBadRequest)
	case err != nil:
		exportError(w, failure(r, log, doing, err))
	default:
		return false
	}
	return true
}

// announceTrailers declares the trailers an export sends; call it before
// the status is written.
func announceTrailers(h http.Header, rows bool) {
	names := exportStatusTrailer
	if rows {
		names += ", " + exportRowsTrailer
	}
	h.Set("Trailer", names)
}

// setTrailers sets the announced trailers: whether the export is whole
// and, when rows >= 0, how many rows it wrote.
func setTrailers(h http.Header, complete bool, rows int) {
	status := "complete"
	if !complete {
		status = "incomplete"
	}
	h.Set(exportStatusTrailer, status)
	if rows >= 0 {
		h.Set(exportRowsTrailer, strconv.Itoa(rows))
	}
}
