package resolvers_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/resolvers"
	"github.com/papergraph/papergraph/vector"
)

// testDim is the dimension of hashedEmbedding's vectors.
const testDim = 256

// hashedEmbedding is the test embedding model.
func hashedEmbedding(text string) []float32 { return vector.HashedWords(text, testDim) }

var hashedQuery = vector.HashedEmbedder(testDim)

// paperTexts is every arXiv paper's title and abstract, by id.
func paperTexts(t *testing.T, bdb bun.IDB) map[int64]string {
	t.Helper()
	var rows []struct {
		ID              int64
		Title, Abstract string
	}
	if err := bdb.NewRaw("SELECT id, title, abstract FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id").Scan(t.Context(), &rows); err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for _, r := range rows {
		out[r.ID] = r.Title + " " + r.Abstract
	}
	return out
}

// embeddedIndex is a built index of every paper's hashedEmbedding.
func embeddedIndex(t *testing.T, texts map[int64]string) *vector.Live {
	t.Helper()
	src := func(ctx context.Context, fn func(int64, []float32) error) error {
		for _, id := range slices.Sorted(maps.Keys(texts)) {
			if err := fn(id, hashedEmbedding(texts[id])); err != nil {
				return err
			}
		}
		return nil
	}
	live := vector.NewLive(hashedQuery)
	<-live.Start(t.Context(), src, testDim, vector.Options{})
	if !live.Ready() {
		t.Fatal("the index is not ready after its build")
	}
	return live
}

// vectorClient is a client of the schema over bdb whose requests search
// live.
func vectorClient(bdb bun.IDB, live *vector.Live) *client.Client {
	h := newHandler(bdb)
	return client.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(resolvers.WithVectors(r.Context(), live)))
	}))
}

type modeResp struct {
	SearchPapers struct {
		TotalCount int
		Facets     facetsFields
		Nodes      []struct{ ArxivID, Title string }
	}
}

func searchMode(t *testing.T, c *client.Client, query, mode string) (modeResp, error) {
	t.Helper()
	var resp modeResp
	err := c.Post(`query($q: String!, $m: SearchMode) { searchPapers(query: $q, mode: $m, first: 5) {
		totalCount facets { categories { category { code } count } years { year count } } nodes { arxivId title } } }`,
		&resp, client.Var("q", query), client.Var("m", mode))
	return resp, err
}

// TestSearchModes checks what each mode finds: a title with a misspelt
// word matches no paper in full, so KEYWORD relaxes it and still finds
// its paper first, and the paper is nearest it, which SEMANTIC and HYBRID
// put first; the statements of each mode asking for a count, both facets
// and a page are pinned: SEMANTIC reads the nearest papers its filters
// keep, then the categories facet and the page (3); KEYWORD reads its
// strict matches, which are fewer than db.RelaxBelow here, then the
// relaxed ones (4); HYBRID reads the keyword candidates as KEYWORD does (5).
func TestSearchModes(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		texts := paperTexts(t, bdb)
		var title, arxivID string
		if err := bdb.NewRaw("SELECT title, arxiv_id FROM papers WHERE arxiv_id = '0704.0001'").Scan(t.Context(), &title, &arxivID); err != nil {
			t.Fatal(err)
		}
		misspelt := title + " xyzzyplugh"
		c := vectorClient(bdb, embeddedIndex(t, texts))
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		for _, tt := range []struct {
			mode       string
			query      string
			first      string // "" for no match
			statements int64
		}{
			{"KEYWORD", misspelt, arxivID, 4},
			{"KEYWORD", title, arxivID, 4},
			{"SEMANTIC", misspelt, arxivID, 3},
			{"HYBRID", misspelt, arxivID, 5},
			{"HYBRID", title, arxivID, 5},
		} {
			before := counter.Count()
			resp, err := searchMode(t, c, tt.query, tt.mode)
			if err != nil {
				t.Fatalf("%s %q: %v", tt.mode, tt.query, err)
			}
			got := resp.SearchPapers
			switch {
			case tt.first == "" && len(got.Nodes) != 0:
				t.Errorf("%s %q: got %v, want nothing", tt.mode, tt.query, got.Nodes)
			case tt.first != "" && (len(got.Nodes) == 0 || got.Nodes[0].ArxivID != tt.first):
				t.Errorf("%s %q: got %v, want %s first", tt.mode, tt.query, got.Nodes, tt.first)
			}
			if n := counter.Count() - before; n != tt.statements {
				t.Errorf("%s %q: %d statements, want %d", tt.mode, tt.query, n, tt.statements)
			}
			if tt.first != "" && (got.TotalCount < len(got.Nodes) || len(got.Facets.Years) == 0) {
				t.Errorf("%s %q: count %d, facets %+v", tt.mode, tt.query, got.TotalCount, got.Facets)
			}
		}
		// SEMANTIC's nearest papers are every paper here (fewer than
		// resolvers.SemanticCandidates), so its count is theirs.
		resp, _ := searchMode(t, c, misspelt, "SEMANTIC")
		if resp.SearchPapers.TotalCount != len(texts) {
			t.Errorf("SEMANTIC count %d, want every paper, %d", resp.SearchPapers.TotalCount, len(texts))
		}
	})
}

// TestSearchModesWithoutIndex checks that while the index is being built,
// or when no paper has an embedding, HYBRID answers as KEYWORD and
// SEMANTIC is a SEMANTIC_UNAVAILABLE error naming the argument.
func TestSearchModesWithoutIndex(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		building := vector.NewLive(hashedQuery)
		release := make(chan struct{})
		done := building.Start(t.Context(), func(context.Context, func(int64, []float32) error) error {
			<-release
			return nil
		}, testDim, vector.Options{})
		defer func() { close(release); <-done }()
		for name, live := range map[string]*vector.Live{"building": building, "none": nil, "empty": vector.NewLive(hashedQuery)} {
			c := vectorClient(bdb, live)
			kw, err := searchMode(t, c, "field", "KEYWORD")
			if err != nil {
				t.Fatal(err)
			}
			hy, err := searchMode(t, c, "field", "HYBRID")
			if err != nil || !slices.Equal(hy.SearchPapers.Nodes, kw.SearchPapers.Nodes) || hy.SearchPapers.TotalCount != kw.SearchPapers.TotalCount {
				t.Errorf("%s: HYBRID %+v, %v; want KEYWORD's %+v", name, hy.SearchPapers, err, kw.SearchPapers)
			}
			var resp map[string]any
			err = c.Post(`{ searchPapers(query: "field", mode: SEMANTIC) { totalCount } }`, &resp)
			if err == nil || !strings.Contains(err.Error(), "SEMANTIC_UNAVAILABLE") || !strings.Contains(err.Error(), "mode: ") {
				t.Errorf("%s: SEMANTIC error %v, want SEMANTIC_UNAVAILABLE on mode", name, err)
			}
		}
	})
}
