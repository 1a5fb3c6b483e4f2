package resolvers_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
)

// A researcher's fields count the researcher's papers in each category,
// not the category's papers (categories keep their own count since
// migration 0015, under a column of the same name).
func TestResearcherFieldsCountTheirPapers(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		rid := scalar[int64](t, bdb, "SELECT researcher_id FROM researcher_categories GROUP BY researcher_id ORDER BY COUNT(*) DESC, researcher_id LIMIT 1")
		var want []string
		if err := bdb.NewRaw(`SELECT category || ' ' || CAST(paper_count AS TEXT) FROM researcher_categories
			WHERE researcher_id = ? ORDER BY paper_count DESC, category`, rid).Scan(t.Context(), &want); err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Researcher struct {
				Fields []struct {
					Category struct{ Code string }
					Count    int
				}
			}
		}
		c.MustPost(`query($id: String!) { researcher(id: $id) { fields { category { code } count } } }`, &resp, client.Var("id", fmt.Sprint(rid)))
		var got []string
		for _, f := range resp.Researcher.Fields {
			got = append(got, fmt.Sprintf("%s %d", f.Category.Code, f.Count))
		}
		if len(want) < 2 || !slices.Equal(got, want) {
			t.Errorf("researcher %d's fields: got %v, want %v", rid, got, want)
		}
	})
}
