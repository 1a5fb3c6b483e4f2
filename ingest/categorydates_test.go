package ingest_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// The category rows, the references and the authorships carry their
// paper's first-version date (a category's pages, a paper's citations and
// a researcher's papers by date are ranges of an index in that order): it
// is written with the rows and follows the paper when a later record moves
// the date without changing the categories, the references or the authors.
func TestCategoryDatesFollowPapers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importFiles(t, bdb, ingest.Kaggle, "testdata/kaggle.jsonl")
		// 0704.0001 cites 0704.0002 and 0704.0020, 0704.0025 cites 0704.0001.
		refs := filepath.Join(t.TempDir(), "pscp-2007.csv")
		if err := os.WriteFile(refs, []byte("0704.0001;hep-ph;2;2;0704.0002,0704.0020;;Calculation of prompt diphoton production cross sections at Tevatron and LHC energies\n"+
			"0704.0025;cond-mat.str-el;1;1;0704.0001;;Spectroscopic Properties of Polarons in Strongly Correlated Systems by Exact Diagrammatic Monte Carlo Method\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		importFiles(t, bdb, ingest.Paperscape, refs)
		// Again with a reference more: the paper is unchanged, its new
		// reference is dated all the same.
		more := filepath.Join(t.TempDir(), "pscp-2007.csv")
		if err := os.WriteFile(more, []byte("0704.0025;cond-mat.str-el;2;2;0704.0001,0704.0027;;Spectroscopic Properties of Polarons in Strongly Correlated Systems by Exact Diagrammatic Monte Carlo Method\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		importFiles(t, bdb, ingest.Paperscape, more)
		agree := func(when string) {
			t.Helper()
			for _, table := range []struct{ name, date, paper string }{
				{"paper_categories", "published", "paper_id"}, {"paper_references", "citing_published", "citing_id"},
				{"authorships", "published", "paper_id"},
			} {
				var n int
				if err := bdb.NewRaw(`SELECT COUNT(*) FROM `+table.name+` AS x JOIN papers AS p ON p.id = x.`+table.paper+`
					WHERE p.published = x.`+table.date).Scan(t.Context(), &n); err != nil {
					t.Fatal(err)
				}
				var all int
				if err := bdb.NewRaw(`SELECT COUNT(*) FROM `+table.name).Scan(t.Context(), &all); err != nil {
					t.Fatal(err)
				}
				if n != all || all == 0 {
					t.Errorf("%s: %d of %d %s rows carry their paper's date", when, n, all, table.name)
				}
			}
		}
		agree("after the first import")

		// 0704.0001 again, its first version a month earlier.
		data, err := os.ReadFile("testdata/kaggle.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		line := strings.SplitN(string(data), "\n", 2)[0]
		moved := strings.Replace(line, `"Mon, 2 Apr 2007 19:18:42 GMT"`, `"Fri, 2 Mar 2007 19:18:42 GMT"`, 1)
		if moved == line {
			t.Fatal("the fixture's first record has no v1 date to move")
		}
		path := filepath.Join(t.TempDir(), "moved.jsonl")
		if err := os.WriteFile(path, []byte(moved+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		importFiles(t, bdb, ingest.Kaggle, path)
		var published time.Time
		if err := bdb.NewRaw(`SELECT pc.published FROM paper_categories AS pc JOIN papers AS p ON p.id = pc.paper_id
			WHERE p.arxiv_id = '0704.0001'`).Scan(t.Context(), &published); err != nil {
			t.Fatal(err)
		}
		want := time.Date(2007, 3, 2, 19, 18, 42, 0, time.UTC)
		if !published.Equal(want) {
			t.Errorf("0704.0001's category row is dated %v, want %v", published, want)
		}
		var dates []time.Time
		if err := bdb.NewRaw(`SELECT r.citing_published FROM paper_references AS r JOIN papers AS p ON p.id = r.citing_id
			WHERE p.arxiv_id = '0704.0001'`).Scan(t.Context(), &dates); err != nil {
			t.Fatal(err)
		}
		if len(dates) != 2 {
			t.Errorf("0704.0001 has %d references, want 2", len(dates))
		}
		for _, d := range dates {
			if !d.Equal(want) {
				t.Errorf("0704.0001's reference is dated %v, want %v", d, want)
			}
		}
		var authored []time.Time
		if err := bdb.NewRaw(`SELECT a.published FROM authorships AS a JOIN papers AS p ON p.id = a.paper_id
			WHERE p.arxiv_id = '0704.0001'`).Scan(t.Context(), &authored); err != nil {
			t.Fatal(err)
		}
		if len(authored) == 0 {
			t.Error("0704.0001 has no authorships")
		}
		for _, d := range authored {
			if !d.Equal(want) {
				t.Errorf("0704.0001's authorship is dated %v, want %v", d, want)
			}
		}
		agree("after the date moved")
	})
}

// The categories' paper counts follow the papers filed under them: new
// papers, a paper moved to other categories, and the papers a second
// source files anew.
func TestCategoryCountsFollowFiling(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		agree := func(when string) {
			t.Helper()
			var wrong []struct {
				Code       string
				PaperCount int64
				N          int64
			}
			if err := bdb.NewRaw(`SELECT c.code, c.paper_count, COALESCE(f.n, 0) AS n FROM categories AS c
				LEFT JOIN (SELECT category, COUNT(*) AS n FROM paper_categories GROUP BY category) AS f ON f.category = c.code
				WHERE c.paper_count <> COALESCE(f.n, 0)`).Scan(t.Context(), &wrong); err != nil {
				t.Fatal(err)
			}
			for _, w := range wrong {
				t.Errorf("%s: %s counts %d papers, %d are filed under it", when, w.Code, w.PaperCount, w.N)
			}
			var filed int
			if err := bdb.NewRaw(`SELECT COUNT(*) FROM categories WHERE paper_count > 0`).Scan(t.Context(), &filed); err != nil {
				t.Fatal(err)
			}
			if filed == 0 {
				t.Errorf("%s: no category counts a paper", when)
			}
		}
		importFiles(t, bdb, ingest.Kaggle, "testdata/kaggle.jsonl")
		agree("after the first import")

		// 0704.0001 again, a newer version filed under other categories.
		data, err := os.ReadFile("testdata/kaggle.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		line := strings.SplitN(string(data), "\n", 2)[0]
		moved := strings.Replace(line, `"categories":"hep-ph"`, `"categories":"astro-ph.CO gr-qc"`, 1)
		moved = strings.Replace(moved, `{"version":"v2","created":"Tue, 24 Jul 2007 20:10:27 GMT"}]`,
			`{"version":"v2","created":"Tue, 24 Jul 2007 20:10:27 GMT"},{"version":"v3","created":"Tue, 1 Dec 2009 10:00:00 GMT"}]`, 1)
		if moved == line || !strings.Contains(moved, `"v3"`) || !strings.Contains(moved, "gr-qc") {
			t.Fatal("the fixture's first record has no categories or versions to change")
		}
		path := filepath.Join(t.TempDir(), "moved.jsonl")
		if err := os.WriteFile(path, []byte(moved+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		importFiles(t, bdb, ingest.Kaggle, path)
		var cats []string
		if err := bdb.NewRaw(`SELECT pc.category FROM paper_categories AS pc JOIN papers AS p ON p.id = pc.paper_id
			WHERE p.arxiv_id = '0704.0001' ORDER BY pc.position`).Scan(t.Context(), &cats); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cats, []string{"astro-ph.CO", "gr-qc"}) {
			t.Fatalf("0704.0001 is filed under %v, want [astro-ph.CO gr-qc]", cats)
		}
		agree("after 0704.0001 moved")

		importFiles(t, bdb, ingest.Paperscape, "testdata/paperscape.csv")
		agree("after the Paperscape import")
	})
}
