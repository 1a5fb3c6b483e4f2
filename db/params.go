package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"reflect"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// bun writes a statement's arguments into its SQL text, so every batch of
// keys made a statement the database had not seen: pgx prepared each one
// (a round trip of its own) and PostgreSQL parsed and planned it afresh,
// more CPU than running it, and SQLite compiled each one. The batch
// reads that serve pages therefore bind their keys, in SQL text that
// does not change with them: on PostgreSQL one bound array,
// `col = ANY($1::bigint[])`, which pgx prepares once per connection (its
// statement cache) and PostgreSQL plans once; on SQLite one bound JSON
// array, `col IN (SELECT value FROM json_each($1))`, and a parent of a
// page per branch, `$2`, which the connection prepares once and keeps
// (stmtcache.go).
//
// bun has no way to bind an argument, so the keys travel in the context
// of the statement (bound.ctx) to the pool's connections (paramConn,
// cachingConn), which give them to the driver; bun's hooks see the
// statement as usual. On a pool not made by Open or OpenReader, the keys
// are written into the SQL as before (`col IN (…)`).

// bound holds the parameters of one statement, $1 first.
type bound struct {
	pg   bool // the statement may bind parameters, on PostgreSQL
	lite bool // the statement may bind parameters, on SQLite
	args []any
	// custom asks PostgreSQL for a plan made for these parameters (pgx's
	// QueryExecModeExec: an unnamed statement, planned at each run),
	// where the serving sessions otherwise reuse a generic plan (see
	// openPostgres).
	custom bool
	// keys are the key slices bound, by parameter, nil for other
	// parameters: a statement that names the same keys twice binds them
	// once.
	keys []any
}

// binding returns the parameters of a statement on idb.
func binding(idb bun.IDB) *bound {
	var sqldb *sql.DB
	switch c := idb.(type) {
	case *bun.DB:
		sqldb = c.DB
	default:
		sqldb = idb.NewSelect().DB().DB
	}
	switch sqldb.Driver().(type) {
	case paramDriver:
		return &bound{pg: true}
	case cachingDriver:
		return &bound{lite: true}
	}
	return &bound{}
}

// add binds v and returns its parameter, "$n".
func (b *bound) add(v any) string {
	b.args = append(b.args, v)
	b.keys = append(b.keys, nil)
	return "$" + strconv.Itoa(len(b.args))
}

// addKeys binds keys, encoded as arg, once however often a statement
// names them, and returns their parameter.
func (b *bound) addKeys(keys, arg any) string {
	for i, k := range b.keys {
		if k != nil && sameSlice(k, keys) {
			return "$" + strconv.Itoa(i+1)
		}
	}
	n := b.add(arg)
	b.keys[len(b.keys)-1] = keys
	return n
}

// in is the condition that col is one of keys, with its arguments for
// bun: keys bound where b binds, else written as a list.
func in[K PaperParent](b *bound, col string, keys []K) (string, []any) {
	switch {
	case b.pg:
		if arr, typ, ok := pgArray(keys); ok {
			return col + " = ANY(" + b.addKeys(keys, arr) + "::" + typ + ")", nil
		}
	case b.lite:
		if js, ok := jsonArray(keys); ok {
			return col + " IN (SELECT value FROM json_each(" + b.addKeys(keys, js) + "))", nil
		}
	}
	return col + " IN (?)", []any{bun.List(keys)}
}

// parentValue is p as the driver binds it: an int64 or a string, whatever
// named type P is.
func parentValue[P PaperParent](p P) any {
	v := reflect.ValueOf(p)
	if v.Kind() == reflect.String {
		return v.String()
	}
	return v.Int()
}

// jsonArray is keys as a JSON array, which SQLite's json_each reads as
// rows: integers as integers, strings as text.
func jsonArray[K PaperParent](keys []K) (string, bool) {
	var buf []byte
	switch k := any(keys).(type) {
	case []int64:
		buf = append(buf, '[')
		for i, x := range k {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, x, 10)
		}
		buf = append(buf, ']')
	case []string:
		var err error
		if buf, err = json.Marshal(k); err != nil {
			return "", false
		}
	default:
		return "", false
	}
	return string(buf), true
}

// pgArray is keys as pgx binds them, with the array's type.
func pgArray[K PaperParent](keys []K) (any, string, bool) {
	switch k := any(keys).(type) {
	case []int64:
		return k, "bigint[]", true
	case []string:
		return k, "text[]", true
	}
	return nil, "", false
}

// sameSlice reports whether a and b are the same slice (not merely equal).
func sameSlice(a, b any) bool {
	switch x := a.(type) {
	case []int64:
		y, ok := b.([]int64)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case []string:
		y, ok := b.([]string)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	}
	return false
}

type boundKey struct{}

// Bound returns the parameters bound to the statement run in ctx, $1
// first: a query hook's way to what a batch read binds (its keys, which
// are no longer in its text), to log or explain the statement.
func Bound(ctx context.Context) []any {
	args, _ := ctx.Value(boundKey{}).([]any)
	if len(args) > 0 {
		if _, ok := args[0].(pgx.QueryExecMode); ok {
			return args[1:]
		}
	}
	return args
}

// ctx returns the context to run the statement in: one carrying its
// parameters, if it has any.
func (b *bound) ctx(ctx context.Context) context.Context {
	if len(b.args) == 0 {
		return ctx
	}
	if b.custom {
		return context.WithValue(ctx, boundKey{}, append([]any{pgx.QueryExecModeExec}, b.args...))
	}
	return context.WithValue(ctx, boundKey{}, b.args)
}

// paramConnector opens PostgreSQL connections that bind the parameters
// a statement's context carries (see bound).
type paramConnector struct{ driver.Connector }

func (c paramConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return paramConn{conn.(*stdlib.Conn)}, nil
}

// Driver returns the driver under a type of its own, by which binds
// knows the pool.
func (c paramConnector) Driver() driver.Driver { return paramDriver{c.Connector.Driver()} }

type paramDriver struct{ driver.Driver }

// paramConn is a pgx connection whose queries take their parameters from
// their context when database/sql gives them none (bun never does).
type paramConn struct{ *stdlib.Conn }

func (c paramConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if named, ok := boundArgs(ctx, args); ok {
		args = named
	}
	return c.Conn.QueryContext(ctx, query, args)
}

// boundArgs returns the parameters ctx carries for a statement that
// database/sql gives none (bun never does), as the driver takes them;
// ok is false when the statement has its own or ctx carries none.
func boundArgs(ctx context.Context, args []driver.NamedValue) (named []driver.NamedValue, ok bool) {
	bound, ok := ctx.Value(boundKey{}).([]any)
	if !ok || len(args) > 0 {
		return nil, false
	}
	named = make([]driver.NamedValue, len(bound))
	for i, a := range bound {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return named, true
}

// openPGX is the pool of cfg's connections, binding as paramConn does.
func openPGX(cfg pgx.ConnConfig) *sql.DB {
	return sql.OpenDB(paramConnector{stdlib.GetConnector(cfg)})
}
