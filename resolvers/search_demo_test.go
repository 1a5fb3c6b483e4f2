package resolvers_test

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// parityQueries are searches whose matches must be the same papers on
// both databases: punctuation of every kind between words, arXiv ids,
// decimals, diacritics, stop words, prefixes and phrases.
var parityQueries = []string{
	"string/fivebrane", "string fivebrane", "hep-th/9407087", "hep-th", "x-ray", "n=2", "N = 2 supersymmetric",
	"1.5", "3.14", "o(n)", "don't", "t'hooft", "'t Hooft", "Schrödinger", "schrodinger", "Bogoliubov–de Gennes",
	"Gödel", "Erdős", "naïve", "α'", "SU(3)×SU(2)×U(1)", "e^+e^-", "d-brane*", "chromo*", "mono*", "th*",
	"the", "a", "of the", `"black hole"`, `"string theory" dual*`, "monopole condensation confinement",
	"Calabi-Yau", "Kähler", "Yang–Mills", "q-deformed", "c=1", "2+1 dimensions", "ℏ", "μ-e conversion",
}

// TestSearchDemo runs the search tests that need the demo set, imported
// once per database: the same matches on both, known items
// first, and a topical query's influential papers on the first page;
// then, with the papers embedded by the built-in model and a vector index
// as serve builds, what SEMANTIC and HYBRID find (semanticModes).
func TestSearchDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the demo set (a minute or two per database); runs without -short")
	}
	dbs := map[string]*bun.DB{}
	for _, kind := range dbtest.Kinds() {
		dbs[kind] = demoDB(t, kind)
	}
	t.Run("parity", func(t *testing.T) {
		if len(dbs) < 2 {
			t.Skip("needs PostgreSQL too: set " + dbtest.PostgresEnv)
		}
		for _, q := range parityQueries {
			lite, pg := matches(t, dbs["sqlite"], q), matches(t, dbs["postgres"], q)
			if !slices.Equal(lite, pg) {
				t.Errorf("%q: SQLite matches %d papers, PostgreSQL %d; only on SQLite %v, only on PostgreSQL %v",
					q, len(lite), len(pg), firstFew(minus(lite, pg)), firstFew(minus(pg, lite)))
			}
		}
	})
	for kind, bdb := range dbs {
		c := newClient(bdb)
		t.Run(kind+"/known-items", func(t *testing.T) { knownItems(t, c) })
		t.Run(kind+"/paraphrases", func(t *testing.T) { paraphrases(t, c) })
		t.Run(kind+"/topical", func(t *testing.T) { topical(t, c) })
		t.Run(kind+"/capped-count", func(t *testing.T) { cappedCount(t, bdb, c) })
		t.Run(kind+"/candidates", func(t *testing.T) { candidatePages(t, bdb, c) })
		vc := builtinClient(t, bdb)
		t.Run(kind+"/semantic-and-hybrid", func(t *testing.T) { semanticModes(t, vc) })
	}
}

// candidatePages checks what a search with a query reads from its
// candidates, found once per request (db.SearchCandidates): relevance
// pages walked forward and backward (7 or 97 a page) against SQL ranking
// every match (RankAll) kept to the candidates, and totalCount and both
// facets against the candidates counted in Go, for common words (capped),
// rarer ones and no match, plain and in hep-th.
func candidatePages(t *testing.T, bdb *bun.DB, c *client.Client) {
	ctx := context.Background()
	f := readFacts(t, bdb)
	for _, q := range []string{"the", "of the", "theory", "quantum gravity", "fivebrane", "xyzzyplugh"} {
		for _, cats := range [][]string{nil, {"hep-th"}} {
			name := q + " " + strings.Join(cats, ",")
			sq, err := db.ParseSearchQuery(q)
			if err != nil {
				t.Fatal(err)
			}
			s := db.PaperSearch{Query: sq, Categories: cats}
			cited, err := db.SearchPapers(ctx, bdb, s, db.PageArgs{First: db.RelevanceCandidates, Order: db.MostCited})
			if err != nil {
				t.Fatal(err)
			}
			// The reference ranking is SQL's: every match ranked in the
			// statement (RankAll, as an export does), kept to the candidates.
			all := s
			all.RankAll = true
			ranked, err := db.SearchPapers(ctx, bdb, all, db.PageArgs{First: 1 << 20, Order: db.Relevance})
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			candidate := map[int64]bool{}
			for _, p := range cited.Items {
				ids = append(ids, p.ID)
				candidate[p.ID] = true
			}
			var want []string
			for _, p := range ranked.Items {
				if candidate[p.ID] {
					want = append(want, p.ArxivID)
				}
			}
			filter := map[string]any{"categories": cats}
			type page struct {
				SearchPapers struct {
					TotalCount int
					Facets     facetsFields
					PageInfo   struct {
						HasNextPage, HasPreviousPage bool
						StartCursor, EndCursor       *string
					}
					Nodes []struct{ ArxivID string }
				}
			}
			const pageQuery = `query($q: String!, $f: PaperFilter, $first: Int, $after: String, $last: Int, $before: String) {
				searchPapers(query: $q, filter: $f, first: $first, after: $after, last: $last, before: $before) { ` + facetFields + `
				pageInfo { hasNextPage hasPreviousPage startCursor endCursor } nodes { arxivId } } }`
			size := 7 // pages of 97 through a thousand candidates
			if len(want) > 100 {
				size = 97
			}
			var forward []string
			var after *string
			for range len(want) + 1 {
				var resp page
				c.MustPost(pageQuery, &resp, client.Var("q", q), client.Var("f", filter), client.Var("first", size), client.Var("after", after))
				if after == nil {
					checkFacets(t, name, facetsResp{resp.SearchPapers.TotalCount, resp.SearchPapers.Facets}, f, ids)
				}
				for _, n := range resp.SearchPapers.Nodes {
					forward = append(forward, n.ArxivID)
				}
				if !resp.SearchPapers.PageInfo.HasNextPage {
					break
				}
				after = resp.SearchPapers.PageInfo.EndCursor
			}
			if !slices.Equal(forward, want) {
				t.Errorf("%s: forward pages gave %d papers, want the %d ranked in SQL; first %v, want %v",
					name, len(forward), len(want), firstFew(forward), firstFew(want))
			}
			var backward []string
			var before *string
			for range len(want) + 1 {
				var resp page
				c.MustPost(pageQuery, &resp, client.Var("q", q), client.Var("f", filter), client.Var("last", size), client.Var("before", before))
				var got []string
				for _, n := range resp.SearchPapers.Nodes {
					got = append(got, n.ArxivID)
				}
				backward = append(got, backward...)
				if !resp.SearchPapers.PageInfo.HasPreviousPage {
					break
				}
				before = resp.SearchPapers.PageInfo.StartCursor
			}
			if !slices.Equal(backward, want) {
				t.Errorf("%s: backward pages gave %d papers, want the %d ranked in SQL", name, len(backward), len(want))
			}
		}
	}
}

// cappedCount checks totalCount and totalCountIsExact against every match
// of a query (of the relaxed query when fewer than db.RelaxBelow papers
// match in full): exact up to db.SearchCountCap matches, the cap and not
// exact past it, with the years facet adding up to totalCount either way.
func cappedCount(t *testing.T, bdb *bun.DB, c *client.Client) {
	for _, q := range []string{"the", "a", "of the", "a b", "theory", "monopole condensation confinement", "fivebrane"} {
		var resp struct {
			SearchPapers struct {
				TotalCount        int
				TotalCountIsExact bool
				Facets            struct{ Years []struct{ Count int } }
			}
		}
		c.MustPost(`query($q: String!) { searchPapers(query: $q, first: 1) { totalCount totalCountIsExact facets { years { count } } } }`,
			&resp, client.Var("q", q))
		got, all := resp.SearchPapers, len(matches(t, bdb, q))
		if all < db.RelaxBelow {
			// Relevance, the default order, relaxes a query few papers
			// match in full: its candidates are counted.
			sq, err := db.ParseSearchQuery(q)
			if err != nil {
				t.Fatal(err)
			}
			ids, err := db.KeywordRanked(context.Background(), bdb, db.PaperSearch{Query: sq}, db.RelevanceCandidates)
			if err != nil {
				t.Fatal(err)
			}
			all = len(ids)
		}
		want, exact := all, true
		if all > db.SearchCountCap {
			want, exact = db.SearchCountCap, false
		}
		sum := 0
		for _, y := range got.Facets.Years {
			sum += y.Count
		}
		if got.TotalCount != want || got.TotalCountIsExact != exact || sum != want {
			t.Errorf("%q (%d matches): totalCount %d, exact %v, years add up to %d; want %d, %v", q, all, got.TotalCount, got.TotalCountIsExact, sum, want, exact)
		}
	}
}

// matches is the sorted arXiv ids of every paper the search q matches.
func matches(t *testing.T, bdb *bun.DB, q string) []string {
	t.Helper()
	sq, err := db.ParseSearchQuery(q)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	pg, err := db.SearchPapers(context.Background(), bdb, db.PaperSearch{Query: sq}, db.PageArgs{First: 1 << 20, Order: db.MostCited})
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	ids := make([]string, len(pg.Items))
	for i, p := range pg.Items {
		ids[i] = p.ArxivID
	}
	slices.Sort(ids)
	return ids
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}

func firstFew(xs []string) []string { return xs[:min(len(xs), 5)] }

// firstPage is the arXiv ids of searchPapers' first n papers for query.
func firstPage(t *testing.T, c *client.Client, query string, n int) []string {
	t.Helper()
	var resp struct {
		SearchPapers struct{ Nodes []struct{ ArxivID string } }
	}
	c.MustPost(`query($q: String!, $n: Int!) { searchPapers(query: $q, first: $n) { nodes { arxivId } } }`, &resp,
		client.Var("q", query), client.Var("n", n))
	ids := make([]string, len(resp.SearchPapers.Nodes))
	for i, p := range resp.SearchPapers.Nodes {
		ids[i] = p.ArxivID
	}
	return ids
}

// knownItems searches for each paper of testdata/known_items.tsv by three
// distinctive words of its title, and wants it first for at least 95 % of
// them.
func knownItems(t *testing.T, c *client.Client) {
	first, total := successAt(t, c, "testdata/known_items.tsv", 2, 1)
	t.Logf("known items: success@1 %d of %d (%.3f)", first, total, float64(first)/float64(total))
	if total < 40 {
		t.Fatalf("%d known items, want at least 40", total)
	}
	if first*100 < total*95 {
		t.Errorf("%d of %d known items first, want at least 95 %%", first, total)
	}
}

// paraphraseFloor is the least share, in percent, of the paraphrase
// queries whose paper comes in the first 10, a little under what the
// keyword ranking reaches on both databases.
const paraphraseFloor = 90

// paraphrases searches for each paper of testdata/paraphrase_queries.tsv
// by a description of its idea in other words than its title's, and
// wants it on the first page of 10 for at least paraphraseFloor % of
// them: a query whose words no paper holds all of is relaxed, not empty.
func paraphrases(t *testing.T, c *client.Client) {
	found, total := successAt(t, c, "testdata/paraphrase_queries.tsv", 1, 10)
	t.Logf("paraphrases: success@10 %d of %d (%.3f)", found, total, float64(found)/float64(total))
	if total < 60 {
		t.Fatalf("%d paraphrase queries, want at least 60", total)
	}
	if found*100 < total*paraphraseFloor {
		t.Errorf("%d of %d paraphrased papers in the first 10, want at least %d %%", found, total, paraphraseFloor)
	}
}

// successAt searches for each paper of a file of tab-separated queries
// (the arXiv id in the first column, the query in column col, lines
// starting with # left out) and counts those whose paper comes in the
// first k of searchPapers' default order, logging the others.
func successAt(t *testing.T, c *client.Client, file string, col, k int) (found, total int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		id, query := cols[0], cols[col]
		total++
		got := firstPage(t, c, query, k)
		if slices.Contains(got, id) {
			found++
		} else {
			t.Logf("%q: want %s in the first %d, got %v", query, id, k, firstFew(got))
		}
	}
	return found, total
}

// topical wants a field's influential papers on the first page of a
// query naming the field.
func topical(t *testing.T, c *client.Client) {
	tests := []struct {
		query string
		want  []string
	}{
		// "Observation of Top Quark Production in Pbar-P Collisions", "Observation of the Top Quark", "Evidence for Top Quark Production…".
		{"top quark", []string{"hep-ex/9503002", "hep-ex/9503003", "hep-ex/9405005"}},
		// "Parton Distributions of the Proton" and CTEQ's two.
		{"parton distributions", []string{"hep-ph/9406315", "hep-ph/9410404", "hep-ph/9303255"}},
		// "The Black Hole in Three Dimensional Space Time"; "Black Hole Entropy in Canonical Quantum Gravity and Superstring Theory".
		{"black hole entropy", []string{"hep-th/9204099", "hep-th/9401070"}},
		// "Strong-Weak Coupling Duality in Four Dimensional String Theory"; "Duality Anomaly Cancellation, Minimal String Unification…".
		{"string duality", []string{"hep-th/9402002", "hep-th/9202046"}},
		// "Notes on D-Branes".
		{"d-branes", []string{"hep-th/9602052"}},
	}
	for _, tt := range tests {
		got := firstPage(t, c, tt.query, 20)
		for _, id := range tt.want {
			if !slices.Contains(got, id) {
				t.Errorf("%q: %s not on the first page %v", tt.query, id, got)
			}
		}
	}
}
