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
	if len(names) != len(cols) || len(cols) == 0 {
		return fmt.Errorf("insert %s: %d names for %d columns", table, len(names), len(cols))
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
			return fmt.Errorf("insert %s: unsupported column type %T", table, c)
		}
		if n >= 0 && l != n {
			return fmt.Errorf("insert %s: columns of different lengths", table)
		}
		n = l
	}
	if n == 0 {
		return nil
	}
	head := fmt.Sprintf("INSERT INTO %s (%s) ", table, strings.Join(names, ", "))
	if IsPostgres(tx) {
		return insertUnnest(ctx, tx.Tx, head, n, cols)
	}
	return insertValues(ctx, tx.Tx, head, n, cols)
}

// unnestChunk is the rows per statement on PostgreSQL: large enough that
// a statement's own cost vanishes, small enough to keep a statement's
// arrays to a few megabytes.
const unnestChunk = 100_000

func insertUnnest(ctx context.Context, tx *sql.Tx, head string, n int, cols []any) error {
	casts := make([]string, len(cols))
	for i, c := range cols {
		t := "text"
		switch c.(type) {
		case []int64, []*int64:
			t = "bigint"
		}
		casts[i] = fmt.Sprintf("$%d::%s[]", i+1, t)
	}
	q := head + "SELECT * FROM unnest(" + strings.Join(casts, ", ") + ")"
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

func insertValues(ctx context.Context, tx *sql.Tx, head string, n int, cols []any) error {
	per := max(1, valuesChunkParams/len(cols))
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	query := func(rows int) string {
		return head + "VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
	}
	var full *sql.Stmt
	if n >= per {
		var err error
		if full, err = tx.PrepareContext(ctx, query(per)); err != nil {
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
			_, err = tx.ExecContext(ctx, query(hi-lo), args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
