package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

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
		// RETURNING over several statements gives every new row once.
		var more []int64
		for i := range n {
			more = append(more, int64(n+i))
		}
		var back []struct{ A int64 }
		err = bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var err error
			back, err = db.InsertColumnsReturning[struct{ A int64 }](ctx, tx, "cols", []string{"a", "b"}, "a", more, bs)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for _, r := range back {
			seen[r.A] = true
		}
		if len(back) != n || len(seen) != n || !seen[int64(n)] || !seen[int64(2*n-1)] {
			t.Errorf("RETURNING gave %d rows, %d distinct, want %d from %d to %d", len(back), len(seen), n, n, 2*n-1)
		}
		err = bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return db.InsertColumns(ctx, tx, "cols", []string{"a", "b"}, []int64{1, 2}, []string{"x"})
		})
		if err == nil {
			t.Error("columns of different lengths: no error")
		}
	})
}

func TestUpdateColumns(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		if _, err := bdb.ExecContext(ctx, "CREATE TABLE cols (a BIGINT PRIMARY KEY, b BIGINT NOT NULL, c BIGINT)"); err != nil {
			t.Fatal(err)
		}
		// 9,006 rows; every third is updated: 3,002 keys, which SQLite
		// sends as three full statements of 1,000 rows (three parameters
		// each) and one of 2.
		const n = 9006
		var as, bs []int64
		var cs []*int64
		for i := range n {
			as, bs, cs = append(as, int64(i)), append(bs, 0), append(cs, nil)
		}
		var keys, newB []int64
		var newC []*int64
		for i := 0; i < n; i += 3 {
			keys, newB = append(keys, int64(i)), append(newB, int64(i*10))
			var c *int64
			if i%2 == 0 {
				v := int64(-i)
				c = &v
			}
			newC = append(newC, c)
		}
		var changed, again int64
		err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := db.InsertColumns(ctx, tx, "cols", []string{"a", "b", "c"}, as, bs, cs); err != nil {
				return err
			}
			var err error
			if changed, err = db.UpdateColumns(ctx, tx, "cols", "a", keys, []string{"b", "c"}, newB, newC); err != nil {
				return err
			}
			// The same values again change nothing.
			again, err = db.UpdateColumns(ctx, tx, "cols", "a", keys, []string{"b", "c"}, newB, newC)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// Row 0 keeps b = 0 and gets c = 0 from NULL: a change too.
		if changed != int64(len(keys)) || again != 0 {
			t.Errorf("UpdateColumns changed %d rows, then %d; want %d, then 0", changed, again, len(keys))
		}
		var got []struct {
			A, B int64
			C    *int64
		}
		if err := bdb.NewSelect().Table("cols").Column("a", "b", "c").Order("a").Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("got %d rows, want %d", len(got), n)
		}
		for i, r := range got {
			var wantB int64
			var wantC *int64
			if i%3 == 0 {
				wantB = int64(i * 10)
				if i%2 == 0 {
					v := int64(-i)
					wantC = &v
				}
			}
			if r.B != wantB || (r.C == nil) != (wantC == nil) || r.C != nil && *r.C != *wantC {
				t.Fatalf("row %d = %d %v, want %d %v", i, r.B, r.C, wantB, wantC)
			}
		}
	})
}

// Rows written by InsertColumnsReturning read back as the same rows bun
// writes, NULLs, times and booleans included.
func TestInsertColumnsReturningMatchesBun(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		published := time.Date(1996, 3, 4, 5, 6, 7, 0, time.UTC)
		via := func(p db.Paper) db.Paper {
			t.Helper()
			if _, err := bdb.ExecContext(ctx, "DELETE FROM papers"); err != nil {
				t.Fatal(err)
			}
			var got []db.Paper
			err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				var cited *int64
				if p.CitedByCount != nil {
					v := int64(*p.CitedByCount)
					cited = &v
				}
				var pub *time.Time
				if !p.Published.IsZero() {
					pub = &p.Published
				}
				var doi *string
				if p.DOI != "" {
					doi = &p.DOI
				}
				var err error
				got, err = db.InsertColumnsReturning[db.Paper](ctx, tx, "papers",
					[]string{"arxiv_id", "title", "doi", "published", "cited_by_count", "authors_complete"}, "id, arxiv_id",
					[]*string{&p.ArxivID}, []string{p.Title}, []*string{doi}, []*time.Time{pub}, []*int64{cited}, []bool{p.AuthorsComplete})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].ArxivID != p.ArxivID || got[0].ID == 0 {
				t.Fatalf("RETURNING gave %+v", got)
			}
			var back db.Paper
			if err := bdb.NewSelect().Model(&back).Where("id = ?", got[0].ID).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			return back
		}
		byBun := func(p db.Paper) db.Paper {
			t.Helper()
			if _, err := bdb.ExecContext(ctx, "DELETE FROM papers"); err != nil {
				t.Fatal(err)
			}
			if _, err := bdb.NewInsert().Model(&p).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			var back db.Paper
			if err := bdb.NewSelect().Model(&back).Where("id = ?", p.ID).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			return back
		}
		seven := 7
		for _, p := range []db.Paper{
			{ArxivID: "hep-th/9603001", Title: "Full", DOI: "10.1000/x", Published: published, CitedByCount: &seven, AuthorsComplete: true},
			{ArxivID: "2401.00003", Title: "Sparse"},
		} {
			a := via(p)
			// The bound row is stored as bun writes a time, which is
			// what SQLite compares.
			var n int
			if err := bdb.NewRaw("SELECT COUNT(*) FROM papers WHERE published = ?", published).Scan(ctx, &n); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1, false: 0}[!p.Published.IsZero()]; n != want {
				t.Errorf("%s: %d papers published at %v by bun's comparison, want %d", p.ArxivID, n, published, want)
			}
			b := byBun(p)
			a.ID, b.ID = 0, 0
			if !a.Published.Equal(b.Published) || (a.CitedByCount == nil) != (b.CitedByCount == nil) {
				t.Errorf("%s: bound %+v, bun %+v", p.ArxivID, a, b)
			}
			a.Published, b.Published, a.CitedByCount, b.CitedByCount = time.Time{}, time.Time{}, nil, nil
			if a != b {
				t.Errorf("%s: bound %+v, bun %+v", p.ArxivID, a, b)
			}
		}
	})
}

// The bulk statements run past bun, but the hooks given with
// db.WithQueryHook (the statement counter, as the metrics use it) hear of
// every one of them.
func TestBulkStatementsCounted(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		for _, q := range []string{"CREATE TABLE cols (a BIGINT PRIMARY KEY, b TEXT NOT NULL, c BIGINT)", "CREATE TABLE ids (a BIGINT PRIMARY KEY)"} {
			if _, err := bdb.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		const n = 2501
		as, bs, cs := make([]int64, n), make([]string, n), make([]*int64, n)
		for i := range n {
			as[i], bs[i] = int64(i), fmt.Sprint(i)
		}
		counter := &db.StatementCounter{}
		counted := db.WithQueryHook(bdb, counter)
		err := counted.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := db.InsertColumns(ctx, tx, "cols", []string{"a", "b", "c"}, as, bs, cs); err != nil {
				return err
			}
			if _, err := db.UpdateColumns(ctx, tx, "cols", "a", as, []string{"c"}, as); err != nil {
				return err
			}
			ids, err := db.InsertColumnsReturning[int64](ctx, tx, "ids", []string{"a"}, "a", as)
			if err == nil && len(ids) != n {
				err = fmt.Errorf("RETURNING gave %d ids, want %d", len(ids), n)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// BEGIN and COMMIT; on PostgreSQL one INSERT, one UPDATE and one
		// INSERT … RETURNING, on SQLite an INSERT per 1,000 rows (three
		// parameters each), an UPDATE per 1,500 (two each) and an INSERT …
		// RETURNING per 3,000 (one each).
		want := int64(2 + 3 + 2 + 1)
		if db.IsPostgres(bdb) {
			want = 2 + 1 + 1 + 1
		}
		if got := counter.Count(); got != want {
			t.Errorf("counted %d statements, want %d", got, want)
		}
	})
}

// Text that array literals and SQL strings treat specially arrives as
// it was sent.
func TestInsertColumnsAwkwardText(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		if _, err := bdb.ExecContext(ctx, "CREATE TABLE cols (a BIGINT PRIMARY KEY, b TEXT NOT NULL, c TEXT)"); err != nil {
			t.Fatal(err)
		}
		texts := []string{"NULL", "null", "Null", "", " ", `a"b`, `c\d`, `\\`, "{e,f}", "g,h", "it's", "?", "$1", "ł\tż\n", "()"}
		as := make([]int64, len(texts))
		cs := make([]*string, len(texts))
		for i := range texts {
			as[i] = int64(i)
			cs[i] = &texts[i]
		}
		err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return db.InsertColumns(ctx, tx, "cols", []string{"a", "b", "c"}, as, texts, cs)
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []struct {
			A int64
			B string
			C *string
		}
		if err := bdb.NewSelect().Table("cols").Column("a", "b", "c").Order("a").Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(texts) {
			t.Fatalf("got %d rows, want %d", len(got), len(texts))
		}
		for i, r := range got {
			if r.B != texts[i] || r.C == nil || *r.C != texts[i] {
				t.Errorf("row %d = %q, %v; want %q twice", i, r.B, r.C, texts[i])
			}
		}
	})
}

// BenchmarkInsertColumns inserts 300,000 rows of three columns in one
// transaction per iteration, counted as the server counts statements
// (db.WithQueryHook), on each database.
func BenchmarkInsertColumns(b *testing.B) {
	const n = 300_000
	as, bs, cs := make([]int64, n), make([]string, n), make([]*int64, n)
	for i := range n {
		as[i], bs[i] = int64(i), fmt.Sprintf("row %d of the benchmark", i)
		if i%3 == 0 {
			cs[i] = &as[i]
		}
	}
	for _, kind := range dbtest.Kinds() {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			counter := &db.StatementCounter{}
			bdb := db.WithQueryHook(dbtest.Open(b, dbtest.NewMigrated(b, kind)), counter)
			for b.Loop() {
				b.StopTimer()
				if _, err := bdb.ExecContext(ctx, "DROP TABLE IF EXISTS cols"); err != nil {
					b.Fatal(err)
				}
				if _, err := bdb.ExecContext(ctx, "CREATE TABLE cols (a BIGINT PRIMARY KEY, b TEXT NOT NULL, c BIGINT)"); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					return db.InsertColumns(ctx, tx, "cols", []string{"a", "b", "c"}, as, bs, cs)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
