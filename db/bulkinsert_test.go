package db_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

func TestInsertColumns(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		if _, err := bdb.ExecContext(ctx, "CREATE TABLE cols (a BIGINT PRIMARY KEY, b TEXT NOT NULL, c BIGINT)"); err != nil {
			t.Fatal(err)
		}
		// 2,501 rows: SQLite sends two full statements of 1,000 rows and
		// one of 501.
		const n = 2501
		var as []int64
		var bs []string
		var cs []*int64
		for i := range n {
			as = append(as, int64(i))
			bs = append(bs, fmt.Sprintf("row 'ł' %d", i))
			var c *int64
			if i%3 != 0 {
				v := int64(-i)
				c = &v
			}
			cs = append(cs, c)
		}
		err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return db.InsertColumns(ctx, tx, "cols", []string{"a", "b", "c"}, as, bs, cs)
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []struct {
			A int64
			B string
			C *int64
		}
		if err := bdb.NewSelect().Table("cols").Column("a", "b", "c").Order("a").Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("got %d rows, want %d", len(got), n)
		}
		for i, r := range got {
			if r.A != as[i] || r.B != bs[i] || (r.C == nil) != (cs[i] == nil) || r.C != nil && *r.C != *cs[i] {
				t.Fatalf("row %d = %d %q %v, want %d %q %v", i, r.A, r.B, r.C, as[i], bs[i], cs[i])
			}
		}
		err = bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return db.InsertColumns(ctx, tx, "cols", []string{"a", "b"}, []int64{1, 2}, []string{"x"})
		})
		if err == nil {
			t.Error("columns of different lengths: no error")
		}
	})
}
