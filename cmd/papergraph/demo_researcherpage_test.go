package main_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/server"
)

// researcherPagePapers are the papers of the demo set whose researcher
// pages are the largest: the longest bylines, and the papers of the
// researchers with the most papers. The estimate of the page does not
// depend on the paper (it follows the archive's typical lists), so these
// are the ones that could fail where others pass.
const researcherPagePapers = `
	SELECT arxiv_id FROM (SELECT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY author_count DESC, id LIMIT 20) a
	UNION
	SELECT arxiv_id FROM (
		SELECT p.arxiv_id FROM papers p JOIN authorships s ON s.paper_id = p.id JOIN researchers r ON r.id = s.researcher_id
		WHERE p.arxiv_id IS NOT NULL ORDER BY r.paper_count DESC, p.id LIMIT 20) b
	UNION SELECT 'hep-th/9201001'`

// checkResearcherPage runs the README's first query, the reference site's
// researcher page, under the server's default limits at 5, 24 (the site's
// page) and 50 papers a researcher, for the papers of
// researcherPagePapers: each is answered whole, with no error.
func checkResearcherPage(t *testing.T, bdb *bun.DB) {
	query, err := os.ReadFile("../../resolvers/testdata/researcher-page.graphql")
	if err != nil {
		t.Fatal(err)
	}
	var papers []string
	if err := bdb.NewRaw(researcherPagePapers).Scan(t.Context(), &papers); err != nil {
		t.Fatal(err)
	}
	if len(papers) < 30 {
		t.Fatalf("%d papers, want at least 30", len(papers))
	}
	sizes, err := db.ReadListSizes(t.Context(), bdb)
	if err != nil || len(sizes) == 0 {
		t.Fatalf("list sizes %v, %v; want the import's", sizes, err)
	}
	t.Logf("list sizes (99th percentiles): %v", sizes)
	srv, err := server.New(server.Config{DB: bdb, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	for _, first := range []int{5, 24, 50} {
		estimate, largest := 0, 0
		for _, paper := range papers {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, graphqlRequest(string(query), map[string]any{"paper": paper, "first": first}))
			var resp struct {
				Data struct {
					Paper *struct{ Authors []json.RawMessage }
				}
				Errors     []json.RawMessage
				Extensions struct {
					Cost struct{ NodeCount, MaxNodes int }
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Errors) > 0 || resp.Data.Paper == nil {
				t.Errorf("first %d, paper %s: %.300s (%v)", first, paper, rec.Body.String(), err)
				continue
			}
			estimate, largest = resp.Extensions.Cost.NodeCount, max(largest, len(resp.Data.Paper.Authors))
			if estimate > resp.Extensions.Cost.MaxNodes {
				t.Errorf("first %d: estimate %d over the node limit %d", first, estimate, resp.Extensions.Cost.MaxNodes)
			}
		}
		t.Logf("first %d: %d papers answered, estimated at %d objects (longest byline %d)", first, len(papers), estimate, largest)
	}
}
