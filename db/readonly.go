package db

import (
	"errors"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteDSN splits a SQLite DSN into its path and its URI parameters
// (ending in "&" when there are any, to go before Open's own), and says
// whether they open the database read-only: mode=ro, or immutable=1,
// which also promises that nothing else writes it, so that SQLite takes
// no locks and needs no -shm file beside it (a file on read-only media, or
// in a directory serve may not write).
func sqliteDSN(dsn string) (path, params string, readOnly bool) {
	path, query, _ := strings.Cut(dsn, "?")
	if query == "" {
		return path, "", false
	}
	values, err := url.ParseQuery(query)
	readOnly = err == nil && (values.Get("mode") == "ro" || sqliteTrue(values.Get("immutable")))
	return path, query + "&", readOnly
}

// sqliteTrue reports whether SQLite reads v, a boolean URI parameter, as
// true: 1, yes, true or on, in any case.
func sqliteTrue(v string) bool {
	switch strings.ToLower(v) {
	case "1", "yes", "true", "on":
		return true
	}
	return false
}

// ErrReadOnly is wrapped by errors from writing a database that is
// read-only: opened with mode=ro or immutable=1, a file or directory the
// process may not write, or a PostgreSQL role or standby that refuses
// writes.
var ErrReadOnly = errors.New("the database is read-only")

// readOnly wraps err with ErrReadOnly when the database refused a write
// for being read-only.
func readOnly(err error) error {
	if err == nil {
		return nil
	}
	if se, ok := errors.AsType[*sqlite.Error](err); ok && se.Code()&0xff == sqlite3.SQLITE_READONLY {
		return readOnlyError{err}
	}
	// read_only_sql_transaction (a standby, default_transaction_read_only)
	// and insufficient_privilege (a role without CREATE).
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && (pe.Code == "25006" || pe.Code == "42501") {
		return readOnlyError{err}
	}
	return err
}

// readOnlyError is a driver's refusal to write, read as ErrReadOnly.
type readOnlyError struct{ err error }

func (e readOnlyError) Error() string   { return ErrReadOnly.Error() + ": " + e.err.Error() }
func (e readOnlyError) Unwrap() []error { return []error{ErrReadOnly, e.err} }

// ReadOnlyDSN reports whether dsn opens a SQLite database read-only
// (mode=ro or immutable=1).
func ReadOnlyDSN(dsn string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return false
	}
	_, _, ro := sqliteDSN(strings.TrimPrefix(dsn, "sqlite:"))
	return ro
}
