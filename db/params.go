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
	"github.com/uptrace/bun/dialect/pgdialect"
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
// Writes bind their lists of keys the same way (see in), so that an
// import's statements are a few texts, prepared once per connection,
// whatever the size of its batches.
//
// bun has no way to bind an argument, so the keys travel in the context
// of the statement (bound.ctx) to the pool's connections (paramConn,
// cachingConn), which give them to the driver, for reads and writes
// alike; bun's hooks see the statement as usual. On a pool not made by
// Open or OpenReader, the array is written into the SQL as a literal.

// bound holds the parameters of one statement, $1 first.
type bound struct {
	postgres bool // the statement is PostgreSQL's
	pg       bool // the statement may bind parameters, on PostgreSQL
	lite     bool // the statement may bind parameters, on SQLite
	args     []any
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
	b := &bound{postgres: IsPostgres(idb)}
	switch d := sqldb.Driver().(type) {
	case paramDriver:
		b.pg, b.custom = true, d.custom
	case cachingDriver:
		b.lite = true
	}
	return b
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
// bun's ? placeholders: the one way db names a list of keys in SQL. The
// keys are one array, so the statement's text is the same for any number
// of them: on PostgreSQL `col = ANY(array)`, on SQLite `col IN (SELECT
// value FROM json_each(array))`, the array a JSON text. Where b binds,
// the array is a parameter, $n, and the arguments are none; else it is a
// literal, bun's one argument (the text then changes with the keys, on a
// pool not made by Open or OpenReader only).
func in[K PaperParent](b *bound, col string, keys []K) (string, []any) {
	if b.postgres {
		arr, typ := pgArray(keys)
		if b.pg {
			return col + " = ANY(" + b.addKeys(keys, arr) + "::" + typ + ")", nil
		}
		return col + " = ANY(?::" + typ + ")", []any{pgdialect.Array(arr)}
	}
	js := jsonArray(keys)
	if b.lite {
		return col + " IN (SELECT value FROM json_each(" + b.addKeys(keys, js) + "))", nil
	}
	return col + " IN (SELECT value FROM json_each(?))", []any{js}
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

// plainKeys is keys as a []int64 or a []string, whatever named type K
// is: keys itself when it is one.
func plainKeys[K PaperParent](keys []K) any {
	switch k := any(keys).(type) {
	case []int64:
		return k
	case []string:
		return k
	}
	var zero K
	if reflect.ValueOf(zero).Kind() == reflect.String {
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = reflect.ValueOf(k).String()
		}
		return out
	}
	out := make([]int64, len(keys))
	for i, k := range keys {
		out[i] = reflect.ValueOf(k).Int()
	}
	return out
}

// jsonArray is keys as a JSON array, which SQLite's json_each reads as
// rows: integers as integers, strings as text.
func jsonArray[K PaperParent](keys []K) string {
	var buf []byte
	switch k := plainKeys(keys).(type) {
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
		buf, _ = json.Marshal(k) // a []string always encodes
	}
	return string(buf)
}

// pgArray is keys as pgx binds them, with the array's type.
func pgArray[K PaperParent](keys []K) (any, string) {
	arr := plainKeys(keys)
	if _, ok := arr.([]string); ok {
		return arr, "text[]"
	}
	return arr, "bigint[]"
}

// sameSlice reports whether a and b are the same slice (not merely equal).
func sameSlice(a, b any) bool {
	x, y := reflect.ValueOf(a), reflect.ValueOf(b)
	return x.Type() == y.Type() && x.Len() == y.Len() && (x.Len() == 0 || x.Pointer() == y.Pointer())
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
// a statement's context carries (see bound). custom plans every statement
// that binds keys for its own keys (see bound.custom): the writer's. A
// generic plan assumes an array of a few keys and compares each row with
// the keys one by one, where a plan for the keys at hand hashes a long
// list; an import reads by lists of hundreds of keys, some from tables
// whose indexes a bulk load has dropped, which such a generic plan scans
// with every key for every row. The writer's lists were planned for their
// keys when they were written into the SQL, and still are; the readers,
// whose reads go by index, keep one generic plan (see openPostgres).
type paramConnector struct {
	driver.Connector
	custom bool
}

func (c paramConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return paramConn{conn.(*stdlib.Conn)}, nil
}

// Driver returns the driver under a type of its own, by which binding
// knows the pool.
func (c paramConnector) Driver() driver.Driver {
	return paramDriver{Driver: c.Connector.Driver(), custom: c.custom}
}

type paramDriver struct {
	driver.Driver
	custom bool
}

// paramConn is a pgx connection whose statements take their parameters
// from their context when database/sql gives them none (bun never does).
type paramConn struct{ *stdlib.Conn }

func (c paramConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if named, ok := boundArgs(ctx, args); ok {
		args = named
	}
	return c.Conn.QueryContext(ctx, query, args)
}

func (c paramConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if named, ok := boundArgs(ctx, args); ok {
		args = named
	}
	return c.Conn.ExecContext(ctx, query, args)
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

// openPGX is the pool of cfg's connections, binding as paramConn does;
// custom as paramConnector's.
func openPGX(cfg pgx.ConnConfig, custom bool) *sql.DB {
	return sql.OpenDB(paramConnector{Connector: stdlib.GetConnector(cfg), custom: custom})
}
