package resolvers_test

import (
	"cmp"
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
)

// TestPaginationWalk walks long lists to their end, forward with after and
// backward with before, in every order, and checks that every item comes
// exactly once and in order.
func TestPaginationWalk(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		rid := scalar[int64](t, bdb, "SELECT id FROM researchers ORDER BY paper_count DESC, id LIMIT 1")
		cited := scalar[string](t, bdb, "SELECT arxiv_id FROM papers ORDER BY archive_citation_count DESC, id LIMIT 1")
		category := scalar[string](t, bdb, "SELECT category FROM researcher_categories WHERE researcher_id = ? ORDER BY paper_count DESC, category LIMIT 1 OFFSET 1", rid)
		type list struct{ name, query string }
		sizes := map[string]int{} // items per page, 3 when not listed
		lists := []list{
			{"coauthors", `query($id: String!, $n: Int, $after: String, $last: Int, $before: String) { researcher(id: $id) {
				l: coauthors(first: $n, after: $after, last: $last, before: $before) {
				totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { researcher { id } } } } } }`},
			{"citations", `query($p: String!, $n: Int, $after: String, $last: Int, $before: String) { paper(id: $p) {
				l: citations(first: $n, after: $after, last: $last, before: $before, sort: MOST_CITED) {
				totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } } } }`},
		}
		for _, sort := range []string{"NEWEST", "OLDEST", "MOST_CITED"} {
			lists = append(lists, list{"papers " + sort, fmt.Sprintf(`query($id: String!, $n: Int, $after: String, $last: Int, $before: String) { researcher(id: $id) {
				l: papers(first: $n, after: $after, last: $last, before: $before, sort: %s) {
				totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } } } }`, sort)})
		}
		lists = append(lists, list{"papers in " + category, fmt.Sprintf(`query($id: String!, $n: Int, $after: String, $last: Int, $before: String) { researcher(id: $id) {
			l: papers(first: $n, after: $after, last: $last, before: $before, category: %q) {
			totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } } } }`, category)})
		// A category's papers by date, forward as ranges of its index and
		// backward through the window of every other list, must agree,
		// undated papers last both ways; two of the category's papers lose
		// their date for that.
		var undated []int64
		if err := bdb.NewRaw("SELECT paper_id FROM paper_categories WHERE category = ? ORDER BY paper_id LIMIT 2", category).Scan(t.Context(), &undated); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"UPDATE papers SET published = NULL WHERE id IN (?)", "UPDATE paper_categories SET published = NULL WHERE paper_id IN (?)"} {
			if _, err := bdb.NewRaw(q, bun.List(undated)).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		for _, sort := range []string{"NEWEST", "OLDEST", "MOST_CITED"} {
			lists = append(lists, list{"category papers " + sort, fmt.Sprintf(`query($n: Int, $after: String, $last: Int, $before: String) { category(code: %q) {
				l: papers(first: $n, after: $after, last: $last, before: $before, sort: %s) {
				totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } } } }`, category, sort)})
			sizes["category papers "+sort] = 7
		}
		// A paper's citations by date likewise (ranges of the cited index
		// forward, the window backward): two citing papers lose their date.
		var citing []int64
		if err := bdb.NewRaw(`SELECT r.citing_id FROM paper_references AS r JOIN papers AS p ON p.id = r.cited_id
			WHERE p.arxiv_id = ? ORDER BY r.citing_id LIMIT 2`, cited).Scan(t.Context(), &citing); err != nil {
			t.Fatal(err)
		}
		if len(citing) != 2 {
			t.Fatalf("%s has %d citations, want 2 at least", cited, len(citing))
		}
		for _, q := range []string{"UPDATE papers SET published = NULL WHERE id IN (?)", "UPDATE paper_categories SET published = NULL WHERE paper_id IN (?)",
			"UPDATE paper_references SET citing_published = NULL WHERE citing_id IN (?)"} {
			if _, err := bdb.NewRaw(q, bun.List(citing[:2])).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		for _, sort := range []string{"NEWEST", "OLDEST"} {
			lists = append(lists, list{"citations " + sort, fmt.Sprintf(`query($p: String!, $n: Int, $after: String, $last: Int, $before: String) { paper(id: $p) {
				l: citations(first: $n, after: $after, last: $last, before: $before, sort: %s) {
				totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } } } }`, sort)})
		}
		// A researcher's papers by date likewise (ranges of the authorships'
		// researcher index forward, the window backward): two of the
		// researcher's papers lose their date, and the researcher is printed
		// twice on a third, which both ways list once.
		var own []int64
		if err := bdb.NewRaw("SELECT paper_id FROM authorships WHERE researcher_id = ? ORDER BY paper_id LIMIT 3", rid).Scan(t.Context(), &own); err != nil {
			t.Fatal(err)
		}
		if len(own) != 3 {
			t.Fatalf("researcher %d has %d papers, want 3 at least", rid, len(own))
		}
		for _, q := range []string{"UPDATE papers SET published = NULL WHERE id IN (?)", "UPDATE paper_categories SET published = NULL WHERE paper_id IN (?)",
			"UPDATE paper_references SET citing_published = NULL WHERE citing_id IN (?)", "UPDATE authorships SET published = NULL WHERE paper_id IN (?)"} {
			if _, err := bdb.NewRaw(q, bun.List(own[:2])).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := bdb.NewRaw(`INSERT INTO authorships (paper_id, position, name, researcher_id, published)
			SELECT paper_id, 1000, name, researcher_id, published FROM authorships WHERE paper_id = ? AND researcher_id = ?`, own[2], rid).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		// The fixtures have few institutions: those are walked one a page.
		for _, root := range []struct {
			field string
			size  int
		}{{`searchResearchers(query: "a"`, 3}, {`searchInstitutions(query: "u"`, 1}} {
			lists = append(lists, list{root.field, `query($n: Int, $after: String, $last: Int, $before: String) {
				l: ` + root.field + `, first: $n, after: $after, last: $last, before: $before) {
				totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } } }`})
			sizes[root.field] = root.size
		}
		for _, l := range lists {
			t.Run(l.name, func(t *testing.T) { walkBothWays(t, c, l.query, rid, cited, cmp.Or(sizes[l.name], 3)) })
		}
	})
}

// walkBothWays walks a list forward and backward and checks that both
// walks meet the same items in opposite orders.
func walkBothWays(t *testing.T, c *client.Client, query string, rid int64, cited string, size int) {
	t.Helper()
	forward := walk(t, c, query, rid, cited, size, false)
	backward := walk(t, c, query, rid, cited, size, true)
	if len(forward) <= size {
		t.Errorf("only %d items; the walk needs a longer list", len(forward))
	}
	if len(forward) != len(backward) {
		t.Fatalf("%d items forward, %d backward", len(forward), len(backward))
	}
	for i := range forward {
		if forward[i] != backward[len(backward)-1-i] {
			t.Errorf("item %d is %s forward and %s backward", i, forward[i], backward[len(backward)-1-i])
		}
	}
}

// pageConnection is a page of a list walked, aliased l.
type pageConnection struct {
	TotalCount int
	PageInfo   struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
	Edges []struct {
		Cursor string
		Node   struct {
			ID         string
			Researcher struct{ ID string }
		}
	}
}

// pageResponse holds the list walked: below a researcher or a paper, or
// at the root.
type pageResponse struct {
	Researcher, Paper, Category *struct{ L pageConnection }
	L                           *pageConnection
}

// walk pages through a list size items at a time and returns the ids in the
// order met, failing on repeats or a count that disagrees with totalCount.
func walk(t *testing.T, c *client.Client, query string, rid int64, paper string, size int, backward bool) []string {
	t.Helper()
	var ids []string
	seen := map[string]bool{}
	var cursor *string
	firstTotal := 0 // the first page's totalCount, which its own statement counts
	for page := 0; ; page++ {
		opts := []client.Option{client.Var("id", fmt.Sprint(rid)), client.Var("p", paper)}
		if backward {
			opts = append(opts, client.Var("last", size), client.Var("before", cursor))
		} else {
			opts = append(opts, client.Var("n", size), client.Var("after", cursor))
		}
		var resp pageResponse
		c.MustPost(query, &resp, opts...)
		var conn pageConnection
		switch {
		case resp.Researcher != nil:
			conn = resp.Researcher.L
		case resp.Paper != nil:
			conn = resp.Paper.L
		case resp.Category != nil:
			conn = resp.Category.L
		case resp.L != nil:
			conn = *resp.L
		}
		if page == 0 {
			firstTotal = conn.TotalCount
		}
		for _, e := range conn.Edges {
			id := e.Node.ID + e.Node.Researcher.ID
			if seen[id] {
				t.Fatalf("%s met twice", id)
			}
			seen[id] = true
			ids = append(ids, id)
		}
		more := conn.PageInfo.HasNextPage
		if backward {
			more = conn.PageInfo.HasPreviousPage
			cursor = conn.PageInfo.StartCursor
			slicesReverseTail(ids, len(conn.Edges))
		} else {
			cursor = conn.PageInfo.EndCursor
		}
		if !more {
			if len(ids) != conn.TotalCount || len(ids) != firstTotal {
				t.Errorf("walked %d items, totalCount %d on the last page, %d on the first", len(ids), conn.TotalCount, firstTotal)
			}
			return ids
		}
		if page > 100 {
			t.Fatal("no end after 100 pages")
		}
	}
}

// slicesReverseTail reverses the last n items of ids, so that a backward
// walk lists each page from its end.
func slicesReverseTail(ids []string, n int) {
	tail := ids[len(ids)-n:]
	for i, j := 0, len(tail)-1; i < j; i, j = i+1, j-1 {
		tail[i], tail[j] = tail[j], tail[i]
	}
}
