package resolvers_test

import (
	"context"
	"slices"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/internal/searchquality"
)

// naturalLanguage is the demo set's natural-language queries (each a
// paper's idea in a reader's words), shared with papergraph-bench.
const naturalLanguage = "../cmd/papergraph-bench/testdata/demo-queries.tsv"

// Floors of the query sets by mode, in percent, a little under what the
// built-in model reaches on both databases (docs/performance.md#search):
// the vectors alone find most natural-language queries' paper in the
// first ten, and fused with the keyword ranking nearly all of them.
const (
	semanticNaturalFloor = 70
	hybridNaturalFloor   = 90
	knownItemsFloor      = 95
)

// builtinClient embeds bdb's papers with the built-in model, as an import
// does, builds the index a server searches and returns a client whose
// requests search it.
func builtinClient(t *testing.T, bdb *bun.DB) *client.Client {
	t.Helper()
	ctx := context.Background()
	m, _, err := embed.Builtin(ctx, bdb, embed.BuiltinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	live, done, err := embed.StartIndex(ctx, bdb, embed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	return vectorClient(bdb, live)
}

// measureSet posts every query of file in mode ("" for the default).
func measureSet(t *testing.T, c *client.Client, file, mode string) searchquality.Row {
	t.Helper()
	qs, err := searchquality.ReadSet(file)
	if err != nil || len(qs) == 0 {
		t.Fatalf("%s: %d queries, %v", file, len(qs), err)
	}
	row, err := searchquality.Measure(c, file, mode, qs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %s: @1 %d, @10 %d of %d", file, row.Mode, row.At1, row.At10, row.Queries)
	return row
}

// modeFirstPage is the arXiv ids of the first k papers searchPapers
// answers query with in mode.
func modeFirstPage(t *testing.T, c *client.Client, query, mode string, k int) []string {
	t.Helper()
	var resp struct {
		SearchPapers struct{ Nodes []struct{ ArxivID string } }
	}
	c.MustPost(`query($q: String!, $m: SearchMode!, $k: Int!) { searchPapers(query: $q, first: $k, mode: $m) { nodes { arxivId } } }`,
		&resp, client.Var("q", query), client.Var("m", mode), client.Var("k", k))
	ids := make([]string, len(resp.SearchPapers.Nodes))
	for i, n := range resp.SearchPapers.Nodes {
		ids[i] = n.ArxivID
	}
	return ids
}

// semanticModes checks SEMANTIC and HYBRID on the demo set, searched
// through the built-in embeddings and a vector index: queries in other
// words than their paper's find it, by meaning alone (SEMANTIC) and fused
// with the keyword ranking (HYBRID, the default), and the default mode
// keeps the known items first.
func semanticModes(t *testing.T, c *client.Client) {
	for _, tt := range meaningCases {
		got := modeFirstPage(t, c, tt.query, tt.mode, 10)
		if !slices.Contains(got, tt.want) {
			t.Errorf("%s %q: %s not in the first ten %v", tt.mode, tt.query, tt.want, got)
		}
	}
	if row := measureSet(t, c, naturalLanguage, "SEMANTIC"); row.At10*100 < row.Queries*semanticNaturalFloor {
		t.Errorf("SEMANTIC: natural-language queries' paper in the first ten %d of %d, want at least %d %%; missed:\n%v",
			row.At10, row.Queries, semanticNaturalFloor, row.Misses)
	}
	kw := measureSet(t, c, naturalLanguage, "KEYWORD")
	hy := measureSet(t, c, naturalLanguage, "HYBRID")
	if hy.At10*100 < hy.Queries*hybridNaturalFloor || hy.At10 < kw.At10 {
		t.Errorf("HYBRID: natural-language queries' paper in the first ten %d of %d (KEYWORD %d), want at least %d %% and KEYWORD's; missed:\n%v",
			hy.At10, hy.Queries, kw.At10, hybridNaturalFloor, hy.Misses)
	}
	for _, mode := range []string{"", "HYBRID"} {
		if row := measureSet(t, c, "testdata/known_items.tsv", mode); row.At1*100 < row.Queries*knownItemsFloor {
			t.Errorf("%s: known items first %d of %d, want at least %d %%; not first:\n%v",
				row.Mode, row.At1, row.Queries, knownItemsFloor, row.MissesAt1)
		}
	}
}

// meaningCases are queries whose paper shares few words with them, each
// with the mode that must find it in the first ten. The first two are
// papers the keyword ranking alone misses: the Toda paper is not in
// KEYWORD's first ten, and the hypermultiplet paraphrase matches no
// paper's words well enough for KEYWORD to answer anything.
var meaningCases = []struct{ mode, query, want string }{
	// "Quantum boundary currents for nonsimply-laced Toda theories".
	{"SEMANTIC", "integrable boundary conditions and higher spin charges for affine Toda field theory on a half line", "hep-th/9510084"},
	{"HYBRID", "integrable boundary conditions and higher spin charges for affine Toda field theory on a half line", "hep-th/9510084"},
	// "N = 2 supergravity models based on the nonsymmetric quaternionic manifolds. II. Gauge interactions".
	{"SEMANTIC", "hypermultiplet scalars parameterizing target spaces, Lagrangians and supertransformations, continued investigation", "hep-th/9605143"},
	{"HYBRID", "hypermultiplet scalars parameterizing target spaces, Lagrangians and supertransformations, continued investigation", "hep-th/9605143"},
	// "Octonionic representations of Clifford algebras and triality".
	{"SEMANTIC", "Clifford algebra representations built from octonions", "hep-th/9407179"},
	// "Hawking's chronology protection conjecture: singularity structure of the quantum stress--energy tensor".
	{"SEMANTIC", "can wormholes become time machines, quantum stress tensor and chronology protection", "hep-th/9303023"},
	// "Emission of charged particles from four- and five-dimensional black holes".
	{"HYBRID", "Hawking radiation of charged particles from near-extremal black holes and D-branes", "hep-th/9608108"},
}
