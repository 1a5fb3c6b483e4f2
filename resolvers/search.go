package resolvers

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/names"
)

var searchOrders = map[model.PaperSearchSort]db.PaperOrder{
	model.PaperSearchSortRelevance: db.Relevance,
	model.PaperSearchSortNewest:    db.Newest,
	model.PaperSearchSortOldest:    db.Oldest,
	model.PaperSearchSortMostCited: db.MostCited,
}

// paperSearch checks searchPapers' query and filter and resolves the
// researcher and institution they name (a statement each when named by an
// external id or a name).
func (r *Resolver) paperSearch(ctx context.Context, query *string, filter *model.PaperFilter) (db.PaperSearch, error) {
	var s db.PaperSearch
	if query != nil {
		if err := checkText("query", *query, queryText); err != nil {
			return s, err
		}
		q, err := db.ParseSearchQuery(*query)
		if err != nil {
			return s, badInput("query", "%v", err)
		}
		s.Query = q
	}
	if filter == nil {
		return s, nil
	}
	if len(filter.Categories) > MaxCategories {
		return s, badInput("filter.categories", "at most %d codes, got %d", MaxCategories, len(filter.Categories))
	}
	for _, code := range filter.Categories {
		if err := checkText("filter.categories", code, codeText); err != nil {
			return s, err
		}
	}
	s.Categories = filter.Categories
	if filter.PublishedFrom != nil {
		s.From = *filter.PublishedFrom
	}
	if filter.PublishedTo != nil {
		s.To = *filter.PublishedTo
	}
	s.HasDOI = filter.HasDoi
	if filter.Researcher != nil {
		id, err := r.researcherID(ctx, "filter.researcher", *filter.Researcher)
		if err != nil {
			return s, err
		}
		s.ResearcherID = id
	}
	if filter.Institution != nil {
		id, err := r.institutionID(ctx, "filter.institution", *filter.Institution)
		if err != nil {
			return s, err
		}
		s.InstitutionID = id
	}
	return s, nil
}

// SearchArgs checks searchPapers' query, filter and sort, resolves the
// researcher and institution the filter names (a statement each when
// named by an external id or a name), and returns the search and its
// order. The export of search results shares it, so that both read their
// arguments alike. A malformed argument is an error wrapping an
// *InputError.
func SearchArgs(ctx context.Context, idb bun.IDB, query *string, filter *model.PaperFilter, sort *model.PaperSearchSort) (db.PaperSearch, db.PaperOrder, error) {
	s, err := (&Resolver{db: idb}).paperSearch(ctx, query, filter)
	if err != nil {
		return s, 0, err
	}
	switch {
	case sort != nil && *sort == model.PaperSearchSortRelevance && s.Query.IsZero():
		return s, 0, badInput("sort", "RELEVANCE needs a query")
	case sort != nil:
		return s, searchOrders[*sort], nil
	case !s.Query.IsZero():
		return s, db.Relevance, nil
	}
	return s, db.Newest, nil
}

func (r *Resolver) searchPapers(ctx context.Context, query *string, filter *model.PaperFilter, sort *model.PaperSearchSort, first *int, after *string, last *int, before *string, modeArg *model.SearchMode) (*model.PaperConnection, error) {
	s, order, err := SearchArgs(ctx, r.db, query, filter, sort)
	if err != nil {
		return nil, err
	}
	mode, text := ModeOf(modeArg), ""
	if query != nil {
		text = *query
	}
	if order != db.Relevance {
		// SEMANTIC's nearest papers, listed by the filters alone: no
		// statement here.
		if s, err = SemanticSearch(ctx, r.db, s, text, order, mode); err != nil {
			return nil, err
		}
	}
	args, err := pageArgs(paperCursors, first, last, after, before, nil, order)
	if err != nil {
		return nil, err
	}
	if order == db.Relevance {
		// The candidates need scores only as far as the page reads them.
		s = s.ForPage(args)
	}
	withCandidates := r.candidatesOnce(ctx, s, text, order, mode)
	conn := r.searchTotals(ctx, withCandidates)
	if err := lookAheadFacets(ctx, conn.FacetCounts.CategoryCounts); err != nil {
		return nil, err
	}
	if !asksPage(ctx, "PaperConnection") {
		return conn, nil
	}
	page := s
	if order == db.Relevance {
		if page, err = withCandidates(); err != nil {
			return nil, err
		}
	}
	pg, err := db.SearchPapers(ctx, r.db, page, args)
	if err != nil {
		return nil, err
	}
	conn.Nodes, conn.Edges, conn.PageInfo = fillPage(pg, paperCursor(order), wrapPaper, paperEdge)
	return conn, lookAheadPage(ctx, "PaperConnection", "Paper", "PaperEdge", pg.Items)
}

// searchTotals is a search's connection before its page: totalCount and
// totalCountIsExact share one count, and both facets share one statement,
// each read when first asked for.
func (r *Resolver) searchTotals(ctx context.Context, withCandidates func() (db.PaperSearch, error)) *model.PaperConnection {
	count := sync.OnceValues(func() (searchCount, error) {
		s, err := withCandidates()
		if err != nil {
			return searchCount{}, err
		}
		n, exact, err := db.SearchCount(ctx, r.db, s)
		return searchCount{n, exact}, err
	})
	facets := sync.OnceValues(func() (searchFacets, error) {
		s, err := withCandidates()
		if err != nil {
			return searchFacets{}, err
		}
		cats, years, err := db.SearchFacets(ctx, r.db, s)
		return searchFacets{cats, years}, err
	})
	return &model.PaperConnection{
		PageInfo: &model.PageInfo{},
		Total: func(context.Context) (int, error) {
			c, err := count()
			return c.n, err
		},
		Exact: func(context.Context) (bool, error) {
			c, err := count()
			return c.exact, err
		},
		FacetCounts: &model.PaperFacets{
			CategoryCounts: func(context.Context) ([]db.CategoryCount, error) {
				f, err := facets()
				return f.categories, err
			},
			YearCounts: func(context.Context) ([]db.YearCount, error) {
				f, err := facets()
				return f.years, err
			},
		},
	}
}

// candidatesOnce reads a query's candidates (its most cited matches,
// db.SearchCandidates, or those mode ranks, SemanticSearch) once, when the
// first of a relevance page, the count and the facets needs them, and
// serves all three.
func (r *Resolver) candidatesOnce(ctx context.Context, s db.PaperSearch, text string, order db.PaperOrder, mode model.SearchMode) func() (db.PaperSearch, error) {
	return sync.OnceValues(func() (db.PaperSearch, error) {
		if s.Query.IsZero() {
			return s, nil
		}
		if order == db.Relevance && mode != model.SearchModeKeyword {
			ranked, err := SemanticSearch(ctx, r.db, s, text, order, mode)
			if err != nil || ranked.HasCandidates() {
				return ranked, err
			}
		}
		c, err := db.SearchCandidates(ctx, r.db, s, order == db.Relevance)
		return s.WithCandidates(c), err
	})
}

// searchCount is a search's count of its matches, up to a cap (see
// db.SearchCount).
type searchCount struct {
	n     int
	exact bool
}

// searchFacets are a search's facets, read together (see db.SearchFacets).
type searchFacets struct {
	categories []db.CategoryCount
	years      []db.YearCount
}

// nameListArgs checks the arguments of a list searched by name: the
// folded words of query and the page, its cursors of the list tag names.
func nameListArgs(query string, first, last *int, after, before *string, tag string) (key string, p db.NamePage, err error) {
	if err := checkText("query", query, queryText); err != nil {
		return "", p, err
	}
	key = strings.Join(names.Words(query), " ")
	if key == "" {
		return "", p, badInput("query", "no letter or digit in %s", QuoteInput(query))
	}
	// pageArgs checks the sizes and says which way the page reads.
	a, err := pageArgs(paperCursors, first, last, nil, nil, nil, db.Newest)
	if err != nil {
		return "", p, err
	}
	p.N, p.Last = a.First, last != nil
	if p.Last {
		p.N = a.Last
	}
	if after != nil {
		if p.After, err = decodeNameCursor("after", *after, tag); err != nil {
			return "", p, err
		}
	}
	if before != nil {
		p.Before, err = decodeNameCursor("before", *before, tag)
	}
	return key, p, err
}

// namePage cuts the rows of a name search, one more than the page as
// read, into a page in the list's order.
func namePage[T any](rows []*T, p db.NamePage) db.Page[*T] {
	more := len(rows) > p.N
	rows = rows[:min(len(rows), p.N)]
	if p.Last {
		slices.Reverse(rows)
		return db.Page[*T]{Items: rows, HasPrev: more, HasNext: p.Before.Set}
	}
	return db.Page[*T]{Items: rows, HasNext: more, HasPrev: p.After.Set}
}

const (
	researcherSearchTag  = "researchers-by-name"
	institutionSearchTag = "institutions-by-name"
)

func (r *Resolver) searchResearchers(ctx context.Context, query string, first *int, after *string, last *int, before *string) (*model.ResearcherConnection, error) {
	key, p, err := nameListArgs(query, first, last, after, before, researcherSearchTag)
	if err != nil {
		return nil, err
	}
	conn := &model.ResearcherConnection{PageInfo: &model.PageInfo{},
		Total: func(ctx context.Context) (int, error) { return db.CountResearchers(ctx, r.db, key) }}
	if !asksPage(ctx, "ResearcherConnection") {
		return conn, nil
	}
	rows, err := db.SearchResearchers(ctx, r.db, key, p)
	if err != nil {
		return nil, err
	}
	pg := namePage(rows, p)
	conn.Nodes, conn.Edges, conn.PageInfo = fillPage(pg,
		func(x *db.Researcher) string {
			return encodeNameCursor(researcherSearchTag, db.NameCursor{Key: x.NameKey, Count: x.PaperCount, ID: x.ID})
		}, wrapResearcher,
		func(_ *db.Researcher, n *model.Researcher, cursor string) *model.ResearcherEdge {
			return &model.ResearcherEdge{Cursor: cursor, Node: n}
		})
	return conn, lookAheadPage(ctx, "ResearcherConnection", "Researcher", "ResearcherEdge", pg.Items)
}

func (r *Resolver) searchInstitutions(ctx context.Context, query string, first *int, after *string, last *int, before *string) (*model.InstitutionConnection, error) {
	key, p, err := nameListArgs(query, first, last, after, before, institutionSearchTag)
	if err != nil {
		return nil, err
	}
	ror := ""
	if m := rorRef.FindStringSubmatch(strings.TrimSpace(query)); m != nil {
		ror = m[1]
	}
	conn := &model.InstitutionConnection{PageInfo: &model.PageInfo{},
		Total: func(ctx context.Context) (int, error) { return db.CountInstitutions(ctx, r.db, key, ror) }}
	if !asksPage(ctx, "InstitutionConnection") {
		return conn, nil
	}
	rows, err := db.SearchInstitutions(ctx, r.db, key, ror, p)
	if err != nil {
		return nil, err
	}
	pg := namePage(rows, p)
	conn.Nodes, conn.Edges, conn.PageInfo = fillPage(pg,
		func(x *db.Institution) string {
			return encodeNameCursor(institutionSearchTag, db.NameCursor{Key: x.Name, ID: x.ID})
		},
		wrapInstitution,
		func(_ *db.Institution, n *model.Institution, cursor string) *model.InstitutionEdge {
			return &model.InstitutionEdge{Cursor: cursor, Node: n}
		})
	return conn, lookAheadPage(ctx, "InstitutionConnection", "Institution", "InstitutionEdge", pg.Items)
}

// MaxSuggestions is the most suggestions `suggest` returns.
const MaxSuggestions = 50

// suggestTypes is the order in which suggest alternates the kinds.
var suggestTypes = []model.SuggestType{model.SuggestTypeResearcher, model.SuggestTypePaper, model.SuggestTypeInstitution, model.SuggestTypeCategory}

func (r *Resolver) suggest(ctx context.Context, prefix string, types []model.SuggestType, first *int) ([]*model.Suggestion, error) {
	n, err := countArg("first", first, 10, MaxSuggestions)
	if err != nil {
		return nil, err
	}
	if err := checkText("prefix", prefix, prefixText); err != nil {
		return nil, err
	}
	if types == nil {
		types = suggestTypes
	}
	// Each kind is one search: a kind named twice would search twice.
	if len(types) > len(suggestTypes) || len(types) != len(uniq(types)) {
		return nil, badInput("types", "name each of the %d kinds at most once", len(suggestTypes))
	}
	words := names.Words(prefix)
	if len(words) == 0 || n == 0 {
		return []*model.Suggestion{}, nil
	}
	key := strings.Join(words, " ")
	var lists [][]*model.Suggestion
	for _, t := range types {
		var list []*model.Suggestion
		var err error
		switch t {
		case model.SuggestTypePaper:
			list, err = r.suggestPapers(ctx, prefix, n)
		case model.SuggestTypeResearcher:
			var rs []*db.Researcher
			rs, err = db.SuggestResearchers(ctx, r.db, key, n)
			for _, x := range rs {
				m := wrapResearcher(x)
				list = append(list, &model.Suggestion{Type: t, Label: x.Name, Target: m})
			}
		case model.SuggestTypeInstitution:
			var is []*db.Institution
			is, err = db.SearchInstitutions(ctx, r.db, key, "", db.NamePage{N: n})
			for _, x := range is {
				m := wrapInstitution(x)
				list = append(list, &model.Suggestion{Type: t, Label: x.Name, Target: m})
			}
		case model.SuggestTypeCategory:
			var cs []*db.Category
			cs, err = db.SuggestCategories(ctx, r.db, strings.TrimSpace(prefix), n)
			for _, c := range cs {
				list = append(list, &model.Suggestion{Type: t, Label: c.Code + " (" + c.Name + ")", Target: c})
			}
		}
		if err != nil {
			return nil, err
		}
		lists = append(lists, list)
	}
	out := interleave(lists, n)
	return out, lookAheadSuggestions(ctx, out)
}

// lookAheadSuggestions walks below the targets of suggestions, a level
// per kind.
func lookAheadSuggestions(ctx context.Context, ss []*model.Suggestion) error {
	var ps []*db.Paper
	var rs []*db.Researcher
	var is []*db.Institution
	var cs []*db.Category
	for _, s := range ss {
		switch t := s.Target.(type) {
		case *model.Paper:
			ps = append(ps, t.Paper)
		case *model.Researcher:
			rs = append(rs, t.Researcher)
		case *model.Institution:
			is = append(is, t.Institution)
		case *db.Category:
			cs = append(cs, t)
		}
	}
	for _, err := range []error{
		lookAhead(ctx, "Paper", ps, "Suggestion", "target"),
		lookAhead(ctx, "Researcher", rs, "Suggestion", "target"),
		lookAhead(ctx, "Institution", is, "Suggestion", "target"),
		lookAhead(ctx, "Category", cs, "Suggestion", "target"),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Resolver) suggestPapers(ctx context.Context, prefix string, n int) ([]*model.Suggestion, error) {
	q := db.PrefixQuery(prefix)
	if q.IsZero() {
		return nil, nil
	}
	ps, err := db.SuggestPapers(ctx, r.db, q, n)
	out := make([]*model.Suggestion, len(ps))
	for i, p := range ps {
		m := wrapPaper(p)
		out[i] = &model.Suggestion{Type: model.SuggestTypePaper, Label: p.Title, Target: m}
	}
	return out, err
}

// interleave takes one item of each list in turn until n are taken or
// the lists run out.
func interleave[T any](lists [][]T, n int) []T {
	out := []T{}
	for i := 0; len(out) < n; i++ {
		took := false
		for _, l := range lists {
			if i < len(l) && len(out) < n {
				out = append(out, l[i])
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}

// MaxTopResearchers is the most researchers Category.topResearchers
// returns.
const MaxTopResearchers = 100

// topResearcherCount is Category.topResearchers' first, checked.
func topResearcherCount(first *int) (int, error) {
	return countArg("first", first, 10, MaxTopResearchers)
}

func categoryTopResearchers(ctx context.Context, code string, first *int) ([]*model.CategoryResearcher, error) {
	n, err := topResearcherCount(first)
	if err != nil {
		return nil, err
	}
	rows, err := loaders(ctx).topResearchers.load(ctx, countKey[string]{parent: code, n: n})
	out := make([]*model.CategoryResearcher, len(rows))
	for i, x := range rows {
		out[i] = &model.CategoryResearcher{Researcher: wrapResearcher(&x.Researcher), PaperCount: x.Count}
	}
	return out, err
}

// uniq is xs without repeats, in their first order.
func uniq[T comparable](xs []T) []T {
	seen := make(map[T]bool, len(xs))
	out := xs[:0:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
