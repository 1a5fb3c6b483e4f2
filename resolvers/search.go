package resolvers

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"

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
		ref, err := parseInstitutionRef("filter.institution", *filter.Institution)
		if err != nil {
			return s, err
		}
		s.InstitutionID = ref.id
		if ref.id == 0 {
			x, err := db.InstitutionByRef(ctx, r.db, ref.InstitutionRef)
			if err != nil {
				return s, err
			}
			s.InstitutionID = foundID(x, func(x *db.Institution) int64 { return x.ID })
		}
	}
	return s, nil
}

// foundID is x's id, or -1 (which names nobody, so that the filter
// matches no paper) when x was not found.
func foundID[T any](x *T, id func(*T) int64) int64 {
	if x == nil {
		return -1
	}
	return id(x)
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

func (r *Resolver) searchPapers(ctx context.Context, query *string, filter *model.PaperFilter, sort *model.PaperSearchSort, first *int, after *string, last *int, before *string) (*model.PaperConnection, error) {
	s, order, err := SearchArgs(ctx, r.db, query, filter, sort)
	if err != nil {
		return nil, err
	}
	args, err := pageArgs(paperLists, first, last, after, before, nil, order)
	if err != nil {
		return nil, err
	}
	conn := &model.PaperConnection{
		PageInfo: &model.PageInfo{},
		Total:    func(ctx context.Context) (int, error) { return db.SearchTotal(ctx, r.db, s) },
		FacetCounts: &model.PaperFacets{
			CategoryCounts: func(ctx context.Context) ([]db.CategoryCount, error) {
				m, err := db.CategoryFacets[int64](ctx, r.db, s.Set(r.db))
				return m[0], err
			},
			YearCounts: func(ctx context.Context) ([]db.YearCount, error) {
				m, err := db.YearFacets[int64](ctx, r.db, s.Set(r.db))
				return m[0], err
			},
		},
	}
	if !asksPage(ctx, "PaperConnection") {
		return conn, nil
	}
	pg, err := db.SearchPapers(ctx, r.db, s, args)
	if err != nil {
		return nil, err
	}
	fillPaperPage(conn, pg, order)
	return conn, prefetchBelow(ctx, loaders(ctx), pg.Items, (*prefetcher).paperPage)
}

// nameCursor encodes a cursor of a list ordered by name:
// "<tag>:<count>:<id>:<key>" in unpadded URL-safe base64.
func nameCursor(tag string, c db.NameCursor) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s:%d:%d:%s", tag, c.Count, c.ID, c.Key))
}

func parseNameCursor(s, tag string) (db.NameCursor, error) {
	if err := checkText("after", s, idText); err != nil {
		return db.NameCursor{}, err
	}
	bad := badInput("after", "not a cursor of this list: %s", QuoteInput(s))
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return db.NameCursor{}, bad
	}
	parts := strings.SplitN(string(b), ":", 4)
	if len(parts) != 4 || parts[0] != tag {
		return db.NameCursor{}, bad
	}
	c := db.NameCursor{Set: true, Key: parts[3]}
	if c.Count, err = strconv.Atoi(parts[1]); err != nil {
		return db.NameCursor{}, bad
	}
	if c.ID, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
		return db.NameCursor{}, bad
	}
	return c, nil
}

// nameListArgs checks the arguments of a list searched by name: the
// folded words of query, the page size and the cursor.
func nameListArgs(query string, first *int, after *string, tag string) (key string, n int, c db.NameCursor, err error) {
	if err := checkText("query", query, queryText); err != nil {
		return "", 0, c, err
	}
	key = strings.Join(names.Words(query), " ")
	if key == "" {
		return "", 0, c, badInput("query", "no letter or digit in %s", QuoteInput(query))
	}
	n = defaultPage
	if first != nil {
		if *first < 0 || *first > MaxPage {
			return "", 0, c, badInput("first", "must be between 0 and %d, got %d", MaxPage, *first)
		}
		n = *first
	}
	if after != nil {
		c, err = parseNameCursor(*after, tag)
	}
	return key, n, c, err
}

// namePage cuts the n+1 rows of a name search into a page.
func namePage[T any](rows []*T, n int, after bool) db.Page[*T] {
	pg := db.Page[*T]{Items: rows, HasPrev: after}
	if len(rows) > n {
		pg.Items, pg.HasNext = rows[:n], true
	}
	return pg
}

const (
	researcherSearchTag  = "researchers-by-name"
	institutionSearchTag = "institutions-by-name"
)

func (r *Resolver) searchResearchers(ctx context.Context, query string, first *int, after *string) (*model.ResearcherConnection, error) {
	key, n, c, err := nameListArgs(query, first, after, researcherSearchTag)
	if err != nil {
		return nil, err
	}
	rows, err := db.SearchResearchers(ctx, r.db, key, false, c, n)
	if err != nil {
		return nil, err
	}
	pg := namePage(rows, n, c.Set)
	cursor := func(x *db.Researcher) string {
		return nameCursor(researcherSearchTag, db.NameCursor{Key: x.NameKey, Count: x.PaperCount, ID: x.ID})
	}
	conn := &model.ResearcherConnection{PageInfo: pageInfo(pg, cursor), Nodes: wrapAll(pg.Items, wrapResearcher)}
	conn.Edges = make([]*model.ResearcherEdge, len(pg.Items))
	for i, x := range pg.Items {
		conn.Edges[i] = &model.ResearcherEdge{Cursor: cursor(x), Node: conn.Nodes[i]}
	}
	l := loaders(ctx)
	for _, x := range pg.Items {
		l.researchers.Prime(ctx, x.ID, x)
	}
	return conn, prefetchBelow(ctx, l, pg.Items, func(p *prefetcher, ctx context.Context, rs []*db.Researcher, sel ast.SelectionSet) error {
		return p.researchers(ctx, rs, p.items(sel, "ResearcherConnection", "ResearcherEdge"))
	})
}

func (r *Resolver) searchInstitutions(ctx context.Context, query string, first *int, after *string) (*model.InstitutionConnection, error) {
	key, n, c, err := nameListArgs(query, first, after, institutionSearchTag)
	if err != nil {
		return nil, err
	}
	ror := ""
	if m := rorRef.FindStringSubmatch(strings.TrimSpace(query)); m != nil {
		ror = m[1]
	}
	rows, err := db.SearchInstitutions(ctx, r.db, key, ror, c, n)
	if err != nil {
		return nil, err
	}
	pg := namePage(rows, n, c.Set)
	cursor := func(x *db.Institution) string {
		return nameCursor(institutionSearchTag, db.NameCursor{Key: x.Name, ID: x.ID})
	}
	conn := &model.InstitutionConnection{PageInfo: pageInfo(pg, cursor), Nodes: wrapAll(pg.Items, wrapInstitution)}
	conn.Edges = make([]*model.InstitutionEdge, len(pg.Items))
	for i, x := range pg.Items {
		conn.Edges[i] = &model.InstitutionEdge{Cursor: cursor(x), Node: conn.Nodes[i]}
	}
	return conn, prefetchBelow(ctx, loaders(ctx), pg.Items, func(p *prefetcher, ctx context.Context, is []*db.Institution, sel ast.SelectionSet) error {
		return p.institutions(ctx, is, p.items(sel, "InstitutionConnection", "InstitutionEdge"))
	})
}

// MaxSuggestions is the most suggestions `suggest` returns.
const MaxSuggestions = 50

// suggestTypes is the order in which suggest alternates the kinds.
var suggestTypes = []model.SuggestType{model.SuggestTypeResearcher, model.SuggestTypePaper, model.SuggestTypeInstitution, model.SuggestTypeCategory}

func (r *Resolver) suggest(ctx context.Context, prefix string, types []model.SuggestType, first *int) ([]*model.Suggestion, error) {
	n := 10
	if first != nil {
		n = *first
	}
	if n < 0 || n > MaxSuggestions {
		return nil, badInput("first", "must be between 0 and %d, got %d", MaxSuggestions, n)
	}
	if err := checkText("prefix", prefix, prefixText); err != nil {
		return nil, err
	}
	if types == nil {
		types = suggestTypes
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
			rs, err = db.SearchResearchers(ctx, r.db, key, true, db.NameCursor{}, n)
			for _, x := range rs {
				m := wrapResearcher(x)
				list = append(list, &model.Suggestion{Type: t, Label: x.Name, ID: m.ID(), Target: m})
			}
		case model.SuggestTypeInstitution:
			var is []*db.Institution
			is, err = db.SearchInstitutions(ctx, r.db, key, "", db.NameCursor{}, n)
			for _, x := range is {
				m := wrapInstitution(x)
				list = append(list, &model.Suggestion{Type: t, Label: x.Name, ID: m.ID(), Target: m})
			}
		case model.SuggestTypeCategory:
			var cs []*db.Category
			cs, err = db.SuggestCategories(ctx, r.db, strings.TrimSpace(prefix), n)
			for _, c := range cs {
				list = append(list, &model.Suggestion{Type: t, Label: c.Code + " (" + c.Name + ")", ID: c.Code, Target: c})
			}
		}
		if err != nil {
			return nil, err
		}
		lists = append(lists, list)
	}
	return interleave(lists, n), nil
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
		out[i] = &model.Suggestion{Type: model.SuggestTypePaper, Label: p.Title, ID: m.ID(), Target: m}
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

func categoryTopResearchers(ctx context.Context, code string, first *int) ([]*model.CategoryResearcher, error) {
	n := 10
	if first != nil {
		n = *first
	}
	if n < 0 || n > MaxTopResearchers {
		return nil, badInput("first", "must be between 0 and %d, got %d", MaxTopResearchers, n)
	}
	rows, err := loaders(ctx).topResearchers.load(ctx, topKey{code: code, n: n})
	out := make([]*model.CategoryResearcher, len(rows))
	for i, x := range rows {
		out[i] = &model.CategoryResearcher{Researcher: wrapResearcher(&x.Researcher), PaperCount: x.Count}
	}
	return out, err
}
