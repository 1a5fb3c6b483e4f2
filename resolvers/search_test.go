package resolvers_test

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph/model"
)

type searchResp struct {
	SearchPapers struct {
		TotalCount int
		PageInfo   struct {
			HasNextPage bool
			EndCursor   *string
		}
		Nodes []struct{ ArxivID, Title string }
	}
}

func searchIDs(t *testing.T, c *client.Client, query string, opts ...client.Option) ([]string, searchResp) {
	t.Helper()
	var resp searchResp
	c.MustPost(`query($q: String, $f: PaperFilter, $after: String, $first: Int) { searchPapers(query: $q, filter: $f, first: $first, after: $after) {
		totalCount pageInfo { hasNextPage endCursor } nodes { arxivId title } } }`, &resp, append([]client.Option{client.Var("q", query)}, opts...)...)
	ids := make([]string, len(resp.SearchPapers.Nodes))
	for i, n := range resp.SearchPapers.Nodes {
		ids[i] = n.ArxivID
	}
	return ids, resp
}

func TestSearchPapers(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		// A paper added after the index was built reaches it through the
		// triggers (SQLite) or the expression index (PostgreSQL).
		accented := &db.Paper{ArxivID: "0704.9999", Title: "Über Balázs' theorem of Łódź", Abstract: "Sur l'énergie"}
		if _, err := bdb.NewInsert().Model(accented).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		c := newClient(bdb)
		tests := []struct {
			query    string
			first    string // the best match, "" for no match
			excluded string // a paper that must not match
		}{
			{"prompt diphoton production", "0704.0001", ""},
			{`"diphoton production" Tevatron`, "0704.0001", ""},
			{`"production diphoton"`, "", "0704.0001"},
			{"diphot*", "0704.0001", ""},
			{"DIPHOTON", "0704.0001", ""},
			{"uber balazs", "0704.9999", ""},
			{"uber energie", "0704.9999", ""},
			{"Łódź ÉNERGIE", "0704.9999", ""},
			{"lodz", "0704.9999", ""},
			{"balázs", "0704.9999", ""},
			{"nonexistentwordxyz", "", ""},
		}
		for _, tt := range tests {
			ids, _ := searchIDs(t, c, tt.query)
			switch {
			case tt.first == "" && tt.excluded == "" && len(ids) != 0:
				t.Errorf("%q: got %v, want nothing", tt.query, ids)
			case tt.first != "" && (len(ids) == 0 || ids[0] != tt.first):
				t.Errorf("%q: got %v, want %s first", tt.query, ids, tt.first)
			case tt.excluded != "" && slices.Contains(ids, tt.excluded):
				t.Errorf("%q: got %v, want no %s", tt.query, ids, tt.excluded)
			}
		}
	})
}

func TestSearchPagesByRelevance(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		all, resp := searchIDs(t, c, "field", client.Var("first", 100))
		if len(all) < 5 || resp.SearchPapers.TotalCount != len(all) {
			t.Fatalf("got %d papers of %d, want at least 5, all", len(all), resp.SearchPapers.TotalCount)
		}
		var paged []string
		var after *string
		for range len(all) {
			ids, resp := searchIDs(t, c, "field", client.Var("first", 2), client.Var("after", after))
			paged = append(paged, ids...)
			if !resp.SearchPapers.PageInfo.HasNextPage {
				break
			}
			after = resp.SearchPapers.PageInfo.EndCursor
		}
		if !slices.Equal(paged, all) {
			t.Errorf("pages of 2: got %v, want %v", paged, all)
		}
	})
}

// paperFacts is every arXiv paper's publication year and categories, read
// with direct SQL.
type paperFacts struct {
	year       map[int64]int // 0 for no date
	categories map[int64][]string
}

func readFacts(t *testing.T, bdb bun.IDB) paperFacts {
	t.Helper()
	ctx := context.Background()
	f := paperFacts{year: map[int64]int{}, categories: map[int64][]string{}}
	var papers []db.Paper
	if err := bdb.NewSelect().Model(&papers).Column("id", "published").Where("arxiv_id IS NOT NULL").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range papers {
		if !p.Published.IsZero() {
			f.year[p.ID] = p.Published.UTC().Year()
		} else {
			f.year[p.ID] = 0
		}
	}
	var pcs []db.PaperCategory
	if err := bdb.NewSelect().Model(&pcs).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, pc := range pcs {
		if !slices.Contains(f.categories[pc.PaperID], pc.Category) {
			f.categories[pc.PaperID] = append(f.categories[pc.PaperID], pc.Category)
		}
	}
	return f
}

// counts counts ids per year and per category.
func (f paperFacts) counts(ids []int64) (years map[int]int, cats map[string]int) {
	years, cats = map[int]int{}, map[string]int{}
	for _, id := range ids {
		years[f.year[id]]++
		for _, c := range f.categories[id] {
			cats[c]++
		}
	}
	return years, cats
}

type facetsResp struct {
	TotalCount int
	Facets     facetsFields
}

type facetsFields struct {
	Categories []struct {
		Category struct{ Code string }
		Count    int
	}
	Years []struct {
		Year  *int
		Count int
	}
}

func checkFacets(t *testing.T, name string, got facetsResp, f paperFacts, ids []int64) {
	t.Helper()
	years, cats := f.counts(ids)
	if got.TotalCount != len(ids) {
		t.Errorf("%s: totalCount got %d, want %d", name, got.TotalCount, len(ids))
	}
	sum := 0
	for _, y := range got.Facets.Years {
		sum += y.Count
		year := 0
		if y.Year != nil {
			year = *y.Year
		}
		if y.Count != years[year] {
			t.Errorf("%s: year %d got %d, want %d", name, year, y.Count, years[year])
		}
	}
	if sum != got.TotalCount || len(got.Facets.Years) != len(years) {
		t.Errorf("%s: years add up to %d in %d years, want %d in %d", name, sum, len(got.Facets.Years), got.TotalCount, len(years))
	}
	if len(got.Facets.Categories) != len(cats) {
		t.Errorf("%s: got %d categories, want %d", name, len(got.Facets.Categories), len(cats))
	}
	for _, c := range got.Facets.Categories {
		if c.Count != cats[c.Category.Code] {
			t.Errorf("%s: category %s got %d, want %d", name, c.Category.Code, c.Count, cats[c.Category.Code])
		}
	}
}

const facetFields = `totalCount facets { categories { category { code } count } years { year count } }`

func TestSearchFiltersAndFacets(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		f := readFacts(t, bdb)
		from, to := time.Date(1993, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1995, 1, 1, 0, 0, 0, 0, time.UTC)
		researcher := scalar[int64](t, bdb, "SELECT id FROM researchers ORDER BY paper_count DESC, id LIMIT 1")
		withDOI := map[int64]bool{}
		var dois []int64
		if err := bdb.NewSelect().Model((*db.Paper)(nil)).Column("id").Where("doi IS NOT NULL").Scan(context.Background(), &dois); err != nil {
			t.Fatal(err)
		}
		for _, id := range dois {
			withDOI[id] = true
		}
		var authored []int64
		if err := bdb.NewSelect().Model((*db.Authorship)(nil)).Column("paper_id").Where("researcher_id = ?", researcher).Scan(context.Background(), &authored); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			filter map[string]any
			keep   func(id int64) bool
		}{
			{"all", nil, func(int64) bool { return true }},
			{"hep-th or gr-qc", map[string]any{"categories": []string{"hep-th", "gr-qc"}}, func(id int64) bool {
				return slices.Contains(f.categories[id], "hep-th") || slices.Contains(f.categories[id], "gr-qc")
			}},
			{"1993-1994", map[string]any{"publishedFrom": from, "publishedTo": to}, func(id int64) bool {
				return f.year[id] == 1993 || f.year[id] == 1994
			}},
			{"researcher", map[string]any{"researcher": itoa(researcher)}, func(id int64) bool { return slices.Contains(authored, id) }},
			{"unknown researcher", map[string]any{"researcher": "0000-0002-1825-0097"}, func(int64) bool { return false }},
			{"hasDoi", map[string]any{"hasDoi": true}, func(id int64) bool { return withDOI[id] }},
			{"no DOI", map[string]any{"hasDoi": false}, func(id int64) bool { return !withDOI[id] }},
		}
		for _, tt := range tests {
			var want []int64
			for id := range f.year {
				if tt.keep(id) {
					want = append(want, id)
				}
			}
			var resp struct{ SearchPapers facetsResp }
			c.MustPost(`query($f: PaperFilter) { searchPapers(filter: $f) { `+facetFields+` } }`, &resp, client.Var("f", tt.filter))
			checkFacets(t, tt.name, resp.SearchPapers, f, want)
		}

		var rp struct{ Researcher struct{ Papers facetsResp } }
		c.MustPost(`query($id: String!) { researcher(id: $id) { papers { `+facetFields+` } } }`, &rp, client.Var("id", itoa(researcher)))
		checkFacets(t, "researcher papers", rp.Researcher.Papers, f, authored)
	})
}

func TestSearchBadInput(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		tests := []struct{ query, message string }{
			{`{ searchPapers(query: "\"unbalanced") { totalCount } }`, "query: malformed search query: unbalanced quote"},
			{`{ searchPapers(query: "a * b") { totalCount } }`, "query: malformed search query"},
			{`{ searchPapers(query: "  ") { totalCount } }`, "query: malformed search query: no word"},
			{`{ searchPapers(sort: RELEVANCE) { totalCount } }`, "sort: RELEVANCE needs a query"},
			{`{ searchPapers(filter: {researcher: "nobody"}) { totalCount } }`, "filter.researcher: not a researcher id"},
			{`{ searchPapers(query: "x", after: "junk") { nodes { title } } }`, "after: not a cursor of this list"},
			{`{ searchResearchers(query: "--") { nodes { name } } }`, "query: no letter or digit"},
			{`{ suggest(prefix: "x", first: 500) { label } }`, "first: must be between 0 and 50"},
		}
		for _, tt := range tests {
			_, errs := rawPost(t, c, tt.query)
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Message, tt.message) || errs[0].Extensions.Code != "BAD_USER_INPUT" {
				t.Errorf("%s: got %+v, want one BAD_USER_INPUT %q", tt.query, errs, tt.message)
			}
		}
	})
}

func TestSearchResearchersSameName(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		existing := scalar[int64](t, bdb, "SELECT id FROM researchers WHERE name_key = 'c balazs'")
		twin := &db.Researcher{Name: "C. Balazs", NameKey: "c balazs", FamilyKey: "balazs", Slug: "c-balazs"}
		if _, err := bdb.NewInsert().Model(twin).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		c := newClient(bdb)
		for _, query := range []string{"Balazs", "balázs", "C. Bal", "c balazs"} {
			var resp struct {
				SearchResearchers struct {
					Nodes []struct {
						ResearcherID int64
						Name         string
						PaperCount   int
					}
				}
			}
			c.MustPost(`query($q: String!) { searchResearchers(query: $q) { nodes { researcherId name paperCount } } }`, &resp, client.Var("q", query))
			var got []int64
			for _, n := range resp.SearchResearchers.Nodes {
				got = append(got, n.ResearcherID)
			}
			if want := []int64{existing, twin.ID}; !slices.Equal(got, want) {
				t.Errorf("%q: got %v (%+v), want %v", query, got, resp.SearchResearchers.Nodes, want)
			}
		}
	})
}

func TestSuggest(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		inst := scalar[string](t, bdb, "SELECT name FROM institutions ORDER BY id LIMIT 1")
		word := strings.Fields(inst)[0]
		tests := []struct {
			prefix, types string
			want          string // a label among the suggestions
		}{
			{"diphot", "[PAPER]", "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"},
			{"Bala", "[RESEARCHER]", "C. Balázs"},
			{"hep-t", "[CATEGORY]", "hep-th (High Energy Physics - Theory)"},
			{"theory", "[CATEGORY]", "hep-th (High Energy Physics - Theory)"},
			{word[:len(word)-1], "[INSTITUTION]", inst},
			{"Bala", "null", "C. Balázs"},
		}
		for _, tt := range tests {
			var resp struct {
				Suggest []struct {
					Type, Label string
					Target      struct {
						Typename string `json:"__typename"`
					}
				}
			}
			c.MustPost(`query($p: String!) { suggest(prefix: $p, types: `+tt.types+`) { type label target { __typename } } }`, &resp, client.Var("p", tt.prefix))
			var labels []string
			for _, s := range resp.Suggest {
				labels = append(labels, s.Label)
			}
			if !slices.Contains(labels, tt.want) {
				t.Errorf("suggest(%q, %s): got %q, want %q among them", tt.prefix, tt.types, labels, tt.want)
			}
		}
	})
}

func TestCategoryPage(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		f := readFacts(t, bdb)
		var ids []int64
		for id, cats := range f.categories {
			if slices.Contains(cats, "hep-th") {
				ids = append(ids, id)
			}
		}
		var resp struct {
			Category struct {
				TopResearchers []struct {
					Researcher struct{ ResearcherID int64 }
					PaperCount int
				}
				Papers facetsResp
			}
		}
		c.MustPost(`{ category(code: "hep-th") { topResearchers(first: 3) { researcher { researcherId } paperCount } papers { `+facetFields+` } } }`, &resp)
		var want []struct {
			ResearcherID int64 `bun:"researcher_id"`
			PaperCount   int   `bun:"paper_count"`
		}
		if err := bdb.NewRaw(`SELECT a.researcher_id, COUNT(DISTINCT a.paper_id) AS paper_count FROM authorships a
			JOIN paper_categories pc ON pc.paper_id = a.paper_id AND pc.category = 'hep-th'
			WHERE a.researcher_id IS NOT NULL GROUP BY a.researcher_id ORDER BY paper_count DESC, a.researcher_id LIMIT 3`).Scan(context.Background(), &want); err != nil {
			t.Fatal(err)
		}
		if len(resp.Category.TopResearchers) != len(want) {
			t.Fatalf("got %d top researchers, want %d", len(resp.Category.TopResearchers), len(want))
		}
		for i, w := range want {
			if g := resp.Category.TopResearchers[i]; g.Researcher.ResearcherID != w.ResearcherID || g.PaperCount != w.PaperCount {
				t.Errorf("top researcher %d: got %+v, want %+v", i, g, w)
			}
		}
		checkFacets(t, "hep-th papers", resp.Category.Papers, f, ids)
	})
}

func TestSuggestPapersByTitle(t *testing.T) {
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		var papers []struct {
			ID            int64
			Title         string
			CitationCount int
		}
		if err := bdb.NewRaw("SELECT id, title, citation_count FROM papers WHERE arxiv_id IS NOT NULL").Scan(context.Background(), &papers); err != nil {
			t.Fatal(err)
		}
		c := newClient(bdb)
		titleWords := func(title string) []string {
			return strings.FieldsFunc(strings.ToLower(title), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		}
		// A prefix only a few little-cited titles have: none of them among
		// the 1,000 most cited, which PostgreSQL walks before it reads the
		// title index.
		slices.SortFunc(papers, func(a, b struct {
			ID            int64
			Title         string
			CitationCount int
		}) int {
			return cmp.Or(cmp.Compare(b.CitationCount, a.CitationCount), cmp.Compare(b.ID, a.ID))
		})
		if len(papers) < 2000 {
			t.Fatalf("%d papers; the rare prefix needs more than the 1,000 most cited", len(papers))
		}
		byPrefix := map[string][]int{} // 5-letter prefix: ranks of the papers whose titles have it
		for i, p := range papers {
			seen := map[string]bool{}
			for _, w := range titleWords(p.Title) {
				if len(w) >= 6 && !seen[w[:5]] && strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 {
					seen[w[:5]] = true
					byPrefix[w[:5]] = append(byPrefix[w[:5]], i)
				}
			}
		}
		var rare string
		for _, k := range slices.Sorted(maps.Keys(byPrefix)) {
			if ranks := byPrefix[k]; len(ranks) >= 3 && len(ranks) <= 20 && ranks[0] >= 1000 {
				rare = k
				break
			}
		}
		if rare == "" {
			t.Fatal("no 5-letter prefix of 3 to 20 titles outside the 1,000 most cited")
		}
		for _, tt := range []struct {
			prefix string
			words  []string // whole words every title must have
			last   string   // the prefix of a word it must have too
		}{
			{"the", nil, "the"},
			{"quantum gra", []string{"quantum"}, "gra"},
			{"Black hole", []string{"black"}, "hole"},
			{rare, nil, rare},
		} {
			matches := papers[:0:0]
			for _, p := range papers {
				ws := titleWords(p.Title)
				ok := slices.ContainsFunc(ws, func(w string) bool { return strings.HasPrefix(w, tt.last) })
				for _, w := range tt.words {
					ok = ok && slices.Contains(ws, w)
				}
				if ok {
					matches = append(matches, p)
				}
			}
			// matches keep papers' order: most cited first.
			var want []string
			for _, p := range matches[:min(len(matches), 10)] {
				want = append(want, model.GlobalID(model.KindPaper, p.ID))
			}
			var resp struct {
				Suggest []struct{ Target struct{ ID string } }
			}
			c.MustPost(`query($p: String!) { suggest(prefix: $p, types: [PAPER]) { target { ... on Paper { id } } } }`, &resp, client.Var("p", tt.prefix))
			var got []string
			for _, s := range resp.Suggest {
				got = append(got, s.Target.ID)
			}
			if len(want) < 3 || !slices.Equal(got, want) {
				t.Errorf("suggest(%q): got %v, want %v (the most cited of %d titles)", tt.prefix, got, want, len(matches))
			}
		}
	})
}

// facetStatements is the number of SQL statements of facetQuery:
//
//  1. the page of the search
//  2. the total of the search
//  3. the category and year facets of the search, together
//  4. the authorships of the papers of the search's page
//  5. the researcher, by id
//  6. the page of their papers
//  7. the category facets of their papers, primed from the look-ahead
//  8. the year facets of their papers, primed from the look-ahead
//  9. the authorships of the papers of that page
const facetStatements = 9

// facetQuery asks for the newest and the oldest papers of a researcher,
// with facets, as a search and as their list.
const facetQuery = `query($id: String!) {
	searchPapers(filter: {researcher: $id}, first: 5) { totalCount ` + facetFields + ` nodes { arxivId authors { name } } }
	researcher(id: $id) { papers(first: 5, sort: OLDEST) { nodes { arxivId authors { name } } facets { categories { category { code } count } years { year count } } } }
}`

func TestFacetStatements(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		id := scalar[int64](t, bdb, "SELECT id FROM researchers ORDER BY paper_count DESC, id LIMIT 1")
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		var resp struct {
			SearchPapers struct {
				TotalCount int
				Nodes      []struct{ ArxivID string }
			}
			Researcher struct {
				Papers struct {
					Nodes  []struct{ ArxivID string }
					Facets struct{ Years []struct{ Count int } }
				}
			}
		}
		data, errs := rawPost(t, newClient(bdb), facetQuery, client.Var("id", strconv.FormatInt(id, 10)))
		if err := json.Unmarshal([]byte(data), &resp); err != nil || len(errs) != 0 {
			t.Fatalf("got %s %+v", data, errs)
		}
		newest, oldest := resp.SearchPapers.Nodes, resp.Researcher.Papers.Nodes
		if resp.SearchPapers.TotalCount <= 10 || len(newest) != 5 || len(oldest) != 5 || len(resp.Researcher.Papers.Facets.Years) == 0 {
			t.Fatalf("got %s: want two pages of 5 of more than 10 papers, with facets", data)
		}
		if got := counter.Count(); got != facetStatements {
			t.Errorf("got %d statements, want %d", got, facetStatements)
		}
	})
}

// TestSearchStatements pins the statements of a search with a query
// asking for its count, both facets and a page: the candidates once
// (db.SearchCandidates: the most cited matches, with dates and scores),
// then the categories facet over their ids, then the page's papers (by id
// in relevance order, which is sorted from the candidates; by the
// citation order's own statement otherwise). A query matching nothing
// needs no statement past the candidates; a relevance order relaxing its
// query reads the relaxed candidates in one more. The candidates are one
// statement on both databases, read band by band of citations
// (db.SearchCandidates; TestCitedBandsRankAsTheStatement).
func TestSearchStatements(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		facts := readFacts(t, bdb)
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		tests := []struct {
			query, sort string
			want        int64
		}{
			{"field", "RELEVANCE", 3},
			{"field", "MOST_CITED", 3},
			{"xyzzyplugh", "RELEVANCE", 1},
			{"xyzzyplugh", "NEWEST", 2},
			// No paper holds both words: relevance relaxes the query
			// (db.RelaxBelow), a second statement for the candidates,
			// which then serve the count, the facets and the page; the
			// citation order keeps it strict, matching nothing.
			{"field xyzzyplugh", "RELEVANCE", 4},
			{"field xyzzyplugh", "MOST_CITED", 2},
		}
		for _, tt := range tests {
			var resp struct {
				SearchPapers struct {
					TotalCount        int
					TotalCountIsExact bool
					Facets            facetsFields
					Nodes             []struct{ ArxivID string }
				}
			}
			before := counter.Count()
			c.MustPost(`query($q: String!, $s: PaperSearchSort) { searchPapers(query: $q, sort: $s, first: 3) {
				totalCount totalCountIsExact facets { categories { category { code } count } years { year count } } nodes { arxivId } } }`,
				&resp, client.Var("q", tt.query), client.Var("s", tt.sort))
			if got := counter.Count() - before; got != tt.want {
				t.Errorf("%s by %s: %d statements, want %d", tt.query, tt.sort, got, tt.want)
			}
			got := resp.SearchPapers
			if matched := tt.query == "field" || tt.sort == "RELEVANCE" && tt.query == "field xyzzyplugh"; matched != (got.TotalCount > 3 && len(got.Nodes) == 3 && len(got.Facets.Years) > 0) || !got.TotalCountIsExact {
				t.Errorf("%s by %s: got %+v", tt.query, tt.sort, got)
			}
			// The facets counted from the candidates are those of every
			// match (fewer than db.RelevanceCandidates here), relaxed in
			// the relevance order as db.KeywordRanked ranks them.
			sq, err := db.ParseSearchQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			if tt.sort == "RELEVANCE" {
				ids, err = db.KeywordRanked(context.Background(), bdb, db.PaperSearch{Query: sq}, db.RelevanceCandidates)
			} else {
				var all db.Page[*db.Paper]
				all, err = db.SearchPapers(context.Background(), bdb, db.PaperSearch{Query: sq}, db.PageArgs{First: db.RelevanceCandidates, Order: db.MostCited})
				for _, p := range all.Items {
					ids = append(ids, p.ID)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			checkFacets(t, tt.query+" by "+tt.sort, facetsResp{got.TotalCount, got.Facets}, facts, ids)
		}
	})
}
