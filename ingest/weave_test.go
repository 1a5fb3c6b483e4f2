package ingest_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// weaveSources are real records of one archive from five sources; some
// papers appear in several of them.
var weaveSources = []struct {
	format ingest.Format
	path   string
}{
	{ingest.Paperscape, "testdata/paperscape.csv"},
	{ingest.Abs, "testdata/abs.tar.gz"},
	{ingest.Kaggle, "testdata/kaggle.jsonl"},
	{ingest.OpenAlex, "testdata/openalex.jsonl"},
	{ingest.ROR, "testdata/ror.jsonl"},
}

// TestWeavingIgnoresOrderAndBatching imports the same sources forwards
// (deriving after each import), backwards, and in one run that derives
// once at the end: all three databases must hold the same data.
func TestWeavingIgnoresOrderAndBatching(t *testing.T) {
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			forwards := dbtest.Open(t, dbtest.NewMigrated(t, kind))
			for _, s := range weaveSources {
				importFiles(t, forwards, s.format, s.path)
			}
			backwards := dbtest.Open(t, dbtest.NewMigrated(t, kind))
			for i := len(weaveSources) - 1; i >= 0; i-- {
				importFiles(t, backwards, weaveSources[i].format, weaveSources[i].path)
			}
			once := dbtest.Open(t, dbtest.NewMigrated(t, kind))
			for i, s := range weaveSources {
				_, err := ingest.Import(context.Background(), once, ingest.Options{
					Format: s.format, Paths: []string{s.path}, SkipDerive: i < len(weaveSources)-1,
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			want := dbtest.Dump(t, forwards)
			dbtest.SameDump(t, dbtest.Dump(t, backwards), want)
			dbtest.SameDump(t, dbtest.Dump(t, once), want)
			// And again: a second round changes nothing.
			for _, s := range weaveSources {
				if sum := importFiles(t, forwards, s.format, s.path); sum.Inserted+sum.Updated > 0 {
					t.Errorf("reimport of %s: %+v, want nothing inserted or updated", s.path, sum.Counts)
				}
			}
			dbtest.SameDump(t, dbtest.Dump(t, forwards), want)
		})
	}
}

// TestWeavingMergesOnePaper checks one paper that two sources describe:
// the Kaggle record and the .abs file of 0704.0001 become one paper with
// the fields of both.
func TestWeavingMergesOnePaper(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importFiles(t, bdb, ingest.Abs, "testdata/abs.tar.gz")
		importFiles(t, bdb, ingest.Kaggle, "testdata/kaggle.jsonl")
		var ps []db.Paper
		if err := bdb.NewSelect().Model(&ps).Where("arxiv_id = ?", "0704.0001").Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 {
			t.Fatalf("%d rows for 0704.0001, want 1", len(ps))
		}
		p := ps[0]
		if p.DOI != "10.1103/physrevd.76.013009" || p.Version != 2 || p.JournalRef != "Phys.Rev.D76:013009,2007" ||
			p.PrimaryCategory != "hep-ph" || p.AuthorCount != 4 {
			t.Errorf("0704.0001 = %+v", p)
		}
		var names []string
		if err := bdb.NewSelect().Table("authorships").Column("name").Where("paper_id = ?", p.ID).Order("position").Scan(context.Background(), &names); err != nil {
			t.Fatal(err)
		}
		if got, want := len(names), 4; got != want || names[0] != "C. Balázs" {
			t.Errorf("authors = %q, want 4 starting with C. Balázs", names)
		}
	})
}
