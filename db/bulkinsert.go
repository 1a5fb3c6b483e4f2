package db

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// InsertColumns inserts rows given column by column: cols holds one
// []int64, []string, []bool, or []*int64, []*string, []*time.Time (nil
// is NULL) per name, all of one length. It binds the values, never
// spells them into SQL text: on PostgreSQL one array per column that
// unnest() turns into rows, on SQLite one prepared multi-row INSERT
// reused for every full chunk of a few thousand values. For millions of
// rows that is several times faster than bun's INSERT of a model, which
// reflects on every row and writes each value into the text for the
// database to parse again.
//
// The statements run on the transaction's connection past bun, so bun
// calls no query hook for them; the hooks given with WithQueryHook hear
// of each (see bulkStatements).
func InsertColumns(ctx context.Context, tx bun.Tx, table string, names []string, cols ...any) error {
	return insertColumns(ctx, tx, table, names, "", cols)
}

// AddColumns is InsertColumns for rows keyed by the first len(keys) of
// names whose last column is a count: a row whose key is already there
// has the count added to its own. The keys must be distinct (PostgreSQL
// updates a row at most once a statement).
func AddColumns(ctx context.Context, tx bun.Tx, table string, keys int, names []string, cols ...any) error {
	count := names[len(names)-1]
	return insertColumns(ctx, tx, table, names, fmt.Sprintf(" ON CONFLICT (%s) DO UPDATE SET %s = %s.%s + excluded.%s",
		strings.Join(names[:keys], ", "), count, table, count, count), cols)
}

func insertColumns(ctx context.Context, tx bun.Tx, table string, names []string, suffix string, cols []any) error {
	cs, n, err := columnsOf(table, names, cols)
	if err != nil || n == 0 {
		return err
	}
	head := fmt.Sprintf("INSERT INTO %s (%s) ", table, strings.Join(names, ", "))
	if IsPostgres(tx) {
		_, err = execUnnest(ctx, tx, head+"SELECT * FROM unnest("+unnestArgs(cs)+")"+suffix, n, cs)
		return err
	}
	_, err = execValues(ctx, tx, n, cs, func(values string) string { return head + values + suffix })
	return err
}

// column is one column of a bulk statement; columnOf is the one place
// that knows the types a column may have.
type column interface {
	len() int
	// slice returns rows lo to hi as one PostgreSQL array parameter.
	slice(lo, hi int) any
	// value returns row r as one SQLite parameter.
	value(r int) any
	// pgType is the type of the column's PostgreSQL array elements.
	pgType() string
}

// typed is a column of Ts; sqlite turns a T into what SQLite is given.
type typed[T any] struct {
	vals   []T
	pg     string
	sqlite func(T) any
}

func (c typed[T]) len() int             { return len(c.vals) }
func (c typed[T]) slice(lo, hi int) any { return c.vals[lo:hi] }
func (c typed[T]) value(r int) any      { return c.sqlite(c.vals[r]) }
func (c typed[T]) pgType() string       { return c.pg }

// columnOf returns c as a column, or false for a type it does not take.
func columnOf(c any) (column, bool) {
	switch c := c.(type) {
	case []int64:
		return typed[int64]{c, "bigint", asIs[int64]}, true
	case []*int64:
		return typed[*int64]{c, "bigint", nullable[int64]}, true
	case []string:
		return typed[string]{c, "text", asIs[string]}, true
	case []*string:
		return typed[*string]{c, "text", nullable[string]}, true
	case []bool:
		return typed[bool]{c, "boolean", asIs[bool]}, true
	case []*time.Time:
		return typed[*time.Time]{c, "timestamptz", sqliteTime}, true
	case tsvectors:
		return typed[*string]{c, "tsvector", nullable[string]}, true
	}
	return nil, false
}

// tsvectors is a column of PostgreSQL tsvectors in their text form (nil
// is NULL).
type tsvectors []*string

func asIs[T any](v T) any { return v }

// nullable is *p, or nil (NULL) for a nil p.
func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// sqliteTime is t as bun writes a time into SQLite, which compares the
// text: a bulk-written time must read the same.
func sqliteTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format("2006-01-02 15:04:05.999999-07:00")
}

// columnsOf checks the columns and returns them with their common length.
func columnsOf(table string, names []string, cols []any) ([]column, int, error) {
	if len(names) != len(cols) || len(cols) == 0 {
		return nil, 0, fmt.Errorf("%s: %d names for %d columns", table, len(names), len(cols))
	}
	out := make([]column, len(cols))
	for i, c := range cols {
		col, ok := columnOf(c)
		if !ok {
			return nil, 0, fmt.Errorf("%s: unsupported column type %T", table, c)
		}
		if i > 0 && col.len() != out[0].len() {
			return nil, 0, fmt.Errorf("%s: columns of different lengths", table)
		}
		out[i] = col
	}
	return out, out[0].len(), nil
}

// unnestChunk is the rows per statement on PostgreSQL: large enough that
// a statement's own cost vanishes, small enough to keep a statement's
// arrays to a few megabytes.
const unnestChunk = 100_000

// unnestArgs returns the typed array placeholders of unnest().
func unnestArgs(cols []column) string {
	casts := make([]string, len(cols))
	for i, c := range cols {
		casts[i] = fmt.Sprintf("$%d::%s[]", i+1, c.pgType())
	}
	return strings.Join(casts, ", ")
}

// chunks calls run with the parameters of each chunk of per rows: on
// PostgreSQL one array per column, on SQLite the values row by row. The
// slice of parameters is reused: run must not keep it.
func chunks(n, per int, cols []column, pg bool, run func(rows int, args []any) error) error {
	var args []any
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		if pg {
			args = args[:0]
			for _, c := range cols {
				args = append(args, c.slice(lo, hi))
			}
		} else {
			args = slices.Grow(args[:0], (hi-lo)*len(cols))
			for r := lo; r < hi; r++ {
				for _, c := range cols {
					args = append(args, c.value(r))
				}
			}
		}
		if err := run(hi-lo, args); err != nil {
			return err
		}
	}
	return nil
}

// bulkStatements runs the statements of one bulk write on its
// transaction's connection with bound values, each text prepared once
// (a write sends at most two: that of a full chunk and that of the last),
// and tells the hooks given with WithQueryHook of each as bun tells its
// hooks: BeforeQuery first to last, then AfterQuery last to first, with
// an event that holds the text with its placeholders and the values. bun
// itself would spell every value into the text, and SQLite would compile
// each statement anew, once for every chunk of every import.
type bulkStatements struct {
	tx       bun.Tx
	db       *bun.DB
	hooks    []bun.QueryHook
	prepared map[string]*sql.Stmt
}

func newBulkStatements(tx bun.Tx) *bulkStatements {
	bdb := tx.NewSelect().DB()
	return &bulkStatements{tx: tx, db: bdb, hooks: observersOf(bdb), prepared: map[string]*sql.Stmt{}}
}

// close closes the prepared statements.
func (b *bulkStatements) close() {
	for _, st := range b.prepared {
		st.Close()
	}
}

// stmt returns q prepared on the transaction.
func (b *bulkStatements) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := b.prepared[q]; ok {
		return st, nil
	}
	st, err := b.tx.Tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	b.prepared[q] = st
	return st, nil
}

// exec runs q with args and returns the rows it affected.
func (b *bulkStatements) exec(ctx context.Context, q string, args []any) (int64, error) {
	var affected int64
	err := b.observed(ctx, q, args, func(ctx context.Context, st *sql.Stmt) (sql.Result, error) {
		res, err := st.ExecContext(ctx, args...)
		if err == nil {
			affected = rowsAffected(res)
		}
		return res, err
	})
	return affected, err
}

// query runs q with args and scans its rows into dest with bun.
func (b *bulkStatements) query(ctx context.Context, q string, args []any, dest any) error {
	return b.observed(ctx, q, args, func(ctx context.Context, st *sql.Stmt) (sql.Result, error) {
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return nil, err
		}
		return nil, b.db.ScanRows(ctx, rows, dest)
	})
}

// observed runs q through run between the hooks' BeforeQuery and
// AfterQuery.
func (b *bulkStatements) observed(ctx context.Context, q string, args []any, run func(context.Context, *sql.Stmt) (sql.Result, error)) error {
	var event *bun.QueryEvent
	if len(b.hooks) > 0 {
		event = &bun.QueryEvent{DB: b.db, Query: q, QueryTemplate: q, QueryArgs: args, StartTime: time.Now()}
		for _, h := range b.hooks {
			ctx = h.BeforeQuery(ctx, event)
		}
	}
	st, err := b.stmt(ctx, q)
	var res sql.Result
	if err == nil {
		res, err = run(ctx, st)
	}
	if event != nil {
		event.Result, event.Err = res, err
		for i := len(b.hooks) - 1; i >= 0; i-- {
			b.hooks[i].AfterQuery(ctx, event)
		}
	}
	return err
}

// execUnnest runs q once per chunk of rows, each column a parameter, and
// returns the rows it affected.
func execUnnest(ctx context.Context, tx bun.Tx, q string, n int, cols []column) (int64, error) {
	var affected int64
	bulk := newBulkStatements(tx)
	defer bulk.close()
	err := chunks(n, unnestChunk, cols, true, func(_ int, args []any) error {
		k, err := bulk.exec(ctx, q, args)
		affected += k
		return err
	})
	return affected, err
}

// rowsAffected is what res reports; both drivers report it.
func rowsAffected(res sql.Result) int64 {
	k, _ := res.RowsAffected()
	return k
}

// valuesChunkParams bounds the parameters of one SQLite statement, well
// under its limit of 32,766.
const valuesChunkParams = 3000

// valuesRows is the rows per SQLite statement of cols.
func valuesRows(cols []column) int { return max(1, valuesChunkParams/len(cols)) }

// values is a VALUES list of rows of width placeholders.
func values(rows, width int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", width), ", ") + ")"
	return "VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
}

// execValues runs the statement that query makes of a VALUES list once per
// chunk of rows, and returns the rows it affected.
func execValues(ctx context.Context, tx bun.Tx, n int, cols []column, query func(values string) string) (int64, error) {
	var affected int64
	bulk := newBulkStatements(tx)
	defer bulk.close()
	err := chunks(n, valuesRows(cols), cols, false, func(rows int, args []any) error {
		k, err := bulk.exec(ctx, query(values(rows, len(cols))), args)
		affected += k
		return err
	})
	return affected, err
}

// UpdateColumns sets columns of the rows whose key column holds the given
// keys, values given column by column as for InsertColumns (keys and every
// column of one length), and returns how many rows changed: a row whose
// values are already those is not written again. Like InsertColumns it
// sends the values through unnest() on PostgreSQL, a VALUES list on
// SQLite, bound as InsertColumns binds them.
func UpdateColumns(ctx context.Context, tx bun.Tx, table, key string, keys []int64, names []string, cols ...any) (int64, error) {
	all, n, err := columnsOf(table, append([]string{key}, names...), append([]any{keys}, cols...))
	if err != nil || n == 0 {
		return 0, err
	}
	sets := make([]string, len(names))
	olds := make([]string, len(names))
	news := make([]string, len(names))
	if IsPostgres(tx) {
		fields := make([]string, len(all))
		fields[0] = "k"
		for i, name := range names {
			fields[i+1] = fmt.Sprintf("c%d", i)
			sets[i] = fmt.Sprintf("%s = f.c%d", name, i)
			olds[i], news[i] = "t."+name, fmt.Sprintf("f.c%d", i)
		}
		q := fmt.Sprintf("UPDATE %s AS t SET %s FROM unnest(%s) AS f(%s) WHERE t.%s = f.k AND (%s) IS DISTINCT FROM (%s)",
			table, strings.Join(sets, ", "), unnestArgs(all), strings.Join(fields, ", "), key,
			strings.Join(olds, ", "), strings.Join(news, ", "))
		return execUnnest(ctx, tx, q, n, all)
	}
	for i, name := range names {
		sets[i] = fmt.Sprintf("%s = f.column%d", name, i+2)
		olds[i], news[i] = table+"."+name, fmt.Sprintf("f.column%d", i+2)
	}
	return execValues(ctx, tx, n, all, func(values string) string {
		return fmt.Sprintf("UPDATE %s SET %s FROM (%s) AS f WHERE %s.%s = f.column1 AND (%s) IS DISTINCT FROM (%s)",
			table, strings.Join(sets, ", "), values, table, key, strings.Join(olds, ", "), strings.Join(news, ", "))
	})
}

// InsertColumnsReturning is InsertColumns that returns the given columns
// of the new rows (RETURNING), scanned into Ts by bun, chunk by chunk in
// the order of the rows sent (neither database promises that order
// within a statement, so match rows back by their values).
func InsertColumnsReturning[T any](ctx context.Context, tx bun.Tx, table string, names []string, returning string, cols ...any) ([]T, error) {
	cs, n, err := columnsOf(table, names, cols)
	if err != nil || n == 0 {
		return nil, err
	}
	head := fmt.Sprintf("INSERT INTO %s (%s) ", table, strings.Join(names, ", "))
	tail := " RETURNING " + returning
	return queryChunks[T](ctx, tx, n, cs,
		head+"SELECT * FROM unnest("+unnestArgs(cs)+")"+tail,
		func(values string) string { return head + values + tail })
}

// queryChunks runs a statement that returns rows once per chunk of the n
// rows of cols and scans what each returns into Ts, in the order of the
// chunks: on PostgreSQL pg, whose placeholders are unnestArgs(cols), on
// SQLite the statement sqlite makes of each chunk's VALUES list.
func queryChunks[T any](ctx context.Context, tx bun.Tx, n int, cols []column, pg string, sqlite func(values string) string) ([]T, error) {
	isPG := IsPostgres(tx)
	query, per := func(rows int) string { return sqlite(values(rows, len(cols))) }, valuesRows(cols)
	if isPG {
		query, per = func(int) string { return pg }, unnestChunk
	}
	var out []T
	bulk := newBulkStatements(tx)
	defer bulk.close()
	err := chunks(n, per, cols, isPG, func(rows int, args []any) error {
		var part []T
		if err := bulk.query(ctx, query(rows), args, &part); err != nil {
			return err
		}
		out = append(out, part...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
