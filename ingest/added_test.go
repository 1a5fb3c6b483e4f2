package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestAddedPapersMatchFullDerive: the papers an import adds to an archive
// are added to their authors' figures, fields and co-authors (derive_added)
// rather than those authors recomputed, and that leaves what recomputing
// every researcher leaves: authors at every position, a list cut short, a
// name printed twice, a collaboration too large to tie co-authors, several
// categories, a paper cited before it arrived, a profile the import
// creates, one transaction for all papers or one per paper, and a derive
// stopped after its first paper and run again.
func TestAddedPapersMatchFullDerive(t *testing.T) {
	base := tempFile(t, "base.jsonl", kaggleRecord("1001.0001", "Ann Lee, Bob Ray", "Paper 1001.0001", "hep-th", "")+
		kaggleRecord("1001.0002", "Ann Lee, Cy Dee, Dan Fox", "Paper 1001.0002", "hep-th hep-ph", "")+
		kaggleRecord("1001.0003", "Dan Fox", "Paper 1001.0003", "gr-qc", ""))
	// A reference to a paper not yet in the archive, resolved when it comes.
	early := tempFile(t, "early.csv", "1001.0004;hep-th;1;1;1002.0006;E.Roe;Cites\n")
	crowd := make([]string, db.MaxCoauthorPaperAuthors+1)
	for i := range crowd {
		crowd[i] = fmt.Sprintf("Member%03d Crowd", i)
	}
	increment := tempFile(t, "increment.jsonl", kaggleRecord("1002.0001", "Bob Ray, Cy Dee, Ann Lee", "Paper 1002.0001", "hep-ph math-ph", "")+
		kaggleRecord("1002.0002", "Ann Lee", "Paper 1002.0002", "hep-th", "")+
		kaggleRecord("1002.0003", "Cy Dee, Cy Dee, Eve Gold", "Paper 1002.0003", "hep-th", "")+
		kaggleRecord("1002.0004", "Ann Lee, Bob Ray, "+strings.Join(crowd, ", "), "Paper 1002.0004", "hep-ex", "")+
		kaggleRecord("1002.0005", "Bob Ray, Dan Fox et al.", "Paper 1002.0005", "hep-th", "")+
		kaggleRecord("1002.0006", "Dan Fox, Ann Lee", "Paper 1002.0006", "gr-qc hep-th", ""))
	load := func(t *testing.T, kind string, chunk int64, stopAfterOne bool) []string {
		saved := addedChunk
		addedChunk = chunk
		defer func() { addedChunk = saved }()
		bdb := dbtest.Open(t, dbtest.NewMigrated(t, kind))
		ctx := context.Background()
		for _, s := range []struct {
			f    Format
			path string
		}{{Kaggle, base}, {Paperscape, early}} {
			if _, err := Import(ctx, bdb, Options{Format: s.f, Paths: []string{s.path}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Import(ctx, bdb, Options{Format: Kaggle, Paths: []string{increment}, SkipDerive: true}); err != nil {
			t.Fatal(err)
		}
		names := func(q string) []string {
			t.Helper()
			var got []string
			if err := bdb.NewRaw(q).Scan(ctx, &got); err != nil {
				t.Fatal(err)
			}
			return got
		}
		// Only the profile the increment made (and the crowd's) is to be
		// recomputed; every new paper is to be added.
		queued := names(`SELECT r.name FROM researchers r JOIN derive_queue q ON q.researcher_id = r.id
			WHERE r.name NOT LIKE 'Member%' ORDER BY r.name`)
		if want := []string{"Eve Gold"}; !slices.Equal(queued, want) {
			t.Errorf("recompute queue after the increment = %q, want %q", queued, want)
		}
		added := names(`SELECT p.arxiv_id FROM papers p JOIN derive_added d ON d.paper_id = p.id ORDER BY 1`)
		if want := []string{"1002.0001", "1002.0002", "1002.0003", "1002.0004", "1002.0005", "1002.0006"}; !slices.Equal(added, want) {
			t.Errorf("added papers = %q, want %q", added, want)
		}
		if stopAfterOne {
			// A derive that stopped after its first transaction of added
			// papers: the next one must add each paper once.
			addedChunk = 1
			err := deriveStep(ctx, bdb, "added", addChunk)
			addedChunk = chunk
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := Derive(ctx, bdb); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"derive_queue", "derive_cited", "derive_added", "derive_batch"} {
			if n, err := bdb.NewSelect().Table(table).Count(ctx); err != nil || n != 0 {
				t.Errorf("%s holds %d rows (%v) after derive, want none", table, n, err)
			}
		}
		got := dbtest.Dump(t, bdb)
		recomputeEveryone(t, bdb)
		dbtest.SameDump(t, got, dbtest.Dump(t, bdb))
		var fig []string
		if err := bdb.NewRaw(`SELECT name || ' ' || CAST(paper_count AS TEXT) || ' ' || CAST(position_known_count AS TEXT) || ' ' ||
			CAST(sole_count AS TEXT) || ' ' || CAST(first_count AS TEXT) || ' ' || CAST(middle_count AS TEXT) || ' ' ||
			CAST(last_count AS TEXT) || ' h' || CAST(archive_h_index AS TEXT)
			FROM researchers WHERE name IN ('Ann Lee', 'Bob Ray', 'Cy Dee', 'Dan Fox') ORDER BY name`).Scan(ctx, &fig); err != nil {
			t.Fatal(err)
		}
		// name, papers, known positions, sole, first, middle, last, h-index
		want := []string{"Ann Lee 6 6 1 3 0 2 h1", "Bob Ray 4 3 0 1 1 1 h0", "Cy Dee 3 3 0 1 2 0 h0", "Dan Fox 4 3 1 1 0 1 h1"}
		if !slices.Equal(fig, want) {
			t.Errorf("figures = %q, want %q", fig, want)
		}
		return got
	}
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			all := load(t, kind, 1_000_000, false)
			dbtest.SameDump(t, load(t, kind, 1, false), all)
			dbtest.SameDump(t, load(t, kind, 1_000_000, true), all)
		})
	}
}

// TestDeriveStoppedAnywhereEndsTheSame stops a derive at each of its
// transactions in turn (batches of one researcher, one added paper a
// transaction: merges, recomputes, added papers, cited researchers and
// same-name links all pending) and runs it again: every stop must end
// with the data a derive never stopped leaves, which must be the data
// recomputing everyone leaves.
func TestDeriveStoppedAnywhereEndsTheSame(t *testing.T) {
	base := tempFile(t, "base.jsonl", kaggleRecord("1001.0001", "Ann Lee, Bob Ray", "Paper 1001.0001", "hep-th", "")+kaggleRecord("1001.0002", "Ann Lee, Cy Dee", "Paper 1001.0002", "hep-th", "")+
		kaggleRecord("1001.0003", "Gil Ho, Jon Orr", "Paper 1001.0003", "hep-th", "")+kaggleRecord("1001.0004", "B. Ray, Zed Quo", "Paper 1001.0004", "hep-th", "")+
		kaggleRecord("1001.0005", "G. Ho, Kim Poe", "Paper 1001.0005", "hep-th", "")+ // no co-author shared with Gil Ho: apart
		kaggleRecord("1001.0006", "Lu Chen, Mo Diaz", "Paper 1001.0006", "hep-th", ""))
	increment := tempFile(t, "inc.jsonl", kaggleRecord("1002.0001", "Lu Chen, Mo Diaz", "Paper 1002.0001", "hep-th", "")+ // added to both
		kaggleRecord("1002.0004", "Mo Diaz, Ann Lee, Lu Chen", "Paper 1002.0004", "hep-th", "")+ // added to two, Ann Lee recomputed
		kaggleRecord("1002.0002", "G. Ho, Jon Orr", "Paper 1002.0002", "hep-th", "")+ // now shared: G. Ho joins Gil Ho
		kaggleRecord("1001.0002", "Ann Lee, Cy Dee, Dan Fox", "Paper 1001.0002", "hep-th", `,{"version":"v2","created":"Tue, 5 Jan 2010 10:00:00 GMT"}`)) // a new version
	cites := tempFile(t, "cites.csv", "1002.0003;hep-th;1;1;1001.0001,1001.0003;Cy Dee;Cites\n")
	// The base derived, the increment and the citations not: each stop
	// starts from a copy of it on SQLite.
	pending := dbtest.NewSeed(func(ctx context.Context, bdb *bun.DB) error {
		for _, o := range []Options{
			{Format: Kaggle, Paths: []string{base}},
			{Format: Kaggle, Paths: []string{increment}, SkipDerive: true},
			{Format: Paperscape, Paths: []string{cites}, SkipDerive: true},
		} {
			if _, err := Import(ctx, bdb, o); err != nil {
				return err
			}
		}
		return nil
	})
	setup := func(t *testing.T, kind string) *bun.DB {
		return dbtest.Open(t, dbtest.NewSeeded(t, kind, pending))
	}
	savedSize, savedChunk, savedSteps := deriveBatchSize, addedChunk, deriveSteps
	deriveBatchSize, addedChunk = 1, 1
	defer func() { deriveBatchSize, addedChunk, deriveSteps = savedSize, savedChunk, savedSteps }()
	errStop := errors.New("stopped")
	// stopAt makes the steps count their transactions and fail the k-th
	// (none when k < 0); it returns the count.
	stopAt := func(k int) *int {
		n := new(int)
		deriveSteps = slices.Clone(savedSteps)
		for i := range deriveSteps {
			fn := deriveSteps[i].fn
			deriveSteps[i].fn = func(ctx context.Context, tx bun.Tx) error {
				*n++
				if *n-1 == k {
					return errStop
				}
				return fn(ctx, tx)
			}
		}
		return n
	}
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			bdb := setup(t, kind)
			n := stopAt(-1)
			if err := Derive(ctx, bdb); err != nil {
				t.Fatal(err)
			}
			want := dbtest.Dump(t, bdb)
			steps := *n
			if steps < 12 {
				t.Fatalf("the derive took %d transactions; the test expects merges, batches and added papers to take more", steps)
			}
			recomputeEveryone(t, bdb)
			dbtest.SameDump(t, want, dbtest.Dump(t, bdb))
			for k := range steps {
				bdb := setup(t, kind)
				stopAt(k)
				if err := Derive(ctx, bdb); !errors.Is(err, errStop) {
					t.Fatalf("derive stopped at transaction %d: %v, want the stop", k, err)
				}
				stopAt(-1)
				if err := Derive(ctx, bdb); err != nil {
					t.Fatal(err)
				}
				got := dbtest.Dump(t, bdb)
				for i := 0; i < len(got) || i < len(want); i++ {
					if i >= len(got) || i >= len(want) || got[i] != want[i] {
						t.Errorf("stopped at transaction %d of %d, then run again: dumps differ at line %d", k, steps, i)
						dbtest.SameDump(t, got, want)
						break
					}
				}
			}
		})
	}
}

// TestNewVersionsQueueWhatMoved: a new version queues its authors to be
// recomputed only when it moves what their figures are made of. A new
// title (what most versions change) moves nothing; new categories move
// the authors' fields.
func TestNewVersionsQueueWhatMoved(t *testing.T) {
	v2 := `,{"version":"v2","created":"Tue, 5 Jan 2010 10:00:00 GMT"}`
	base := tempFile(t, "base.jsonl", kaggleRecord("1001.0001", "Ann Lee, Bob Ray", "First", "hep-th", "")+
		kaggleRecord("1001.0002", "Cy Dee, Dan Fox", "Second", "hep-th", ""))
	versions := tempFile(t, "v2.jsonl", kaggleRecord("1001.0001", "Ann Lee, Bob Ray", "First, revised", "hep-th", v2)+
		kaggleRecord("1001.0002", "Cy Dee, Dan Fox", "Second", "hep-th hep-ph", v2))
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		if _, err := Import(ctx, bdb, Options{Format: Kaggle, Paths: []string{base}}); err != nil {
			t.Fatal(err)
		}
		sum, err := Import(ctx, bdb, Options{Format: Kaggle, Paths: []string{versions}, SkipDerive: true})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Counts.Updated != 2 {
			t.Fatalf("updated %d papers, want both new versions", sum.Counts.Updated)
		}
		var queued []string
		if err := bdb.NewRaw(`SELECT r.name FROM researchers r JOIN derive_queue q ON q.researcher_id = r.id ORDER BY r.name`).
			Scan(ctx, &queued); err != nil {
			t.Fatal(err)
		}
		if want := []string{"Cy Dee", "Dan Fox"}; !slices.Equal(queued, want) {
			t.Errorf("queued after the new versions = %q, want %q (the new categories' authors)", queued, want)
		}
		if err := Derive(ctx, bdb); err != nil {
			t.Fatal(err)
		}
		var fields []string
		if err := bdb.NewRaw(`SELECT r.name || ' ' || c.category || ' ' || CAST(c.paper_count AS TEXT) FROM researcher_categories c
			JOIN researchers r ON r.id = c.researcher_id ORDER BY 1`).Scan(ctx, &fields); err != nil {
			t.Fatal(err)
		}
		if want := []string{"Ann Lee hep-th 1", "Bob Ray hep-th 1", "Cy Dee hep-ph 1", "Cy Dee hep-th 1", "Dan Fox hep-ph 1", "Dan Fox hep-th 1"}; !slices.Equal(fields, want) {
			t.Errorf("fields = %q, want %q", fields, want)
		}
		got := dbtest.Dump(t, bdb)
		recomputeEveryone(t, bdb)
		dbtest.SameDump(t, got, dbtest.Dump(t, bdb))
	})
}

// kaggleRecord is a Kaggle record of one paper, its versions after the
// first given as JSON objects, each led by a comma.
func kaggleRecord(id, authors, title, cats, versions string) string {
	return `{"id":"` + id + `","authors":"` + authors + `","title":"` + title + `","categories":"` + cats + `",` +
		`"versions":[{"version":"v1","created":"Mon, 4 Jan 2010 10:00:00 GMT"}` + versions + `]}` + "\n"
}

// recomputeEveryone derives every researcher and paper anew: what an
// incremental derive must leave.
func recomputeEveryone(t *testing.T, bdb *bun.DB) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		"INSERT INTO derive_queue (researcher_id) SELECT id FROM researchers",
		"UPDATE papers SET archive_citation_count = 0",
		"INSERT INTO derive_papers (paper_id) SELECT id FROM papers",
	} {
		if _, err := bdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := Derive(ctx, bdb); err != nil {
		t.Fatal(err)
	}
}
