package resolvers_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// contractQuery is the researcher page's query, as the issue states it
// and the README's first query shows it (TestREADMEFirstQuery).
var contractQuery = string(must(os.ReadFile("testdata/researcher-page.graphql")))

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestREADMEFirstQuery checks that the README's first query is the one
// the contract tests measure.
func TestREADMEFirstQuery(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), contractQuery) {
		t.Error("README.md does not show testdata/researcher-page.graphql as its first query")
	}
}

// contractStatements is the number of SQL statements the contract query
// costs, whatever the page size and however many authors and papers:
//
//  1. papers by arXiv id or DOI (the paper itself)
//  2. authorships of the paper, joined with their researchers
//  3. categories of the paper, with names (categories and primaryCategory)
//  4. citations: one page per paper (window query), which also counts
//     each paper's citations (COUNT(*) OVER, read without a cursor)
//  5. references: totals per paper (GROUP BY; no nodes asked, no page read)
//  6. researcher_categories of the authors' researchers (fields)
//  7. same_name profiles of those researchers, joined with researchers
//  8. papers by id (mostCitedPaper of those researchers)
//  9. papers of those researchers: one page each (window query), counted
//  10. coauthors of those researchers: one page each, joined with
//     researchers, counted
//  11. authorships of all the papers of all the pages of step 9, joined
//     with their researchers
const contractStatements = 11

type contractResponse struct {
	Paper struct {
		ArxivID         string
		Slug            string
		Title           string
		Published       *string
		AbsURL          string
		PDFURL          string
		CitedByCount    *int
		CitationCount   int
		PrimaryCategory struct{ Code, Name string }
		Categories      []struct{ Code, Name string }
		Citations       struct {
			TotalCount int
			Nodes      []struct{ ArxivID string }
		}
		References struct{ TotalCount int }
		Authors    []struct {
			Position   int
			Role       *string
			Name       string
			Researcher *struct {
				ID              string
				Name            string
				Slug            string
				PaperCount      int
				HIndex          *int
				ArchiveHIndex   int
				CitedByCount    *int
				WorksCount      *int
				AuthorPositions []struct {
					Role  string
					Count int
				}
				PositionKnownPaperCount int
				Fields                  []struct {
					Category struct{ Code string }
					Count    int
				}
				SameName []struct {
					ID            string
					Name          string
					PaperCount    int
					ArchiveHIndex int
				}
				MostCitedPaper *struct {
					ArxivID       string
					Title         string
					CitationCount int
				}
				Papers struct {
					TotalCount int
					PageInfo   struct {
						HasNextPage bool
						EndCursor   *string
					}
					Nodes []struct {
						ArxivID string
						Title   string
						Authors []struct {
							Position   int
							Role       *string
							Researcher *struct {
								ID            string
								Name          string
								ArchiveHIndex int
							}
						}
					}
				}
				Coauthors struct {
					TotalCount int
					Nodes      []struct {
						Researcher struct {
							ID   string
							Name string
						}
						SharedPaperCount int
					}
				}
			}
		}
	}
}

// busiestPaper is the most cited paper of the researcher with the most
// papers: a paper whose authors have long lists.
func busiestPaper(t testing.TB, bdb bun.IDB) string {
	return scalar[string](t, bdb, `SELECT p.arxiv_id FROM papers p
		JOIN authorships a ON a.paper_id = p.id JOIN researchers r ON r.id = a.researcher_id
		WHERE p.arxiv_id IS NOT NULL
		ORDER BY r.paper_count DESC, p.citation_count DESC, p.id LIMIT 1`)
}

func TestContractQuery(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		c := newClient(bdb)
		id := busiestPaper(t, bdb)
		paperID := scalar[int64](t, bdb, "SELECT id FROM papers WHERE arxiv_id = ?", id)
		for _, first := range []int{5, 50} {
			var resp contractResponse
			before := counter.Count()
			c.MustPost(contractQuery, &resp, client.Var("paper", id), client.Var("first", first))
			if got := counter.Count() - before; got != contractStatements {
				t.Errorf("first=%d: %d statements, want %d", first, got, contractStatements)
			}
			p := resp.Paper
			if p.ArxivID != id || p.AbsURL != "https://arxiv.org/abs/"+id || p.PDFURL != "https://arxiv.org/pdf/"+id || p.Published == nil {
				t.Errorf("paper = %+v", p)
			}
			if want := scalar[int](t, bdb, "SELECT citation_count FROM papers WHERE id = ?", paperID); p.CitationCount != want {
				t.Errorf("citationCount = %d, want %d", p.CitationCount, want)
			}
			if want := scalar[string](t, bdb, "SELECT category FROM paper_categories WHERE paper_id = ? AND position = 0", paperID); p.PrimaryCategory.Code != want || len(p.Categories) == 0 || p.Categories[0].Code != want || p.PrimaryCategory.Name == "" {
				t.Errorf("primaryCategory = %+v, categories = %+v, want %s first", p.PrimaryCategory, p.Categories, want)
			}
			if want := scalar[int](t, bdb, "SELECT COUNT(DISTINCT citing_id) FROM paper_references WHERE cited_id = ?", paperID); p.Citations.TotalCount != want || len(p.Citations.Nodes) != min(3, want) {
				t.Errorf("citations: total %d, %d nodes; want %d", p.Citations.TotalCount, len(p.Citations.Nodes), want)
			}
			if want := scalar[int](t, bdb, "SELECT COUNT(DISTINCT cited_id) FROM paper_references WHERE citing_id = ? AND cited_id IS NOT NULL", paperID); p.References.TotalCount != want {
				t.Errorf("references: total %d, want %d", p.References.TotalCount, want)
			}
			if want := scalar[int](t, bdb, "SELECT COUNT(*) FROM authorships WHERE paper_id = ?", paperID); len(p.Authors) != want || want < 2 {
				t.Fatalf("%d authors, want %d (at least 2)", len(p.Authors), want)
			}
			for i, a := range p.Authors {
				if a.Position != i+1 || a.Researcher == nil {
					t.Fatalf("author %d = %+v", i, a)
				}
				r := a.Researcher
				rid := scalar[int64](t, bdb, "SELECT researcher_id FROM authorships WHERE paper_id = ? AND position = ?", paperID, a.Position)
				if want := scalar[int](t, bdb, "SELECT COUNT(DISTINCT paper_id) FROM authorships WHERE researcher_id = ?", rid); r.PaperCount != want || r.Papers.TotalCount != want {
					t.Errorf("%s: paperCount %d, papers.totalCount %d, want %d", r.Name, r.PaperCount, r.Papers.TotalCount, want)
				}
				if want := min(first, r.PaperCount); len(r.Papers.Nodes) != want || r.Papers.PageInfo.HasNextPage != (r.PaperCount > first) {
					t.Errorf("%s: %d papers, hasNextPage %v; want %d of %d", r.Name, len(r.Papers.Nodes), r.Papers.PageInfo.HasNextPage, want, r.PaperCount)
				}
				for _, n := range r.Papers.Nodes {
					if want := scalar[int](t, bdb, "SELECT COUNT(*) FROM authorships a JOIN papers p ON p.id = a.paper_id WHERE p.arxiv_id = ?", n.ArxivID); len(n.Authors) != want {
						t.Errorf("%s: %d authors, want %d", n.ArxivID, len(n.Authors), want)
					}
				}
				if want := scalar[int](t, bdb, "SELECT COUNT(*) FROM coauthors WHERE researcher_id = ?", rid); r.Coauthors.TotalCount != want || len(r.Coauthors.Nodes) != min(10, want) {
					t.Errorf("%s: coauthors total %d, %d nodes; want %d", r.Name, r.Coauthors.TotalCount, len(r.Coauthors.Nodes), want)
				}
				if want := scalar[int](t, bdb, "SELECT COUNT(*) FROM researcher_categories WHERE researcher_id = ?", rid); len(r.Fields) != want {
					t.Errorf("%s: %d fields, want %d", r.Name, len(r.Fields), want)
				}
				if want := scalar[int](t, bdb, "SELECT COUNT(*) FROM same_name WHERE researcher_id = ?", rid); len(r.SameName) != want {
					t.Errorf("%s: %d same-name profiles, want %d", r.Name, len(r.SameName), want)
				}
				sum := 0
				for _, pos := range r.AuthorPositions {
					sum += pos.Count
				}
				if len(r.AuthorPositions) != 4 || sum != r.PositionKnownPaperCount {
					t.Errorf("%s: authorPositions %+v, want 4 rows summing to %d", r.Name, r.AuthorPositions, r.PositionKnownPaperCount)
				}
				if (r.MostCitedPaper == nil) != (scalar[int](t, bdb, "SELECT COALESCE(most_cited_paper_id, 0) FROM researchers WHERE id = ?", rid) == 0) {
					t.Errorf("%s: mostCitedPaper = %+v", r.Name, r.MostCitedPaper)
				}
			}
		}
	})
}

// TestDeferAnsweredInLine: a fragment under @defer is answered in the one
// response, as if the directive were absent, which the incremental
// delivery proposal allows a server to do. The server has no transport
// that sends later payloads, and when gqlgen resolved deferred fields in
// goroutines of their own it answered them as null with "hasNext": true,
// a promise that nothing then kept.
func TestDeferAnsweredInLine(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		h := newHandler(bdb)
		id := busiestPaper(t, bdb)
		post := func(query string) map[string]any {
			rec := postJSON(t, h, map[string]any{"query": query, "variables": map[string]any{"paper": id}})
			var resp map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
				t.Fatalf("%s: %v", rec.Body, err)
			}
			return resp
		}
		const query = `query($paper: String!) { paper(id: $paper) { title authors { name %s } } }`
		const fields = `researcher { name papers(first: 2) { totalCount nodes { title } } }`
		want := post(fmt.Sprintf(query, fields))
		for _, deferred := range []string{
			"... @defer { " + fields + " }",
			`... @defer(label: "r") { researcher { name ... @defer { papers(first: 2) { totalCount nodes { title } } } } }`,
		} {
			got := post(fmt.Sprintf(query, deferred))
			if _, ok := got["hasNext"]; ok || got["errors"] != nil || !reflect.DeepEqual(got["data"], want["data"]) {
				t.Errorf("%s:\ngot  %v\nwant %v", deferred, got, want)
			}
		}
		authors := want["data"].(map[string]any)["paper"].(map[string]any)["authors"].([]any)
		if len(authors) < 2 || authors[0].(map[string]any)["researcher"] == nil {
			t.Fatalf("authors = %v, want at least two with researchers", authors)
		}
	})
}
