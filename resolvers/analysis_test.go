package resolvers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

const analysisQuery = `query($ids: [String!]!) { papers(ids: $ids) { arxivId analysis {
	summary novelty paperType researchField significanceScore keywords
	source { model promptVersion } analysedAt } } }`

// TestPaperAnalysis: a page of papers with every analysis field costs the
// papers' statement and one for all their analyses, for one paper and for
// twenty; a paper without an analysis shows null.
func TestPaperAnalysis(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		ids := column(t, bdb, "SELECT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id")
		if len(ids) < 21 {
			t.Fatalf("%d papers in the fixtures, want 21", len(ids))
		}
		at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		var rows []*db.PaperAnalysis
		var pids []int64
		if err := bdb.NewRaw("SELECT id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id").Scan(t.Context(), &pids); err != nil {
			t.Fatal(err)
		}
		for i, pid := range pids[1:21] {
			rows = append(rows, &db.PaperAnalysis{PaperID: pid, Summary: fmt.Sprintf("summary %d", i), Novelty: "novel",
				PaperType: db.PaperTypes[i%len(db.PaperTypes)], ResearchField: "field", SignificanceScore: i % 11,
				Keywords: []string{"k1", fmt.Sprint("k", i)}, Model: "m", PromptVersion: "v1", AbstractHash: "h", AnalysedAt: at})
		}
		if err := db.SaveAnalyses(t.Context(), bdb, rows); err != nil {
			t.Fatal(err)
		}
		log := &dbtest.Log{}
		bdb.AddQueryHook(log)
		c := newClient(bdb)
		for _, n := range []int{1, 2, 21} {
			log.Take()
			data, errs := rawPost(t, c, analysisQuery, client.Var("ids", ids[:n]))
			if sqls := log.Take(); len(errs) != 0 || len(sqls) != 2 {
				t.Errorf("n=%d: errors %+v, %d statements, want 2:\n%s", n, errs, len(sqls), strings.Join(sqls, "\n"))
			}
			var got struct {
				Papers []struct {
					ArxivID  string
					Analysis *struct {
						Summary, Novelty, PaperType, ResearchField string
						SignificanceScore                          int
						Keywords                                   []string
						Source                                     struct{ Model, PromptVersion string }
						AnalysedAt                                 time.Time
					}
				}
			}
			if err := json.Unmarshal([]byte(data), &got); err != nil || len(got.Papers) != n {
				t.Fatalf("n=%d: %v %s", n, err, data)
			}
			if got.Papers[0].Analysis != nil {
				t.Errorf("n=%d: %s has analysis %+v, want null", n, ids[0], got.Papers[0].Analysis)
			}
			if n < 2 {
				continue
			}
			a := got.Papers[1].Analysis
			if a == nil || a.Summary != "summary 0" || a.PaperType != "THEORY" || a.SignificanceScore != 0 ||
				strings.Join(a.Keywords, ",") != "k1,k0" || a.Source.Model != "m" || a.Source.PromptVersion != "v1" || !a.AnalysedAt.Equal(at) {
				t.Errorf("n=%d: %s analysis %+v", n, ids[1], a)
			}
			if last := got.Papers[n-1].Analysis; n == 21 && (last == nil || last.Summary != "summary 19" || last.PaperType != "EXPERIMENT") {
				t.Errorf("n=21: last analysis %+v", last)
			}
		}
	})
}
