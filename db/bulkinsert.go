package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// InsertColumns inserts rows given column by column: cols holds one
// []int64, []string, []bool, or []*int64, []*string, []*time.Time (nil
// is NULL) per name, all of one length. It sends the values as
// bound parameters, never as SQL text: on PostgreSQL as one array per
// column that unnest() turns into rows, on SQLite through one prepared
// multi-row INSERT reused for every full chunk. For millions of rows that
// is several times faster than bun's INSERT, which writes each value into
// the statement's text for the database to parse again.
func InsertColumns(ctx context.Context, tx bun.Tx, table string, names []string, cols ...any) error {
	n, err := columnsLen(table, names, cols)
	if err != nil || n == 0 {
		return err
	}
	head := fmt.Sprintf("INSERT INTO %s (%s) ", table, strings.Join(names, ", "))
	if IsPostgres(tx) {
		_, err = execUnnest(ctx, tx.Tx, head+"SELECT * FROM unnest("+unnestArgs(cols)+")", n, cols)
		return err
	}
	_, err = execValues(ctx, tx.Tx, n, cols, func(values string) string { return head + values })
	return err
}

// columnsLen checks the columns and returns their common length.
func columnsLen(table string, names []string, cols []any) (int, error) {
	if len(names) != len(cols) || len(cols) == 0 {
		return 0, fmt.Errorf("%s: %d names for %d columns", table, len(names), len(cols))
	}
	n := -1
	for _, c := range cols {
		var l int
		switch c := c.(type) {
		case []int64:
			l = len(c)
		case []*int64:
			l = len(c)
		case []string:
			l = len(c)
		case []*string:
			l = len(c)
		case []bool:
			l = len(c)
		case []*time.Time:
			l = len(c)
		default:
			return 0, fmt.Errorf("%s: unsupported column type %T", table, c)
		}
		if n >= 0 && l != n {
			return 0, fmt.Errorf("%s: columns of different lengths", table)
		}
		n = l
	}
	return n, nil
}

// unnestChunk is the rows per statement on PostgreSQL: large enough that
// a statement's own cost vanishes, small enough to keep a statement's
// arrays to a few megabytes.
const unnestChunk = 100_000

// unnestArgs returns the typed array parameters of unnest().
func unnestArgs(cols []any) string {
	casts := make([]string, len(cols))
	for i, c := range cols {
		t := "text"
		switch c.(type) {
		case []int64, []*int64:
			t = "bigint"
		case []bool:
			t = "boolean"
		case []*time.Time:
			t = "timestamptz"
		}
		casts[i] = fmt.Sprintf("$%d::%s[]", i+1, t)
	}
	return strings.Join(casts, ", ")
}

// execUnnest runs q once per chunk of rows, each column a parameter, and
// returns the rows it affected.
func execUnnest(ctx context.Context, tx *sql.Tx, q string, n int, cols []any) (int64, error) {
	var affected int64
	for lo := 0; lo < n; lo += unnestChunk {
		res, err := tx.ExecContext(ctx, q, sliceColumns(cols, lo, min(lo+unnestChunk, n))...)
		if err != nil {
			return affected, err
		}
		k, _ := res.RowsAffected() // both drivers report it
		affected += k
	}
	return affected, nil
}

// sliceColumns returns rows lo to hi of every column, one argument each.
func sliceColumns(cols []any, lo, hi int) []any {
	args := make([]any, len(cols))
	for i, c := range cols {
		switch c := c.(type) {
		case []int64:
			args[i] = c[lo:hi]
		case []*int64:
			args[i] = c[lo:hi]
		case []string:
			args[i] = c[lo:hi]
		case []*string:
			args[i] = c[lo:hi]
		case []bool:
			args[i] = c[lo:hi]
		case []*time.Time:
			args[i] = c[lo:hi]
		}
	}
	return args
}

// sqliteTime is how bun writes a time into SQLite, which compares the
// text: a bound time must read the same.
const sqliteTime = "2006-01-02 15:04:05.999999-07:00"

// appendRow appends row r of every column to args, as SQLite binds it.
func appendRow(args []any, cols []any, r int) []any {
	for _, c := range cols {
		switch c := c.(type) {
		case []int64:
			args = append(args, c[r])
		case []*int64:
			args = append(args, nullable(c[r]))
		case []string:
			args = append(args, c[r])
		case []*string:
			args = append(args, nullable(c[r]))
		case []bool:
			args = append(args, c[r])
		case []*time.Time:
			if c[r] == nil {
				args = append(args, nil)
			} else {
				args = append(args, c[r].UTC().Format(sqliteTime))
			}
		}
	}
	return args
}

// nullable is *p, or nil (NULL) for a nil p.
func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// valuesChunkParams bounds the parameters of one SQLite statement, well
// under its limit of 32,766.
const valuesChunkParams = 3000

// execValues runs the statement that query makes of a VALUES list once per
// chunk of rows, and returns the rows it affected.
func execValues(ctx context.Context, tx *sql.Tx, n int, cols []any, query func(values string) string) (int64, error) {
	var affected int64
	err := valuesChunks(ctx, tx, n, cols, query, func(full *sql.Stmt, q string, args []any) error {
		var res sql.Result
		var err error
		if full != nil {
			res, err = full.ExecContext(ctx, args...)
		} else {
			res, err = tx.ExecContext(ctx, q, args...)
		}
		if err != nil {
			return err
		}
		k, _ := res.RowsAffected() // both drivers report it
		affected += k
		return nil
	})
	return affected, err
}

// valuesChunks calls run once per chunk of rows with the chunk's
// arguments, and either the statement of a full chunk, prepared once, or
// (for the last, shorter chunk) the text of its own.
func valuesChunks(ctx context.Context, tx *sql.Tx, n int, cols []any, query func(values string) string,
	run func(full *sql.Stmt, q string, args []any) error) error {
	per := max(1, valuesChunkParams/len(cols))
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	values := func(rows int) string {
		return "VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
	}
	var full *sql.Stmt
	if n >= per {
		var err error
		if full, err = tx.PrepareContext(ctx, query(values(per))); err != nil {
			return err
		}
		defer full.Close()
	}
	args := make([]any, 0, per*len(cols))
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		args = args[:0]
		for r := lo; r < hi; r++ {
			args = appendRow(args, cols, r)
		}
		var err error
		if hi-lo == per {
			err = run(full, "", args)
		} else {
			err = run(nil, query(values(hi-lo)), args)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// UpdateColumns sets columns of the rows whose key column holds the given
// keys, values given column by column as for InsertColumns (keys and every
// column of one length), and returns how many rows changed: a row whose
// values are already those is not written again. Like InsertColumns it
// binds every value: through unnest() on PostgreSQL, a VALUES list on
// SQLite.
func UpdateColumns(ctx context.Context, tx bun.Tx, table, key string, keys []int64, names []string, cols ...any) (int64, error) {
	all := append([]any{keys}, cols...)
	n, err := columnsLen(table, append([]string{key}, names...), all)
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
		return execUnnest(ctx, tx.Tx, q, n, all)
	}
	for i, name := range names {
		sets[i] = fmt.Sprintf("%s = f.column%d", name, i+2)
		olds[i], news[i] = table+"."+name, fmt.Sprintf("f.column%d", i+2)
	}
	return execValues(ctx, tx.Tx, n, all, func(values string) string {
		return fmt.Sprintf("UPDATE %s SET %s FROM (%s) AS f WHERE %s.%s = f.column1 AND (%s) IS DISTINCT FROM (%s)",
			table, strings.Join(sets, ", "), values, table, key, strings.Join(olds, ", "), strings.Join(news, ", "))
	})
}

// InsertColumnsReturning is InsertColumns that returns the given columns
// of the new rows (RETURNING), scanned into Ts by bun, chunk by chunk in
// the order of the rows sent (neither database promises that order
// within a statement, so match rows back by their values).
func InsertColumnsReturning[T any](ctx context.Context, tx bun.Tx, table string, names []string, returning string, cols ...any) ([]T, error) {
	n, err := columnsLen(table, names, cols)
	if err != nil || n == 0 {
		return nil, err
	}
	bdb := tx.NewSelect().DB()
	var out []T
	scan := func(rows *sql.Rows, err error) error {
		if err != nil {
			return err
		}
		var part []T
		if err := bdb.ScanRows(ctx, rows, &part); err != nil {
			return err
		}
		out = append(out, part...)
		return nil
	}
	head := fmt.Sprintf("INSERT INTO %s (%s) ", table, strings.Join(names, ", "))
	tail := " RETURNING " + returning
	if IsPostgres(tx) {
		q := head + "SELECT * FROM unnest(" + unnestArgs(cols) + ")" + tail
		for lo := 0; lo < n; lo += unnestChunk {
			if err := scan(tx.Tx.QueryContext(ctx, q, sliceColumns(cols, lo, min(lo+unnestChunk, n))...)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	err = valuesChunks(ctx, tx.Tx, n, cols, func(values string) string { return head + values + tail },
		func(full *sql.Stmt, q string, args []any) error {
			if full != nil {
				return scan(full.QueryContext(ctx, args...))
			}
			return scan(tx.Tx.QueryContext(ctx, q, args...))
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}
