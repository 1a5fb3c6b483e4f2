package resolvers_test

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/vector"
)

// nearestByEmbedding is the paper other than id whose hashedEmbedding is
// nearest id's, by brute force.
func nearestByEmbedding(texts map[int64]string, id int64) int64 {
	unit := func(v []float32) []float64 {
		var s float64
		for _, f := range v {
			s += float64(f) * float64(f)
		}
		out := make([]float64, len(v))
		for i, f := range v {
			out[i] = float64(f) / math.Sqrt(s)
		}
		return out
	}
	q := unit(hashedEmbedding(texts[id]))
	best, bestSim := int64(0), math.Inf(-1)
	for other, text := range texts {
		if other == id {
			continue
		}
		var s float64
		for i, f := range unit(hashedEmbedding(text)) {
			s += f * q[i]
		}
		if s > bestSim || (s == bestSim && other < best) {
			best, bestSim = other, s
		}
	}
	return best
}

// relatedOf is Paper.related of the paper of arXiv id, as arXiv ids.
func relatedOf(t *testing.T, c *client.Client, arxivID string, n int) []string {
	t.Helper()
	var resp struct {
		Paper struct{ Related []struct{ ArxivID string } }
	}
	c.MustPost(`query($id: String!, $n: Int) { paper(id: $id) { related(first: $n) { arxivId } } }`, &resp, client.Var("id", arxivID), client.Var("n", n))
	var out []string
	for _, p := range resp.Paper.Related {
		out = append(out, p.ArxivID)
	}
	return out
}

// TestPaperRelated checks Paper.related: with no embeddings, the papers
// cited together with a paper and those citing the same papers; with
// them, the paper's nearest by embedding too, never the paper itself; and
// a level's related papers cost two statements (co-citation and coupling
// in one, then the papers) whatever its width.
func TestPaperRelated(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		var ps []struct {
			ID      int64
			ArxivID string
		}
		if err := bdb.NewRaw("SELECT id, arxiv_id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id LIMIT 4").Scan(t.Context(), &ps); err != nil {
			t.Fatal(err)
		}
		// Papers 2 and 3 both cite papers 0 and 1: 0 and 1 are co-cited,
		// 2 and 3 coupled, by two papers where the fixtures' references
		// tie some of them to others by one.
		for _, r := range [][2]int{{2, 0}, {2, 1}, {3, 0}, {3, 1}} {
			if _, err := bdb.NewRaw("INSERT INTO paper_references (citing_id, target, cited_id) VALUES (?, ?, ?)",
				ps[r[0]].ID, "test:"+strconv.Itoa(r[1]), ps[r[1]].ID).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		plain := vectorClient(bdb, nil)
		for _, c := range [][2]int{{0, 1}, {1, 0}, {2, 3}, {3, 2}} {
			got := relatedOf(t, plain, ps[c[0]].ArxivID, 5)
			if len(got) == 0 || len(got) > 5 || !slices.Contains(got, ps[c[1]].ArxivID) || slices.Contains(got, ps[c[0]].ArxivID) {
				t.Errorf("related of %s without embeddings = %v, want up to 5 with %s, without itself", ps[c[0]].ArxivID, got, ps[c[1]].ArxivID)
			}
		}
		texts := paperTexts(t, bdb)
		embedded := vectorClient(bdb, embeddedIndex(t, texts))
		var near string
		if err := bdb.NewRaw("SELECT arxiv_id FROM papers WHERE id = ?", nearestByEmbedding(texts, ps[0].ID)).Scan(t.Context(), &near); err != nil {
			t.Fatal(err)
		}
		got := relatedOf(t, embedded, ps[0].ArxivID, 10)
		if len(got) != 10 || !slices.Contains(got, ps[1].ArxivID) || !slices.Contains(got, near) || slices.Contains(got, ps[0].ArxivID) {
			t.Errorf("related of %s = %v, want 10 with %s (co-cited) and %s (nearest), without itself", ps[0].ArxivID, got, ps[1].ArxivID, near)
		}
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		for _, c := range []*client.Client{plain, embedded} {
			for _, n := range []int{2, 15} {
				before := counter.Count()
				var resp struct {
					SearchPapers struct {
						Nodes []struct{ Related []struct{ Title string } }
					}
				}
				c.MustPost(`query($n: Int) { searchPapers(sort: MOST_CITED, first: $n) { nodes { related(first: 3) { title } } } }`, &resp, client.Var("n", n))
				if got := counter.Count() - before; got != 3 || len(resp.SearchPapers.Nodes) != n {
					t.Errorf("%d papers' related: %d statements, %d papers; want 3 (page, related, papers), %d", n, got, len(resp.SearchPapers.Nodes), n)
				}
			}
		}
	})
}

// TestResearcherSimilar checks Researcher.similar: the co-authors of a
// researcher's one paper, whose embedding is the researcher's mean, come
// first; never the researcher; and a level's similar researchers cost
// three statements (papers, authors of the near papers, researchers)
// whatever its width, none without embeddings.
func TestResearcherSimilar(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		// A researcher with one paper of a few researchers.
		var r struct {
			Researcher, Paper int64
		}
		err := bdb.NewRaw(`SELECT a.researcher_id AS researcher, a.paper_id AS paper FROM authorships AS a
			WHERE (SELECT COUNT(*) FROM authorships AS o WHERE o.researcher_id = a.researcher_id) = 1
			AND (SELECT COUNT(researcher_id) FROM authorships AS o WHERE o.paper_id = a.paper_id) BETWEEN 2 AND 6
			ORDER BY a.paper_id, a.researcher_id LIMIT 1`).Scan(t.Context(), &r.Researcher, &r.Paper)
		if err != nil {
			t.Fatal(err)
		}
		var coauthors []int64
		if err := bdb.NewRaw("SELECT researcher_id FROM authorships WHERE paper_id = ? AND researcher_id IS NOT NULL AND researcher_id <> ? ORDER BY researcher_id",
			r.Paper, r.Researcher).Scan(t.Context(), &coauthors); err != nil {
			t.Fatal(err)
		}
		texts := paperTexts(t, bdb)
		embedded := vectorClient(bdb, embeddedIndex(t, texts))
		var resp struct {
			Researcher struct{ Similar []struct{ ID string } }
		}
		embedded.MustPost(`query($id: String!) { researcher(id: $id) { similar(first: 50) { id } } }`, &resp, client.Var("id", strconv.FormatInt(r.Researcher, 10)))
		var got []string
		for _, s := range resp.Researcher.Similar {
			got = append(got, s.ID)
		}
		want := make([]string, len(coauthors))
		for i, id := range coauthors {
			want[i] = model.GlobalID(model.KindResearcher, id)
		}
		slices.Sort(want)
		if len(got) < len(coauthors) || slices.Contains(got, model.GlobalID(model.KindResearcher, r.Researcher)) {
			t.Fatalf("similar of %d = %v, want its co-authors %v first, not itself", r.Researcher, got, coauthors)
		}
		first := slices.Sorted(slices.Values(got[:len(coauthors)]))
		if !slices.Equal(first, want) {
			t.Errorf("similar of %d starts %v, want its co-authors %v", r.Researcher, first, want)
		}
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		for _, c := range []struct {
			name string
			c    *client.Client
			want int64
		}{{"embedded", embedded, 5}, {"no embeddings", vectorClient(bdb, vector.NewLive(hashedQuery)), 2}} {
			for _, n := range []int{2, 15} {
				before := counter.Count()
				c.c.MustPost(`query($n: Int) { searchPapers(sort: MOST_CITED, first: $n) { nodes { authors { researcher { similar(first: 3) { name } } } } } }`,
					&map[string]any{}, client.Var("n", n))
				if got := counter.Count() - before; got != c.want {
					t.Errorf("%s, %d papers: %d statements, want %d", c.name, n, got, c.want)
				}
			}
		}
	})
}
