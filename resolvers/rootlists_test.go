package resolvers_test

import (
	"cmp"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph/model"
)

// rootList is a root field with lists below it: its query, run with $n
// (or as many $ids) small (4 unless said) and 20, costs want statements
// both times (a comment per statement at each case), and the large run
// answers more items (counted as occurrences of the JSON key item).
type rootList struct {
	name  string
	query string
	vars  func(t *testing.T, bdb bun.IDB) []client.Option
	small int
	item  string
	want  int
	// onlySQLite of the want statements are sent on SQLite only.
	onlySQLite int
	// list names the variable of strings that vars gives and each run
	// cuts to its first n items ("ids" unless said).
	list string
}

var rootLists = []rootList{
	{
		name: "searchPapers",
		// 1 the page; 2 authorships of its papers, joined with their
		// researchers; 3 researcher_categories of those; 4 categories of
		// the papers.
		query: `query($n: Int) { searchPapers(first: $n) { edges { node { title
			authors { researcher { name fields { count } } } categories { code } } } } }`,
		item: "title", want: 4,
	},
	{
		name: "papers institutions",
		// 1 the papers; 2 their institutions; 3 the other names of those.
		query: `query($ids: [String!]!) { papers(ids: $ids) { title institutions { name aliases } } }`,
		vars: func(t *testing.T, bdb bun.IDB) []client.Option {
			return []client.Option{client.Var("ids", column(t, bdb, `SELECT DISTINCT p.arxiv_id FROM papers AS p
				JOIN affiliations AS af ON af.paper_id = p.id WHERE af.institution_id IS NOT NULL ORDER BY p.arxiv_id`))}
		},
		item: "aliases", want: 3,
	},
	{
		name: "searchResearchers",
		// 1 the page; 2 researcher_categories; 3 a page of papers each;
		// 4 authorships of those papers.
		query: `query($n: Int) { searchResearchers(query: "a", first: $n) { nodes { name
			fields { count } papers(first: 2) { nodes { title authors { name } } } } } }`,
		item: "fields", want: 4,
	},
	{
		name: "searchInstitutions",
		// 1 the page; 2 institution_names; 3 a page of researchers each;
		// 4 the totals of those lists.
		query: `query($n: Int) { searchInstitutions(query: "university", first: $n) { edges { node { name
			aliases researchers(first: 2) { totalCount nodes { name } } } } } }`,
		small: 1, item: "aliases", want: 4,
	},
	{
		name: "suggest",
		// 1 researchers by name; 2 (SQLite only) the number of papers
		// whose title matches; 3 papers by title; 4 institutions by name (none
		// matches); 5 categories; 6 authorships of the suggested papers;
		// 7 a page of papers per researcher; 8 totals of the categories'
		// paper lists.
		query: `query($n: Int) { suggest(prefix: "the", first: $n) { label target {
			... on Researcher { papers(first: 2) { nodes { title } } }
			... on Paper { authors { name } }
			... on Institution { aliases }
			... on Category { papers { totalCount } } } } }`,
		item: "label", want: 8, onlySQLite: 1,
	},
	{
		name: "category",
		// 1 the category by code; 2 a page of its papers; 3 authorships of
		// those papers, joined with their researchers; 4 its top
		// researchers; 5 researcher_categories of those.
		query: `query($n: Int) { category(code: "hep-ph") { papers(first: $n) { nodes { title authors { researcher { name } } } }
			topResearchers(first: $n) { researcher { name fields { count } } } } }`,
		item: "title", want: 5,
	},
	{
		name: "papers",
		// 1 papers by arXiv id; 2 authorships, joined with their
		// researchers; 3 a page of co-authors each; 4 categories of the
		// papers.
		query: `query($ids: [String!]!) { papers(ids: $ids) { title categories { code }
			authors { researcher { coauthors(first: 2) { nodes { researcher { name } } } } } } }`,
		vars: func(t *testing.T, bdb bun.IDB) []client.Option {
			return []client.Option{client.Var("ids", column(t, bdb, "SELECT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id"))}
		},
		item: "title", want: 4,
	},
	{
		name: "nodes",
		// 1 researchers by id; 2 a page of papers each, which counts
		// those lists too; 3 authorships of the papers.
		query: `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Researcher { name
			papers(first: 2) { totalCount nodes { authors { name } } } } } }`,
		vars: func(t *testing.T, bdb bun.IDB) []client.Option {
			ids := column(t, bdb, "SELECT CAST(id AS TEXT) FROM researchers ORDER BY id")
			for i, id := range ids {
				n, _ := strconv.ParseInt(id, 10, 64)
				ids[i] = model.GlobalID(model.KindResearcher, n)
			}
			return []client.Option{client.Var("ids", ids)}
		},
		item: "totalCount", want: 3,
	},
	{
		name: "researcher",
		// 1 the researcher by id; 2 a page of co-authors, which counts
		// them too; 3 a page of papers; 4 the categories facet of the
		// papers; 5 the years facet; 6 authorships of the papers;
		// 7 affiliations of those, with their institutions; 8 same_name
		// profiles.
		query: `query($id: String!, $n: Int) { researcher(id: $id) {
			coauthors(first: $n) { totalCount pageInfo { endCursor } edges { cursor node { researcher { name } } } }
			papers(first: $n) { facets { categories { count } years { year } }
				edges { node { title authors { affiliations institutions { name } } } } }
			sameName { name } } }`,
		vars: func(t *testing.T, bdb bun.IDB) []client.Option {
			return []client.Option{client.Var("id", strconv.FormatInt(scalar[int64](t, bdb,
				"SELECT id FROM researchers ORDER BY paper_count DESC, id LIMIT 1"), 10))}
		},
		item: "title", want: 8,
	},
	{
		name: "institution",
		// 1 the institution by id; 2 a page of its researchers;
		// 3 researcher_categories of those; 4 a page of its papers;
		// 5 authorships of those.
		query: `query($ref: String!, $n: Int) { institution(id: $ref) { researchers(first: $n) { nodes { name fields { count } } }
			papers(first: $n) { nodes { title authors { name } } } } }`,
		vars: func(t *testing.T, bdb bun.IDB) []client.Option {
			return []client.Option{client.Var("ref", scalar[string](t, bdb, "SELECT CAST(MIN(id) AS TEXT) FROM institutions"))}
		},
		item: "name", want: 5,
	},
	{
		name: "network",
		// 1 the researcher; 2–4 the network (its co-authors, the nodes,
		// the edges); 5 the nodes' researchers not yet read;
		// 6 researcher_categories of those; 7 a page of papers each.
		query: `query($id: String!, $n: Int) { researcher(id: $id) { network(depth: 1, maxNodes: $n) { nodes { researcher {
			name fields { count } papers(first: 2) { nodes { title } } } } } } }`,
		vars: func(t *testing.T, bdb bun.IDB) []client.Option {
			hub := scalar[int64](t, bdb, "SELECT researcher_id FROM coauthors GROUP BY researcher_id ORDER BY COUNT(*) DESC, researcher_id LIMIT 1")
			return []client.Option{client.Var("id", strconv.FormatInt(hub, 10))}
		},
		item: "fields", want: 7,
	},
	{
		name: "collaborationPath",
		// A path between co-authors, whose length is fixed: 1 the first
		// layer of co-authors searched; 2 the papers of the steps; 3 the
		// researchers of the steps; 4 the papers by id; 5
		// researcher_categories of the researchers; 6 authorships of the
		// papers.
		query: `query($from: String!, $to: String!) { collaborationPath(from: $from, to: $to) { steps {
			researcher { name fields { count } } papers { title authors { name } } } } }`,
		vars: func(t *testing.T, bdb bun.IDB) []client.Option {
			a := scalar[int64](t, bdb, "SELECT researcher_id FROM coauthors ORDER BY researcher_id LIMIT 1")
			b := scalar[int64](t, bdb, "SELECT coauthor_id FROM coauthors WHERE researcher_id = ? ORDER BY coauthor_id LIMIT 1", a)
			return []client.Option{client.Var("from", strconv.FormatInt(a, 10)), client.Var("to", strconv.FormatInt(b, 10))}
		},
		item: "title", want: 6,
	},
	{
		name: "paperCategoriesPapers",
		// Categories below papers lead on: 1 the page; 2 categories of
		// its papers; 3 a page of papers per category, which counts
		// those lists too.
		query: `query($n: Int) { searchPapers(first: $n) { nodes { categories { code
			papers(first: 1) { totalCount nodes { title } } } } } }`,
		item: "code", want: 3,
	},
	{
		name: "primaryCategoryTopResearchers",
		// 1 the page; 2 categories of its papers; 3 the top researchers
		// of their primary categories, with their profiles.
		query: `query($n: Int) { searchPapers(first: $n) { nodes { primaryCategory { code
			topResearchers(first: 2) { paperCount researcher { name } } } } } }`,
		item: "code", want: 3,
	},
	{
		name: "researcherFieldsCategoryPapers",
		// ResearcherField.category is a hop: 1 the page; 2
		// researcher_categories; 3 a page of papers per category.
		query: `query($n: Int) { searchResearchers(query: "a", first: $n) { nodes { fields { category { code
			papers(first: 1) { nodes { title } } } } } } }`,
		item: "code", want: 3,
	},
	{
		name: "facetCategoriesTopResearchers",
		// Facets lead on, CategoryCount.category is a hop: 1 the page;
		// 2 the categories facet of each researcher's papers (no page of
		// them is asked for); 3 the top researcher of each category.
		query: `query($n: Int) { searchResearchers(query: "a", first: $n) { nodes { papers(first: 1) { facets { categories {
			category { code topResearchers(first: 1) { paperCount } } } } } } } }`,
		item: "code", want: 3,
	},
	{
		name: "searchFacetsOnly",
		// searchPapers asked only for its facets walks below their
		// categories ($cats: 1 code, then 20): 1 the facets of the
		// search; 2 the totals of the categories' paper lists.
		query: `query($cats: [String!]) { searchPapers(filter: {categories: $cats}) { facets { categories {
			category { code papers(first: 1) { totalCount } } } } } }`,
		vars: func(t *testing.T, bdb bun.IDB) []client.Option {
			return []client.Option{client.Var("cats", column(t, bdb,
				"SELECT category FROM paper_categories GROUP BY category ORDER BY COUNT(*) DESC, category"))}
		},
		list: "cats", small: 1, item: "code", want: 2,
	},
	{
		name: "papersCategoriesPapersAuthors",
		// Two levels below categories: 1 papers by arXiv id;
		// 2 categories of those; 3 a page of papers per category;
		// 4 authorships of those papers.
		query: `query($ids: [String!]!) { papers(ids: $ids) { categories { code
			papers(first: 2) { nodes { authors { name } } } } } }`,
		vars: func(t *testing.T, bdb bun.IDB) []client.Option {
			return []client.Option{client.Var("ids", column(t, bdb, "SELECT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id"))}
		},
		item: "code", want: 4,
	},
}

// column reads a column of strings with a direct SQL statement.
func column(t *testing.T, bdb bun.IDB, query string) []string {
	t.Helper()
	var out []string
	if err := bdb.NewRaw(query).Scan(t.Context(), &out); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

// TestRootListsDepthNotWidth checks that every root field with lists
// below it costs as many statements for a small page (or a few ids) as
// for a large one: the look-ahead reads each level with one statement
// per field.
func TestRootListsDepthNotWidth(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		affiliateAuthors(t, bdb, busiestPaper(t, bdb))
		log := &dbtest.Log{}
		bdb.AddQueryHook(log)
		c := newClient(bdb)
		for _, tt := range rootLists {
			var opts []client.Option
			if tt.vars != nil {
				opts = tt.vars(t, bdb)
			}
			items := map[int]int{}
			small := cmp.Or(tt.small, 4)
			for _, n := range []int{small, 20} {
				runOpts := append(opts, client.Var("n", n))
				name := cmp.Or(tt.list, "ids")
				if xs := listVar(opts, name); xs != nil {
					runOpts = append(opts[:0:0], client.Var(name, xs[:min(n, len(xs))]))
				}
				log.Take()
				data, errs := rawPost(t, c, tt.query, runOpts...)
				sqls := log.Take()
				if len(errs) != 0 {
					t.Fatalf("%s, n=%d: %+v", tt.name, n, errs)
				}
				items[n] = strings.Count(data, `"`+tt.item+`":`)
				want := tt.want
				if db.IsPostgres(bdb) {
					want -= tt.onlySQLite
				}
				if len(sqls) != want {
					t.Errorf("%s, n=%d: %d statements, want %d:\n%s", tt.name, n, len(sqls), want, strings.Join(sqls, "\n"))
				}
			}
			if items[20] <= items[small] && tt.name != "collaborationPath" {
				t.Errorf("%s: %d items for n=20, %d for n=%d: the case does not test width", tt.name, items[20], items[small], small)
			}
		}
	})
}

// listVar is the variable name among opts, a list of strings, nil if
// none.
func listVar(opts []client.Option, name string) []string {
	for _, o := range opts {
		r := &client.Request{Variables: map[string]any{}}
		o(r)
		if xs, ok := r.Variables[name].([]string); ok {
			return xs
		}
	}
	return nil
}
