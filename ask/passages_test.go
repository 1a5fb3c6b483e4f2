package ask_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/ask"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/demo"
	"github.com/papergraph/papergraph/ingest"
)

// importSample loads the demo's Kaggle sample (200 papers with
// abstracts).
func importSample(t *testing.T, bdb *bun.DB) {
	t.Helper()
	if _, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Kaggle, FS: demo.Files(),
		Paths: []string{"kaggle-arxiv-sample.jsonl.gz"}}); err != nil {
		t.Fatal(err)
	}
}

// A question's passages are sentences of the abstracts of the papers
// that match its words, best first, each with its paper and place; a
// question none of whose words is in every matching paper still finds
// the papers of each word; filters apply; first bounds them.
func TestPassages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importSample(t, bdb)
		ps, err := ask.Passages(t.Context(), bdb, "What is the source of axions?", db.PaperSearch{}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 || len(ps) > 3 || ps[0].Paper.ArxivID != "0704.0169" || !strings.Contains(strings.ToLower(ps[0].Text), "axion") {
			t.Fatalf("passages for axions: %+v, want up to 3, the first of 0704.0169 on axions", ps)
		}
		for i, p := range ps {
			if got := ask.Sentences(p.Paper.Abstract)[p.Position]; got != p.Text {
				t.Errorf("passage %d at position %d is %q, the abstract's sentence there %q", i, p.Position, p.Text, got)
			}
			if i > 0 && p.Score > ps[i-1].Score {
				t.Errorf("passage %d scores %v, more than the one before", i, p.Score)
			}
		}
		// "polarons" and "axions" share no paper: each word's papers count.
		ps, err = ask.Passages(t.Context(), bdb, "axions or polarons", db.PaperSearch{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		var papers []string
		for _, p := range ps {
			if !slices.Contains(papers, p.Paper.ArxivID) {
				papers = append(papers, p.Paper.ArxivID)
			}
		}
		slices.Sort(papers)
		if !slices.Contains(papers, "0704.0025") || !slices.Contains(papers, "0704.0169") {
			t.Errorf("passages for axions or polarons come from %v, want 0704.0025 and 0704.0169 among them", papers)
		}
		ps, err = ask.Passages(t.Context(), bdb, "axions", db.PaperSearch{Categories: []string{"math.CO"}}, 5)
		if err != nil || len(ps) != 0 {
			t.Errorf("axions in math.CO: %+v, %v; want none", ps, err)
		}
		if ps, err := ask.Passages(t.Context(), bdb, "what is the", db.PaperSearch{}, 5); err != nil || len(ps) != 0 {
			t.Errorf("a question of common words only: %+v, %v; want no passage", ps, err)
		}
	})
}

// Abstracts split at the ends of sentences, not at abbreviations.
func TestSentences(t *testing.T) {
	got := ask.Sentences("  We study e.g. the\n  Ising model. It has 2 phases! Fig. 3 shows them. Why? 42 is $x$.")
	want := []string{"We study e.g. the Ising model.", "It has 2 phases!", "Fig. 3 shows them.", "Why?", "42 is $x$."}
	if !slices.Equal(got, want) {
		t.Errorf("Sentences: %q, want %q", got, want)
	}
}
