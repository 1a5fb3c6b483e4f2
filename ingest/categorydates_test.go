package ingest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// The category rows carry their paper's first-version date (a category's
// pages are ranges of an index in that order): it is written with the
// rows and follows the paper when a later record moves the date without
// changing the categories.
func TestCategoryDatesFollowPapers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importFiles(t, bdb, ingest.Kaggle, "testdata/kaggle.jsonl")
		agree := func(when string) {
			t.Helper()
			var n int
			if err := bdb.NewRaw(`SELECT COUNT(*) FROM paper_categories AS pc JOIN papers AS p ON p.id = pc.paper_id
				WHERE p.published = pc.published`).Scan(t.Context(), &n); err != nil {
				t.Fatal(err)
			}
			var all int
			if err := bdb.NewRaw(`SELECT COUNT(*) FROM paper_categories`).Scan(t.Context(), &all); err != nil {
				t.Fatal(err)
			}
			if n != all || all == 0 {
				t.Errorf("%s: %d of %d category rows carry their paper's date", when, n, all)
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
		if want := time.Date(2007, 3, 2, 19, 18, 42, 0, time.UTC); !published.Equal(want) {
			t.Errorf("0704.0001's category row is dated %v, want %v", published, want)
		}
		agree("after the date moved")
	})
}
