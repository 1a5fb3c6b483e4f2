package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// bun writes a statement's arguments into its SQL text, so every batch of
// keys made a statement PostgreSQL had not seen: pgx prepared each one
// (a round trip of its own) and PostgreSQL parsed and planned it afresh,
// about 0.9 ms of its CPU for each of the README query's 11 statements.
// The batch reads that serve pages therefore send their list of keys as
// one bound array, `col = ANY($1::bigint[])`, in SQL text that does not
// change with the keys: pgx prepares it once per connection and runs it
// again with new keys (its default, the statement cache), and PostgreSQL
// plans it once.
//
// bun has no way to bind an argument, so the keys travel in the context
// of the statement (bound.ctx) to the pool's connections (paramConn),
// which give them to pgx; bun's hooks see the statement as usual. On
// SQLite, and on a PostgreSQL pool not made by Open or OpenReader, the
// keys are written into the SQL as before (`col IN (…)`).

// bound holds the parameters of one statement, $1 first.
type bound struct {
	pg   bool // the statement may bind parameters
	args []any
}

// binding returns the parameters of a statement on idb.
func binding(idb bun.IDB) *bound {
	return &bound{pg: binds(idb)}
}

// binds reports whether statements on idb can bind parameters: it is
// PostgreSQL reached through paramConnector.
func binds(idb bun.IDB) bool {
	if !IsPostgres(idb) {
		return false
	}
	var sqldb *sql.DB
	switch c := idb.(type) {
	case *bun.DB:
		sqldb = c.DB
	default:
		sqldb = idb.NewSelect().DB().DB
	}
	_, ok := sqldb.Driver().(paramDriver)
	return ok
}

// in is the condition that col is one of keys, with its arguments for
// bun: a bound array where b binds, else keys written as a list. A
// statement that names the same keys twice binds them once.
func in[K PaperParent](b *bound, col string, keys []K) (string, []any) {
	if b.pg {
		if arr, typ, ok := pgArray(keys); ok {
			n := len(b.args) + 1
			for i, a := range b.args {
				if sameSlice(a, arr) {
					n = i + 1
				}
			}
			if n > len(b.args) {
				b.args = append(b.args, arr)
			}
			return col + " = ANY($" + strconv.Itoa(n) + "::" + typ + ")", nil
		}
	}
	return col + " IN (?)", []any{bun.List(keys)}
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

// ctx returns the context to run the statement in: one carrying its
// parameters, if it has any.
func (b *bound) ctx(ctx context.Context) context.Context {
	if len(b.args) == 0 {
		return ctx
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
	if bound, ok := ctx.Value(boundKey{}).([]any); ok && len(args) == 0 {
		args = make([]driver.NamedValue, len(bound))
		for i, a := range bound {
			args[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		}
	}
	return c.Conn.QueryContext(ctx, query, args)
}

// openPGX is the pool of cfg's connections, binding as paramConn does.
func openPGX(cfg pgx.ConnConfig) *sql.DB {
	return sql.OpenDB(paramConnector{stdlib.GetConnector(cfg)})
}
