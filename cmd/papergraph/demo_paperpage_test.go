package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/demo"
	"github.com/papergraph/papergraph/server"
)

// paperPageQuery is the paper page: the paper with its authors, every
// field of its analysis and its topics with their parents.
const paperPageQuery = `query($ids: [String!]!) { papers(ids: $ids) {
	arxivId title authors { name }
	analysis { summary novelty paperType researchField significanceScore keywords source { model promptVersion } analysedAt }
	topics { name level parent { name } }
} }`

// paperPageStatements is what the paper page costs, for one paper or
// many: the papers, their bylines, their analyses, their topics, and the
// parents of those.
const paperPageStatements = 5

// fixtureAnalysis is a line of demo/data/analyses.jsonl.
type fixtureAnalysis struct {
	ArxivID           string   `json:"arxiv_id"`
	Summary           string   `json:"summary"`
	Novelty           string   `json:"novelty"`
	PaperType         string   `json:"paper_type"`
	ResearchField     string   `json:"research_field"`
	SignificanceScore int      `json:"significance_score"`
	Keywords          []string `json:"keywords"`
	Model             string   `json:"model"`
	PromptVersion     string   `json:"prompt_version"`
	AnalysedAt        string   `json:"analysed_at"`
}

// checkPaperPage runs the paper page on bdb, which holds the demo set and
// its analyses, for one paper and for every paper of the analysis
// fixture: each answer is the fixture's analysis, with the paper's title
// and authors, and both cost paperPageStatements.
func checkPaperPage(t *testing.T, bdb *bun.DB) {
	f, err := demo.Files().Open("analyses.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fixture []fixtureAnalysis
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		var a fixtureAnalysis
		if err := json.Unmarshal(lines.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		fixture = append(fixture, a)
	}
	if len(fixture) < 15 {
		t.Fatalf("%d analyses in the fixture, want at least 15", len(fixture))
	}
	statements := &db.StatementCounter{}
	srv, err := server.New(server.Config{DB: bdb.WithQueryHook(statements), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	for _, n := range []int{1, len(fixture)} {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fixture[i].ArxivID
		}
		before := statements.Count()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, graphqlRequest(paperPageQuery, map[string]any{"ids": ids}))
		if got := statements.Count() - before; got != paperPageStatements {
			t.Errorf("%d papers: %d statements, want %d", n, got, paperPageStatements)
		}
		var resp struct {
			Data struct {
				Papers []struct {
					ArxivID, Title string
					Authors        []struct{ Name string }
					Topics         []struct {
						Name   string
						Level  int
						Parent *struct{ Name string }
					}
					Analysis *struct {
						Summary, Novelty, PaperType, ResearchField string
						SignificanceScore                          int
						Keywords                                   []string
						Source                                     struct{ Model, PromptVersion string }
						AnalysedAt                                 time.Time
					}
				}
			}
			Errors []json.RawMessage
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Errors) > 0 || len(resp.Data.Papers) != n {
			t.Fatalf("%d papers: %.500s (%v)", n, rec.Body.String(), err)
		}
		for i, p := range resp.Data.Papers {
			want := fixture[i]
			a := p.Analysis
			if p.ArxivID != want.ArxivID || p.Title == "" || len(p.Authors) == 0 || a == nil {
				t.Errorf("%s: %+v, want its title, authors and analysis", want.ArxivID, p)
				continue
			}
			if a.Summary != want.Summary || a.Novelty != want.Novelty || a.PaperType != strings.ToUpper(want.PaperType) ||
				a.ResearchField != want.ResearchField || a.SignificanceScore != want.SignificanceScore ||
				!slices.Equal(a.Keywords, want.Keywords) || a.Source.Model != want.Model ||
				a.Source.PromptVersion != want.PromptVersion || a.AnalysedAt.Format(time.RFC3339) != want.AnalysedAt {
				t.Errorf("%s: analysis %+v, want the fixture's %+v", want.ArxivID, a, want)
			}
			// Every paper with an embedding is filed under a broad topic
			// and one within it, named.
			if tp := p.Topics; len(tp) != 2 || tp[0].Level != 0 || tp[0].Parent != nil || tp[0].Name == "" ||
				tp[1].Level != 1 || tp[1].Parent == nil || tp[1].Parent.Name != tp[0].Name || tp[1].Name == "" {
				t.Errorf("%s: topics %+v, want a named broad topic and a topic within it", want.ArxivID, tp)
			}
		}
		first := resp.Data.Papers[0]
		if first.ArxivID != "hep-th/9201001" || first.Title != "Combinatorics of the Modular Group II: the Kontsevich integrals" ||
			len(first.Authors) != 2 || first.Authors[1].Name != "J.-B. Zuber" || first.Analysis.Source.Model != "hand-written fixture" ||
			first.Analysis.PaperType != "THEORY" || !slices.Contains(first.Analysis.Keywords, "KdV hierarchy") {
			t.Errorf("%d papers: the first is %+v", n, first)
		}
	}
}
