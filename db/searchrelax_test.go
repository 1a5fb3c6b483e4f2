package db_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// relaxPapers are papers of which none holds every word of the queries
// TestRelaxedSearch asks.
var relaxPapers = []*db.Paper{
	{ArxivID: "hep-th/9601029", Title: "Microscopic Origin of the Bekenstein-Hawking Entropy",
		Abstract:  "We count the microstates of extremal black holes as bound states of string solitons (D-branes).",
		Published: time.Date(1996, 1, 9, 0, 0, 0, 0, time.UTC)},
	{ArxivID: "hep-th/9602001", Title: "Solitons in string theory",
		Abstract:  "String solitons and their bound states, without black holes.",
		Published: time.Date(1996, 2, 1, 0, 0, 0, 0, time.UTC)},
	{ArxivID: "hep-th/9603001", Title: "Collapsed stars",
		Abstract:  "Gravitational collapse of stars to black holes.",
		Published: time.Date(1996, 3, 1, 0, 0, 0, 0, time.UTC)},
	{ArxivID: "hep-th/9604001", Title: "An unrelated paper", Abstract: "Lattice gauge theory of the strong force.",
		Published: time.Date(1996, 4, 1, 0, 0, 0, 0, time.UTC)},
}

// TestRelaxedSearch: a query no paper matches in full ranks the papers
// matching most of its words (at least half of those not stop words), the
// one matching most first; its count and
// candidates agree; filters and required terms (+word, "phrase") hold;
// a query matching fully stays strict. Statements: two for the relaxed
// candidates, one for strict ones.
func TestRelaxedSearch(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		if err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := db.InsertPapers(ctx, tx, relaxPapers)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		tests := []struct {
			query      string
			from       time.Time
			want       []string
			statements int64
		}{
			{"counting the microstates of black holes via string solitons", time.Time{},
				[]string{"hep-th/9601029", "hep-th/9602001"}, 2},
			{"microstates of collapsed stars", time.Time{}, []string{"hep-th/9603001"}, 2},
			{"black holes string solitons", time.Date(1996, 2, 1, 0, 0, 0, 0, time.UTC),
				[]string{"hep-th/9602001", "hep-th/9603001"}, 2},
			{"+lattice black holes string", time.Time{}, nil, 2},
			{`"bound states" black holes extremal`, time.Time{}, []string{"hep-th/9601029", "hep-th/9602001"}, 2},
			{`"bound states" stars collapse`, time.Time{}, nil, 2},
			{"solitons", time.Time{}, []string{"hep-th/9602001", "hep-th/9601029"}, 1},
			{"xyzzy plugh", time.Time{}, nil, 2},
		}
		for _, tt := range tests {
			q, err := db.ParseSearchQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			s := db.PaperSearch{Query: q, From: tt.from}
			before := counter.Count()
			c, err := db.SearchCandidates(ctx, bdb, s, true)
			if err != nil {
				t.Fatalf("%q: %v", tt.query, err)
			}
			if got := counter.Count() - before; got != tt.statements {
				t.Errorf("%q: %d statements, want %d", tt.query, got, tt.statements)
			}
			ids, err := db.KeywordRanked(ctx, bdb, s, 10)
			if err != nil {
				t.Fatal(err)
			}
			got := arxivIDs(t, bdb, ids)
			if !slices.Equal(got, tt.want) {
				t.Errorf("%q: ranked %v, want %v", tt.query, got, tt.want)
			}
			n, exact, err := db.SearchCount(ctx, bdb, s.WithCandidates(c))
			if err != nil || n != len(tt.want) || !exact {
				t.Errorf("%q: count %d, exact %v (%v), want %d", tt.query, n, exact, err, len(tt.want))
			}
			page, err := db.SearchPapers(ctx, bdb, s.WithCandidates(c), db.PageArgs{First: 2, Order: db.Relevance})
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range page.Items {
				if p.ArxivID != tt.want[i] {
					t.Errorf("%q: page item %d is %s, want %s", tt.query, i, p.ArxivID, tt.want[i])
				}
			}
		}
	})
}

// arxivIDs is the arXiv ids of papers ids, in their order.
func arxivIDs(t *testing.T, bdb *bun.DB, ids []int64) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		var a string
		if err := bdb.NewRaw("SELECT arxiv_id FROM papers WHERE id = ?", id).Scan(context.Background(), &a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}
