package db_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// schemaObjects lists every index and trigger with its definition, as the
// database gives them.
func schemaObjects(t *testing.T, bdb *bun.DB) []string {
	t.Helper()
	q := `SELECT name || ': ' || sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY name`
	if db.IsPostgres(bdb) {
		q = `SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()
			UNION ALL
			SELECT c.conname || ': ' || c.conrelid::regclass || ' ' || pg_get_constraintdef(c.oid) FROM pg_constraint c
			WHERE c.connamespace = current_schema()::regnamespace
			ORDER BY 1`
	}
	var out []string
	if err := bdb.NewRaw(q).Scan(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func searchTitles(t *testing.T, bdb *bun.DB, words string) []string {
	t.Helper()
	q, err := db.ParseSearchQuery(words)
	if err != nil {
		t.Fatal(err)
	}
	page, err := db.SearchPapers(context.Background(), bdb, db.PaperSearch{Query: q}, db.PageArgs{First: 10})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range page.Items {
		out = append(out, p.Title)
	}
	return out
}

func TestBulkLoadDefersAndRebuildsIndexes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		before := schemaObjects(t, bdb)

		on, err := db.BeginBulk(ctx, bdb)
		if err != nil || !on {
			t.Fatalf("BeginBulk on an empty archive = %v, %v; want true", on, err)
		}
		during := schemaObjects(t, bdb)
		if len(during) >= len(before) {
			t.Fatalf("bulk mode dropped nothing: %d objects before, %d during", len(before), len(during))
		}
		for _, o := range during {
			if !slices.Contains(before, o) {
				t.Errorf("bulk mode added or changed %q", o)
			}
		}
		// A paper written in bulk mode, then an update of its title.
		p := &db.Paper{ArxivID: "2401.00001", Title: "Quasicrystal lattices", Abstract: "Penrose tilings in Łódź."}
		if _, err := bdb.NewInsert().Model(p).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := bdb.NewUpdate().Model(p).Set("title = ?", "Quasicrystal lattices revisited").WherePK().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// A second import finds the bulk load open and goes on with it.
		if on, err := db.BeginBulk(ctx, bdb); err != nil || !on {
			t.Fatalf("BeginBulk with a bulk load open = %v, %v; want true", on, err)
		}

		if err := db.EndBulk(ctx, bdb); err != nil {
			t.Fatal(err)
		}
		if after := schemaObjects(t, bdb); !slices.Equal(after, before) {
			t.Errorf("indexes and triggers after the bulk load:\n%q\nwant\n%q", after, before)
		}
		for _, words := range []string{"revisited", "penrose lodz", "quasi*"} {
			if got := searchTitles(t, bdb, words); !slices.Equal(got, []string{"Quasicrystal lattices revisited"}) {
				t.Errorf("search %q after the bulk load = %q", words, got)
			}
		}
		// Ended, and an archive with papers starts no new one; the
		// full-text index follows writes again.
		if err := db.EndBulk(ctx, bdb); err != nil {
			t.Fatal(err)
		}
		if on, err := db.BeginBulk(ctx, bdb); err != nil || on {
			t.Fatalf("BeginBulk on an archive with papers = %v, %v; want false", on, err)
		}
		if _, err := bdb.NewUpdate().Model(p).Set("title = ?", "Aperiodic order").WherePK().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if got := searchTitles(t, bdb, "aperiodic"); !slices.Equal(got, []string{"Aperiodic order"}) {
			t.Errorf("search after an update = %q", got)
		}
		if got := searchTitles(t, bdb, "revisited"); len(got) != 0 {
			t.Errorf("search for the old title = %q, want nothing", got)
		}
	})
}

// searchSegments reads how many segments SQLite's full-text index holds
// from its structure record (row 10 of papers_fts_data: a 4-byte cookie,
// in newer versions a 4-byte version mark, then the number of levels and
// the number of segments as SQLite varints).
func searchSegments(t *testing.T, bdb *bun.DB) uint64 {
	t.Helper()
	var rec []byte
	if err := bdb.NewRaw(`SELECT block FROM papers_fts_data WHERE id = 10`).Scan(context.Background(), &rec); err != nil {
		t.Fatal(err)
	}
	i := 4
	if len(rec) >= 8 && string(rec[4:8]) == "\xff\x00\x00\x01" {
		i = 8
	}
	varint := func() uint64 {
		var v uint64
		for n := 0; n < 9 && i < len(rec); n++ {
			b := rec[i]
			i++
			if n == 8 {
				return v<<8 | uint64(b)
			}
			v = v<<7 | uint64(b&0x7f)
			if b < 0x80 {
				return v
			}
		}
		t.Fatalf("structure record %x ends in a varint", rec)
		return 0
	}
	varint() // levels
	return varint()
}

// bulkPapers writes n papers of 60-word abstracts into a bulk load
// begun on a new SQLite archive, and returns the archive.
func bulkPapers(t *testing.T, n int) *bun.DB {
	t.Helper()
	ctx := context.Background()
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	if on, err := db.BeginBulk(ctx, bdb); err != nil || !on {
		t.Fatalf("BeginBulk on an empty archive = %v, %v; want true", on, err)
	}
	words := strings.Fields("lattice gauge theory monopole condensation confinement string duality brane " +
		"entropy horizon inflation neutrino quark gluon plasma anomaly supersymmetry soliton instanton")
	var papers []db.Paper
	for i := range n {
		var abs []string
		for j := range 60 {
			abs = append(abs, fmt.Sprintf("%s%d", words[(i*7+j)%len(words)], (i*j)%97))
		}
		papers = append(papers, db.Paper{ArxivID: fmt.Sprintf("2401.%05d", i+1),
			Title: fmt.Sprintf("On %s number %d", words[i%len(words)], i), Abstract: strings.Join(abs, " ")})
	}
	if _, err := bdb.NewInsert().Model(&papers).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return bdb
}

// TestBulkLoadLeavesOneSearchSegment: the refill of the full-text index at
// the end of a bulk load writes a segment per hash's worth of text and
// per transaction of papers, and EndBulk merges them into one, so that
// the next import's small segments are not merged with them (FTS5's merge
// of a level that reaches 16 segments). The hash is shrunk so that 400
// papers fill it several times, and the papers are refilled 64 ids a
// transaction.
func TestBulkLoadLeavesOneSearchSegment(t *testing.T) {
	defer db.SetFTSHashSize(32 << 10)()
	defer db.SetFTSRefillChunk(64)()
	bdb := bulkPapers(t, 400)
	if err := db.EndBulk(context.Background(), bdb); err != nil {
		t.Fatal(err)
	}
	if n := searchSegments(t, bdb); n != 1 {
		t.Errorf("full-text index after the bulk load: %d segments, want 1", n)
	}
	for _, i := range []int{0, 63, 64, 399} {
		want := fmt.Sprintf("number %d", i)
		if got := searchTitles(t, bdb, want); len(got) != 1 || !strings.HasSuffix(got[0], want) {
			t.Errorf("search %q after the bulk load = %q", want, got)
		}
	}
}

// stopAfter cancels its context once the statements it has seen include
// n that begin with prefix: an import stopped there.
type stopAfter struct {
	prefix string
	n      int
	cancel context.CancelFunc
}

func (s *stopAfter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (s *stopAfter) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if strings.HasPrefix(e.Query, s.prefix) {
		if s.n--; s.n == 0 {
			s.cancel()
		}
	}
}

// TestBulkLoadRefillStoppedPartWay: an end of a bulk load stopped after
// some of the full-text refill's transactions leaves the bulk load open,
// and the next end gives the index an uninterrupted end gives.
func TestBulkLoadRefillStoppedPartWay(t *testing.T) {
	defer db.SetFTSHashSize(32 << 10)()
	defer db.SetFTSRefillChunk(64)()
	matches := func(bdb *bun.DB, word string) []int64 {
		var ids []int64
		if err := bdb.NewRaw(`SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rowid`, word).
			Scan(context.Background(), &ids); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	whole := bulkPapers(t, 400)
	if err := db.EndBulk(context.Background(), whole); err != nil {
		t.Fatal(err)
	}

	stopped := bulkPapers(t, 400)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped.AddQueryHook(&stopAfter{prefix: "INSERT INTO papers_fts (rowid", n: 3, cancel: cancel})
	if err := db.EndBulk(ctx, stopped); err == nil {
		t.Fatal("EndBulk stopped part way returned no error")
	}
	if open, err := db.BulkOpen(context.Background(), stopped); err != nil || !open {
		t.Fatalf("BulkOpen after a stopped end = %v, %v; want true", open, err)
	}
	if got := matches(stopped, "number"); len(got) == 0 || len(got) >= 400 {
		t.Fatalf("papers indexed when the end stopped: %d; want some of 400", len(got))
	}
	if err := db.EndBulk(context.Background(), stopped); err != nil {
		t.Fatal(err)
	}
	if n := searchSegments(t, stopped); n != 1 {
		t.Errorf("full-text index after the second end: %d segments, want 1", n)
	}
	for _, word := range []string{"number", "lattice0", "instanton*", "qu*", "duality", "soliton96"} {
		if got, want := matches(stopped, word), matches(whole, word); !slices.Equal(got, want) {
			t.Errorf("%q after a stopped and a second end matches %d papers, after one end %d", word, len(got), len(want))
		}
	}
}
