package db_test

import (
	"cmp"
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/uptrace/bun"
	"modernc.org/sqlite"
)

// TestCitedBandsRankAsTheStatement checks a search's candidates read band
// by band of citations (db.SearchCandidates, migration 0019) against the
// search's most cited page, which reads every match (db.MostCited), and
// every match's score, which a relevance order over them all computes
// (RankAll): the same candidates in the same order, the same dates,
// whether there are more, and so the same relevance page with the same
// scores, for common words
// (whose candidates the top bands complete), rare ones, prefixes,
// phrases, no match, and filters, on three years of the demo set's
// citation data with the most cited paper of all without an arXiv id,
// which no search lists. On PostgreSQL a common word's statement reads
// the top band and never the rest (SQLite's stop at its UNION ALL's
// LIMIT is measured, not tested: it reports no rows read).
func TestCitedBandsRankAsTheStatement(t *testing.T) {
	dbtest.EachSeeded(t, pscp1992to94, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		stray := &db.Paper{Title: "The most cited paper of all, without an arXiv id", DOI: "10.1/stray", CitationCount: 1 << 30}
		if _, err := bdb.NewInsert().Model(stray).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// The bands below the top hold papers here, so that a word's
		// candidates come from several of them.
		var inBands int
		if err := bdb.NewRaw("SELECT COUNT(DISTINCT CASE WHEN citation_count >= 32 THEN 32 WHEN citation_count >= 16 THEN 16 WHEN citation_count >= 8 THEN 8 WHEN citation_count >= 4 THEN 4 WHEN citation_count >= 2 THEN 2 END) FROM papers").Scan(ctx, &inBands); err != nil {
			t.Fatal(err)
		}
		if inBands < 5 {
			t.Fatalf("papers in %d of the bands from 2 to 32 and past it, want 5", inBands)
		}
		var prolific int64
		if err := bdb.NewRaw("SELECT researcher_id FROM authorships GROUP BY researcher_id ORDER BY COUNT(*) DESC, researcher_id LIMIT 1").Scan(ctx, &prolific); err != nil {
			t.Fatal(err)
		}
		type ranked struct {
			ID    int64
			Score float64
		}
		read := func(t *testing.T, s db.PaperSearch) (c db.Candidates, page []ranked) {
			var err error
			c, err = db.SearchCandidates(ctx, bdb, s, true)
			if err != nil {
				t.Fatal(err)
			}
			pg, err := db.SearchPapers(ctx, bdb, s.WithCandidates(c), db.PageArgs{First: db.RelevanceCandidates, Order: db.Relevance})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pg.Items {
				page = append(page, ranked{p.ID, p.Score})
			}
			return c, page
		}
		doi := false
		common, rare := 0, 0
		for _, q := range []struct {
			text, filter string
			s            db.PaperSearch
		}{
			{"the", "", db.PaperSearch{}},
			{"of the", "", db.PaperSearch{}},
			{"field", "", db.PaperSearch{}},
			{"quantum", "", db.PaperSearch{}},
			{`"string theory"`, "", db.PaperSearch{}},
			{"th*", "", db.PaperSearch{}},
			{"quan*", "", db.PaperSearch{}},
			{"the of a in on", "", db.PaperSearch{}},
			{"monopole condensation", "", db.PaperSearch{}},
			{"xyzzyplugh", "", db.PaperSearch{}},
			{"the", "in hep-lat", db.PaperSearch{Categories: []string{"hep-lat"}}},
			{"field", "from March to December 1993", db.PaperSearch{From: time.Date(1993, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(1994, 1, 1, 0, 0, 0, 0, time.UTC)}},
			{"the", "without a DOI", db.PaperSearch{HasDOI: &doi}},
			{"the", "by the most prolific researcher", db.PaperSearch{ResearcherID: prolific}},
			{"field", "by a researcher of no paper", db.PaperSearch{ResearcherID: -1}},
		} {
			sq, err := db.ParseSearchQuery(q.text)
			if err != nil {
				t.Fatal(err)
			}
			s := q.s
			s.Query = sq
			name := strings.TrimSpace(fmt.Sprintf("%q %s", q.text, q.filter))
			got, gotPage := read(t, s)
			// The reference: every match most cited first (the keyset
			// pages' own statement), and every match's score as a
			// relevance order over all of them computes it (RankAll).
			cited, err := db.SearchPapers(ctx, bdb, s, db.PageArgs{First: db.RelevanceCandidates + 1, Order: db.MostCited})
			if err != nil {
				t.Fatal(err)
			}
			all := s
			all.RankAll = true
			every, err := db.SearchPapers(ctx, bdb, all, db.PageArgs{First: 100000, Order: db.Relevance})
			if err != nil {
				t.Fatal(err)
			}
			score := map[int64]float64{}
			for _, p := range every.Items {
				score[p.ID] = p.Score
			}
			var wantIDs []int64
			var wantYears []int
			for _, p := range cited.Items[:min(len(cited.Items), db.RelevanceCandidates)] {
				wantIDs, wantYears = append(wantIDs, p.ID), append(wantYears, yearOf(p.Published))
			}
			wantMore := len(cited.Items) > db.RelevanceCandidates
			wantPage := make([]ranked, len(wantIDs))
			for i, id := range wantIDs {
				wantPage[i] = ranked{id, score[id]}
			}
			slices.SortFunc(wantPage, func(x, y ranked) int {
				if x.Score != y.Score {
					return cmp.Compare(y.Score, x.Score)
				}
				return cmp.Compare(x.ID, y.ID)
			})
			switch {
			case wantMore:
				common++
			case len(wantIDs) > 0:
				rare++
			}
			if slices.Contains(got.IDs, stray.ID) {
				t.Fatalf("%s: the paper without an arXiv id is a candidate", name)
			}
			if got.Relaxed {
				// Too few papers match every word: the relaxed query's
				// candidates stand in, which TestRelaxedSearch checks.
				if len(cited.Items) >= db.RelaxBelow {
					t.Errorf("%s: relaxed although %d papers match every word", name, len(cited.Items))
				}
				continue
			}
			if !slices.Equal(got.IDs, wantIDs) || got.More != wantMore {
				t.Errorf("%s: %d candidates (more: %v), want %d (more: %v)", name, len(got.IDs), got.More, len(wantIDs), wantMore)
			}
			if !slices.Equal(db.CandidateYears(got), wantYears) {
				t.Errorf("%s: the candidates' years differ", name)
			}
			if !slices.Equal(gotPage, wantPage) {
				t.Errorf("%s: the relevance page differs from every match's scores (%d and %d papers)", name, len(gotPage), len(wantPage))
			}
		}
		if common < 4 || rare < 4 {
			t.Errorf("%d queries with more than %d matches and %d with fewer, want 4 of each", common, db.RelevanceCandidates, rare)
		}
		if !db.IsPostgres(bdb) {
			// SQLite stops at the UNION ALL's LIMIT: for "the" the rest,
			// read from the main index, is never read; for a rare word it
			// is, and finds its matches there.
			for _, q := range []struct {
				text string
				read bool
			}{{"the", false}, {"of", false}, {"monopole condensation", true}} {
				sq, err := db.ParseSearchQuery(q.text)
				if err != nil {
					t.Fatal(err)
				}
				restRows.Store(0)
				restore := db.SetRestProbe(" AND test_rest_probe(p.id)")
				_, err = db.SearchCandidates(ctx, bdb, db.PaperSearch{Query: sq}, true)
				restore()
				if err != nil {
					t.Fatal(err)
				}
				if n := restRows.Load(); (n > 0) != q.read {
					t.Errorf("%q: the rest part read %d rows, want some: %v", q.text, n, q.read)
				}
			}
			// A word whose cited matches are fewer than the candidates and
			// whose uncited ones are more than those still wanting: the
			// rest is read newest first, and no further than the wanting.
			partial := 0
			for _, text := range []string{"field", "quantum", "of the", "th*", "quan*", "model", "theory", "gauge"} {
				sq, err := db.ParseSearchQuery(text)
				if err != nil {
					t.Fatal(err)
				}
				var cited, uncited int
				if err := bdb.NewRaw(`SELECT COALESCE(SUM(p.citation_count >= 1), 0), COALESCE(SUM(p.citation_count = 0), 0)
					FROM papers_fts JOIN papers AS p ON p.id = papers_fts.rowid
					WHERE papers_fts MATCH ? AND p.arxiv_id IS NOT NULL`, db.FTS5(sq)).Scan(ctx, &cited, &uncited); err != nil {
					t.Fatal(err)
				}
				wanting := db.RelevanceCandidates + 1 - cited
				if wanting <= 0 || uncited <= wanting {
					continue
				}
				partial++
				restRows.Store(0)
				restore := db.SetRestProbe(" AND test_rest_probe(p.id)")
				_, err = db.SearchCandidates(ctx, bdb, db.PaperSearch{Query: sq}, true)
				restore()
				if err != nil {
					t.Fatal(err)
				}
				if n := restRows.Load(); n != int64(wanting) {
					t.Errorf("%q: the rest part read %d of %d uncited matches, want the %d wanting", text, n, uncited, wanting)
				}
			}
			if partial == 0 {
				t.Error("no query reads part of the rest; the fixture is not what the test expects")
			}
			return
		}
		sq, err := db.ParseSearchQuery("the")
		if err != nil {
			t.Fatal(err)
		}
		qctx, q, args := db.CandidatesSQL(ctx, bdb, db.PaperSearch{Query: sq}, true)
		var plan []byte
		if err := bdb.NewRaw("EXPLAIN (ANALYZE, FORMAT JSON) "+q, args...).Scan(qctx, &plan); err != nil {
			t.Fatal(err)
		}
		var root []struct{ Plan planNode }
		if err := json.Unmarshal(plan, &root); err != nil {
			t.Fatal(err)
		}
		// The scans of papers under each band's CTE, and whether they ran.
		ran := map[string]bool{}
		var walk func(n planNode, cte string)
		walk = func(n planNode, cte string) {
			if strings.HasPrefix(n.Subplan, "CTE ") {
				cte = strings.TrimPrefix(n.Subplan, "CTE ")
			}
			if n.Relation == "papers" {
				ran[cte] = ran[cte] || n.Loops > 0
			}
			for _, c := range n.Plans {
				walk(c, cte)
			}
		}
		walk(root[0].Plan, "")
		rest := fmt.Sprintf("b%d", len(db.CitedBands()))
		if r, ok := ran[rest]; !ran["b0"] || !ok || r {
			t.Errorf(`"the": the bands' scans of papers ran %v; want b0's run and %s's (the rest) not:\n%s`, ran, rest, plan)
		}
	})
}

// restRows counts the rows test_rest_probe sees.
var restRows atomic.Int64

func init() {
	sqlite.MustRegisterScalarFunction("test_rest_probe", 1, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		restRows.Add(1)
		return int64(1), nil
	})
}

// planNode is a node of PostgreSQL's EXPLAIN (ANALYZE, FORMAT JSON).
type planNode struct {
	Subplan  string     `json:"Subplan Name"`
	Relation string     `json:"Relation Name"`
	Loops    int        `json:"Actual Loops"`
	Plans    []planNode `json:"Plans"`
}

// TestCitedBandsFollowPapers checks that SQLite's papers_fts_cited holds
// each paper cited twice or more under its band's token, as citations
// arrive year by year, a paper's title and count change, and a paper is
// inserted and deleted
// (PostgreSQL's partial indexes follow their rows by themselves).
func TestCitedBandsFollowPapers(t *testing.T) {
	ctx := context.Background()
	var bdb *bun.DB
	check := func(when string) {
		t.Helper()
		bands := db.CitedBands()
		for i, b := range bands {
			var want, got []int64
			q := "SELECT id FROM papers WHERE citation_count >= ?"
			args := []any{b}
			if i > 0 {
				q += " AND citation_count < ?"
				args = append(args, bands[i-1])
			}
			if err := bdb.NewRaw(q+" ORDER BY id", args...).Scan(ctx, &want); err != nil {
				t.Fatal(err)
			}
			if err := bdb.NewRaw(`SELECT rowid FROM papers_fts_cited WHERE papers_fts_cited MATCH ? ORDER BY rowid`,
				fmt.Sprintf(`{band} : "c%d"`, b)).Scan(ctx, &got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: band %d holds %d papers, want %d", when, b, len(got), len(want))
			}
		}
		var total, cited int
		if err := bdb.NewRaw("SELECT COUNT(*) FROM papers_fts_cited").Scan(ctx, &total); err != nil {
			t.Fatal(err)
		}
		if err := bdb.NewRaw("SELECT COUNT(*) FROM papers WHERE citation_count >= ?", bands[len(bands)-1]).Scan(ctx, &cited); err != nil {
			t.Fatal(err)
		}
		if total != cited {
			t.Errorf("%s: papers_fts_cited holds %d rows, want %d", when, total, cited)
		}
	}
	// Each year's import onto the years before it, the seeds' chain.
	for _, s := range []struct {
		seed *dbtest.Seed
		year string
	}{{pscp1992, "1992"}, {pscp1992to93, "1993"}, {pscp1992to94, "1994"}} {
		bdb = dbtest.Open(t, dbtest.NewSeeded(t, "sqlite", s.seed))
		check("after " + paperscapeFile(s.year))
	}
	var top db.Paper
	if err := bdb.NewSelect().Model(&top).Where("arxiv_id IS NOT NULL").Order("citation_count DESC", "id").Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	// A changed text's new word finds the paper, which is in the top band.
	for _, change := range []struct{ set, word, what string }{
		{"title = 'Xyzzyplugh revisited'", "xyzzyplugh", "title"},
		{"abstract = 'On plughxyzzy and its kin.'", "plughxyzzy", "abstract"},
	} {
		if _, err := bdb.NewRaw("UPDATE papers SET "+change.set+" WHERE id = ?", top.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		sq, err := db.ParseSearchQuery(change.word)
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.SearchCandidates(ctx, bdb, db.PaperSearch{Query: sq}, true)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.IDs, []int64{top.ID}) {
			t.Errorf("a new %s's word finds %v, want [%d]", change.what, c.IDs, top.ID)
		}
		check("after a new " + change.what)
	}
	if _, err := bdb.NewRaw("UPDATE papers SET citation_count = 1 WHERE id = ?", top.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	check("after a count fell below the bands")
	for _, n := range []int{40, 2} {
		added := &db.Paper{Title: "A paper inserted cited", DOI: fmt.Sprintf("10.1/cited%d", n), CitationCount: n}
		if _, err := bdb.NewInsert().Model(added).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("after an insert cited %d times", n))
		if _, err := bdb.NewDelete().Model(added).WherePK().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("after a delete of a paper cited %d times", n))
	}
}

// yearOf is the year of t in UTC, 0 for the zero time: a candidate's year.
func yearOf(t time.Time) int {
	if t.IsZero() {
		return 0
	}
	return t.UTC().Year()
}
