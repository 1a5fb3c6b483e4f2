package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
)

// InsertColumns inserts rows given column by column: cols holds one
// []int64, []*int64 (nil is NULL) or []string per name, all of one length. It sends the values as
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
		return execUnnest(ctx, tx.Tx, head+"SELECT * FROM unnest("+unnestArgs(cols)+")", n, cols)
	}
	return execValues(ctx, tx.Tx, n, cols, func(values string) string { return head + values })
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
		}
		casts[i] = fmt.Sprintf("$%d::%s[]", i+1, t)
	}
	return strings.Join(casts, ", ")
}

// execUnnest runs q once per chunk of rows, each column a parameter.
func execUnnest(ctx context.Context, tx *sql.Tx, q string, n int, cols []any) error {
	args := make([]any, len(cols))
	for lo := 0; lo < n; lo += unnestChunk {
		hi := min(lo+unnestChunk, n)
		for i, c := range cols {
			switch c := c.(type) {
			case []int64:
				args[i] = c[lo:hi]
			case []*int64:
				args[i] = c[lo:hi]
			case []string:
				args[i] = c[lo:hi]
			}
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// valuesChunkParams bounds the parameters of one SQLite statement, well
// under its limit of 32,766.
const valuesChunkParams = 3000

// execValues runs the statement that query makes of a VALUES list once per
// chunk of rows, preparing the statement of a full chunk once.
func execValues(ctx context.Context, tx *sql.Tx, n int, cols []any, query func(values string) string) error {
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
			for _, c := range cols {
				switch c := c.(type) {
				case []int64:
					args = append(args, c[r])
				case []*int64:
					if c[r] == nil {
						args = append(args, nil)
					} else {
						args = append(args, *c[r])
					}
				case []string:
					args = append(args, c[r])
				}
			}
		}
		var err error
		if hi-lo == per {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, query(values(hi-lo)), args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// UpdateColumns sets columns of the rows whose key column holds the given
// keys, values given column by column as for InsertColumns (keys and every
// column of one length). Like InsertColumns it binds every value: through
// unnest() on PostgreSQL, a VALUES list on SQLite.
func UpdateColumns(ctx context.Context, tx bun.Tx, table, key string, keys []int64, names []string, cols ...any) error {
	all := append([]any{keys}, cols...)
	n, err := columnsLen(table, append([]string{key}, names...), all)
	if err != nil || n == 0 {
		return err
	}
	sets := make([]string, len(names))
	if IsPostgres(tx) {
		fields := make([]string, len(all))
		fields[0] = "k"
		for i, name := range names {
			sets[i] = fmt.Sprintf("%s = f.c%d", name, i)
			fields[i+1] = fmt.Sprintf("c%d", i)
		}
		q := fmt.Sprintf("UPDATE %s AS t SET %s FROM unnest(%s) AS f(%s) WHERE t.%s = f.k",
			table, strings.Join(sets, ", "), unnestArgs(all), strings.Join(fields, ", "), key)
		return execUnnest(ctx, tx.Tx, q, n, all)
	}
	for i, name := range names {
		sets[i] = fmt.Sprintf("%s = f.column%d", name, i+2)
	}
	return execValues(ctx, tx.Tx, n, all, func(values string) string {
		return fmt.Sprintf("UPDATE %s SET %s FROM (%s) AS f WHERE %s.%s = f.column1",
			table, strings.Join(sets, ", "), values, table, key)
	})
}
