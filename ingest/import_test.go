package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// importFiles imports paths in format f and fails the test on an error.
func importFiles(t *testing.T, bdb *bun.DB, f ingest.Format, paths ...string) ingest.Summary {
	t.Helper()
	var bad []string
	sum, err := ingest.Import(context.Background(), bdb, ingest.Options{
		Format: f, Paths: paths,
		Bad: func(e *ingest.RecordError) { bad = append(bad, e.Error()) },
	})
	if err != nil {
		t.Fatalf("import %s %v: %v", f.Name, paths, err)
	}
	if len(bad) > 0 {
		t.Logf("import %s: %d malformed records, first: %s", f.Name, len(bad), bad[0])
	}
	return sum
}

func stats(t *testing.T, bdb *bun.DB) db.Stats {
	t.Helper()
	s, err := db.ReadStats(context.Background(), bdb)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestImportOpenAlexIsIdempotent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		first := importFiles(t, bdb, ingest.OpenAlex, "testdata/openalex.jsonl")
		if first.Inserted != 3 || first.Read != 3 {
			t.Errorf("first import: read %d inserted %d, want 3 and 3", first.Read, first.Inserted)
		}
		want := db.Stats{Papers: 1, Researchers: 9, Institutions: 1, Authorships: 9}
		if got := stats(t, bdb); got != want {
			t.Errorf("after first import: %+v, want %+v", got, want)
		}
		again := importFiles(t, bdb, ingest.OpenAlex, "testdata/openalex.jsonl")
		if again.Inserted != 0 || again.Updated != 0 || again.Unchanged != 3 {
			t.Errorf("second import: %+v, want 3 unchanged only", again.Counts)
		}
		if got := stats(t, bdb); got != want {
			t.Errorf("after second import: %+v, want %+v", got, want)
		}

		var p db.Paper
		if err := bdb.NewSelect().Model(&p).Where("doi = ?", "10.7717/peerj.4375").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if p.OpenAlexID != "W2741809807" || p.CitedByCount == nil || *p.CitedByCount != 962 || p.CitationCount != 962 || p.AuthorCount != 9 {
			t.Errorf("paper = %+v", p)
		}
		// The author record and the byline entry are one researcher.
		var r db.Researcher
		if err := bdb.NewSelect().Model(&r).Where("openalex_id = ?", "A5023888391").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if r.Name != "Jason Priem" || r.HIndex == nil || r.WorksCount == nil || r.PaperCount != 1 || r.MiddleCount != 1 || r.PositionKnownCount != 1 {
			t.Errorf("researcher = %+v", r)
		}
		var affs []db.Affiliation
		if err := bdb.NewSelect().Model(&affs).Where("paper_id = ?", p.ID).Order("position", "seq").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if len(affs) == 0 || affs[0].RORID != "05ppvf150" || affs[0].Raw != "Impact Technology Development (United States)" {
			t.Errorf("affiliations = %+v", affs)
		}
	})
}

// TestInstitutionNewAliasIsAnUpdate: a ROR record that only adds a name is
// an update, and the name is stored.
func TestInstitutionNewAliasIsAnUpdate(t *testing.T) {
	ror := string(readFixture(t, "testdata/ror.jsonl"))
	first, _, _ := strings.Cut(ror, "\n")
	renamed := strings.Replace(first, `"names": [`, `"names": [{"lang": null, "types": ["alias"], "value": "TSRI Bangkok"}, `, 1)
	if renamed == first {
		t.Fatal("fixture's first record has no names list")
	}
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importFiles(t, bdb, ingest.ROR, "testdata/ror.jsonl")
		sum := importFiles(t, bdb, ingest.ROR, writeFile(t, "renamed.jsonl", []byte(renamed+"\n")))
		if sum.Updated != 1 || sum.Unchanged != 0 {
			t.Errorf("reimport with a new alias: %+v, want 1 updated", sum.Counts)
		}
		n, err := bdb.NewSelect().Table("institution_names").Where("name = ? AND kind = ?", "TSRI Bangkok", "alias").Count(context.Background())
		if err != nil || n != 1 {
			t.Errorf("new alias stored %d times (%v), want 1", n, err)
		}
		if again := importFiles(t, bdb, ingest.ROR, writeFile(t, "renamed.jsonl", []byte(renamed+"\n"))); again.Unchanged != 1 {
			t.Errorf("same record again: %+v, want 1 unchanged", again.Counts)
		}
	})
}
