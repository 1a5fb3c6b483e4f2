package db

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// kept returns the SQL texts the connection behind conn keeps compiled.
func kept(t *testing.T, conn *sql.Conn) []string {
	t.Helper()
	var texts []string
	if err := conn.Raw(func(dc any) error {
		c, ok := dc.(*cachingConn)
		if !ok {
			return fmt.Errorf("connection is a %T, not a *cachingConn", dc)
		}
		for e := c.lru.Front(); e != nil; e = e.Next() {
			texts = append(texts, e.Value.(*cachedStmt).query)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return texts
}

// TestSQLiteKeepsCompiledStatements: a batch read on SQLite binds its keys
// (in), so that reads of other keys are the same text, compiled once on
// the connection and run again; a read of a text whose statement is still
// open runs as a statement of its own; a connection keeps at most
// cachedStatements of at most cachedText bytes; and every read answers
// right throughout.
func TestSQLiteKeepsCompiledStatements(t *testing.T) {
	ctx := context.Background()
	bdb, err := Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if _, err := bdb.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := bdb.ExecContext(ctx, `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 400)
		INSERT INTO t SELECT i, 'n' || i FROM s`); err != nil {
		t.Fatal(err)
	}
	conn, err := bdb.Conn(ctx) // the writer's one connection, whose statements kept shows
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// query is a read of keys with the condition extra, its SQL and the
	// context that carries its parameters.
	query := func(extra string, keys []int64) (string, context.Context) {
		b := binding(conn)
		if !b.lite {
			t.Fatalf("a pool of Open does not bind on SQLite")
		}
		cond, args := in(b, "id", keys)
		if len(args) > 0 {
			t.Fatalf("keys written into the SQL: %s", cond)
		}
		return "SELECT id, name FROM t WHERE " + cond + extra + " ORDER BY id", b.ctx(ctx)
	}
	scan := func(rows *sql.Rows, n int) []int64 {
		t.Helper()
		var ids []int64
		for len(ids) != n && rows.Next() {
			var id int64
			var name string
			if err := rows.Scan(&id, &name); err != nil {
				t.Fatal(err)
			}
			if name != fmt.Sprintf("n%d", id) {
				t.Errorf("row %d named %q", id, name)
			}
			ids = append(ids, id)
		}
		return ids
	}
	read := func(extra string, keys ...int64) []int64 {
		t.Helper()
		q, qctx := query(extra, keys)
		rows, err := conn.QueryContext(qctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		ids := scan(rows, -1)
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return ids
	}

	for _, tt := range []struct{ keys, want []int64 }{
		{[]int64{3, 1, 2}, []int64{1, 2, 3}},
		{[]int64{7}, []int64{7}},
		{[]int64{400, 5, 999, 5}, []int64{5, 400}},
		{nil, nil},
	} {
		if got := read("", tt.keys...); !slices.Equal(got, tt.want) {
			t.Errorf("keys %v read %v, want %v", tt.keys, got, tt.want)
		}
	}
	if texts := kept(t, conn.Conn); len(texts) != 1 {
		t.Errorf("the connection keeps %d statements after reads of one text, want 1: %q", len(texts), texts)
	}

	// The statement of a text is busy while its rows are open: the same
	// text runs meanwhile as a statement of its own, and both answer.
	q, qctx := query("", []int64{10, 11, 12, 13})
	open, err := conn.QueryContext(qctx, q)
	if err != nil {
		t.Fatal(err)
	}
	first := scan(open, 2)
	if got := read("", 20, 21); !slices.Equal(got, []int64{20, 21}) {
		t.Errorf("beside open rows, read %v, want [20 21]", got)
	}
	if got := append(first, scan(open, -1)...); !slices.Equal(got, []int64{10, 11, 12, 13}) {
		t.Errorf("the open rows read %v, want [10 11 12 13]", got)
	}
	open.Close()
	if texts := kept(t, conn.Conn); len(texts) != 1 {
		t.Errorf("the connection keeps %d statements, want 1: %q", len(texts), texts)
	}

	// More texts than a connection keeps: the least recently used go.
	for i := range cachedStatements + 10 {
		extra := fmt.Sprintf(" AND id >= %d", i)
		want := []int64{int64(i), int64(i + 1)}
		if i == 0 {
			want = want[1:] // there is no row 0
		}
		if got := read(extra, int64(i), int64(i+1)); !slices.Equal(got, want) {
			t.Errorf("%s: read %v, want %v", extra, got, want)
		}
	}
	if texts := kept(t, conn.Conn); len(texts) != cachedStatements || !strings.Contains(texts[0], ">= 265") {
		t.Errorf("the connection keeps %d statements, newest %.80q; want %d, the newest last read", len(texts), texts[0], cachedStatements)
	}

	// Long texts: the connection keeps at most cachedText bytes of SQL,
	// and none of a text longer than an eighth of it.
	pad := " AND name <> '" + strings.Repeat("x", cachedText/10) + "'" // a tenth of cachedText
	for i := range 12 {
		if got := read(fmt.Sprintf(" AND id >= %d", i+1)+pad, int64(i+1)); !slices.Equal(got, []int64{int64(i + 1)}) {
			t.Errorf("long text %d: read %v", i, got)
		}
	}
	texts, size := kept(t, conn.Conn), 0
	for _, q := range texts {
		size += len(q)
	}
	if size > cachedText || len(texts) < 9 || !strings.Contains(texts[0], "id >= 12 ") {
		t.Errorf("after long texts the connection keeps %d statements of %d bytes, newest %.80q; want at most %d bytes, the newest last read",
			len(texts), size, texts[0], cachedText)
	}
	if got := read(" AND id >= 1"+pad+pad, 5); !slices.Equal(got, []int64{5}) {
		t.Errorf("longest text: read %v", got)
	}
	for _, q := range kept(t, conn.Conn) {
		if len(q) > cachedText/8 {
			t.Errorf("the connection keeps a text of %d bytes, over %d", len(q), cachedText/8)
		}
	}
}
