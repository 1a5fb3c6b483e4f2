package resolvers_test

import (
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/resolvers"
)

// TestUnknownShapeBatches checks that a list below a field the
// look-ahead cannot read (here Authorship.institutions, its step removed)
// is still marshaled concurrently, so that the misses of the field's
// resolvers meet in one batch: the statements follow the query's depth,
// not the number of papers and authors. The lists of known shapes, whose
// counts the contract and root-list tests hold, are marshaled in line.
func TestUnknownShapeBatches(t *testing.T) {
	const query = `query($ids: [String!]!) { papers(ids: $ids) { authors { researcher { name } institutions { name } } } }`
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		ids := column(t, bdb, "SELECT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id")
		if len(ids) < 20 {
			t.Fatalf("only %d papers in the fixtures", len(ids))
		}
		log := &dbtest.Log{}
		bdb.AddQueryHook(log)
		c := newClient(bdb)
		answers := map[bool][]string{}
		for _, known := range []bool{true, false} {
			if !known {
				resolvers.WithoutStep(t, "Authorship.institutions")
			}
			for _, n := range []int{4, 20} {
				log.Take()
				data, errs := rawPost(t, c, query, client.Var("ids", ids[:n]))
				sqls := log.Take()
				if len(errs) != 0 {
					t.Fatalf("known=%v, n=%d: %+v", known, n, errs)
				}
				// The papers; their bylines with researchers; the
				// affiliations of all the bylines.
				if len(sqls) != 3 {
					t.Errorf("known=%v, n=%d: %d statements, want 3:\n%s", known, n, len(sqls), strings.Join(sqls, "\n"))
				}
				if authors := strings.Count(data, `"researcher":`); n == 20 && authors <= 20 {
					t.Errorf("known=%v: %d authors of 20 papers: the case does not test width", known, authors)
				}
				answers[known] = append(answers[known], data)
			}
		}
		for i := range answers[true] {
			if answers[true][i] != answers[false][i] {
				t.Errorf("answer %d differs without the step:\n%s\n%s", i, answers[true][i], answers[false][i])
			}
		}
	})
}
