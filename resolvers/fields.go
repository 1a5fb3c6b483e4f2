package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
)

// loaders returns the request's loaders. Their absence is a wiring bug
// (the handler is not wrapped in Middleware); the panic reaches the client
// as an internal error through Recover and the log says what is wrong.
func loaders(ctx context.Context) *Loaders {
	l := loadersFrom(ctx)
	if l == nil {
		panic("resolvers: no loaders in the request context; wrap the handler in resolvers.Middleware")
	}
	return l
}

func wrapPaper(p *db.Paper) *model.Paper {
	if p == nil {
		return nil
	}
	return &model.Paper{Paper: p}
}

func wrapResearcher(r *db.Researcher) *model.Researcher {
	if r == nil {
		return nil
	}
	return &model.Researcher{Researcher: r}
}

func wrapInstitution(i *db.Institution) *model.Institution {
	if i == nil {
		return nil
	}
	return &model.Institution{Institution: i}
}

func wrapAll[T, W any](xs []*T, wrap func(*T) *W) []*W {
	out := make([]*W, len(xs))
	for i, x := range xs {
		out[i] = wrap(x)
	}
	return out
}

func (r *Resolver) paperByID(ctx context.Context, id int64) (*model.Paper, error) {
	if id == 0 {
		return nil, nil
	}
	p, err := loaders(ctx).papers.load(ctx, id)
	return wrapPaper(p), err
}

func (r *Resolver) researcher(ctx context.Context, id int64) (*model.Researcher, error) {
	if id == 0 {
		return nil, nil
	}
	x, err := loaders(ctx).researchers.load(ctx, id)
	return wrapResearcher(x), err
}

func authorships(ctx context.Context, p *model.Paper, first, after *int) ([]*model.Authorship, error) {
	w, err := authorWindow(first, after)
	if err != nil {
		return nil, err
	}
	as, err := loaders(ctx).authorships.load(ctx, bylineKey{paper: p.Paper.ID, window: w})
	out := make([]*model.Authorship, len(as))
	for i, a := range as {
		out[i] = &model.Authorship{Authorship: a, Window: w, Role: model.Role(a.Position, p.AuthorCount, p.AuthorsComplete)}
	}
	return out, err
}

// authorAffiliations returns the affiliations of one byline entry, read
// for the window of the byline it was listed in.
func authorAffiliations(ctx context.Context, a *model.Authorship) ([]db.AffiliationRow, error) {
	rows, err := loaders(ctx).affiliations.load(ctx, bylineKey{paper: a.PaperID, window: a.Window})
	var out []db.AffiliationRow
	for _, row := range rows {
		if row.Position == a.Position {
			out = append(out, row)
		}
	}
	return firstN(out, maxAffiliations), err
}

func affiliations(ctx context.Context, a *model.Authorship) ([]string, error) {
	rows, err := authorAffiliations(ctx, a)
	out := make([]string, len(rows))
	for i, row := range rows {
		out[i] = row.Raw
	}
	return out, err
}

func affiliationInstitutions(ctx context.Context, a *model.Authorship) ([]*model.Institution, error) {
	rows, err := authorAffiliations(ctx, a)
	out := []*model.Institution{}
	seen := map[int64]bool{}
	for _, row := range rows {
		if row.Institution != nil && !seen[row.Institution.ID] && len(out) < maxAffiliations {
			seen[row.Institution.ID] = true
			out = append(out, wrapInstitution(row.Institution))
		}
	}
	return out, err
}

func paperCategories(ctx context.Context, paperID int64) ([]*db.Category, error) {
	cats, err := loaders(ctx).categories.load(ctx, paperID)
	cats = firstN(cats, maxPaperCategories)
	out := make([]*db.Category, len(cats))
	for i := range cats {
		out[i] = &cats[i]
	}
	return out, err
}

// primaryCategory picks the primary out of the paper's categories, which
// the writer stores first.
func primaryCategory(ctx context.Context, p *model.Paper) (*db.Category, error) {
	cats, err := paperCategories(ctx, p.Paper.ID)
	for _, c := range cats {
		if c.Code == p.PrimaryCategory {
			return c, err
		}
	}
	return nil, err
}

func researcherFields(ctx context.Context, id int64, first *int) ([]*model.ResearcherField, error) {
	n, err := countArg("first", first, DefaultFields, MaxFields)
	if err != nil {
		return nil, err
	}
	rows, err := loaders(ctx).fields.load(ctx, id)
	rows = firstN(rows, n)
	out := make([]*model.ResearcherField, len(rows))
	for i := range rows {
		out[i] = &model.ResearcherField{Category: &rows[i].Category, Count: rows[i].PaperCount}
	}
	return out, err
}

func sameName(ctx context.Context, id int64, first *int) ([]*model.Researcher, error) {
	n, err := countArg("first", first, DefaultSameName, MaxSameName)
	if err != nil {
		return nil, err
	}
	rs, err := loaders(ctx).sameName.load(ctx, countKey{parent: id, n: n})
	return wrapAll(rs, wrapResearcher), err
}

func researcherInstitutions(ctx context.Context, id int64) ([]*model.Institution, error) {
	is, err := loaders(ctx).researcherInstitutions.load(ctx, id)
	return wrapAll(firstN(is, maxResearcherInstitutions), wrapInstitution), err
}

// institutionNames returns an institution's other names of a kind, or of
// every kind when kind is empty.
func institutionNames(ctx context.Context, id int64, kind string) ([]*db.InstitutionName, error) {
	ns, err := loaders(ctx).institutionNames.load(ctx, id)
	out := []*db.InstitutionName{}
	for i := range ns {
		if (kind == "" || ns[i].Kind == kind) && len(out) < maxInstitutionNames {
			out = append(out, &ns[i])
		}
	}
	return out, err
}

func institutionNameStrings(ctx context.Context, id int64, kind string) ([]string, error) {
	ns, err := institutionNames(ctx, id, kind)
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return out, err
}

// asksPage reports whether the connection being resolved is asked for
// its items or page info, not only for its total.
func asksPage(ctx context.Context, conn string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{conn}) {
		if f.Name != "totalCount" && f.Name != "facets" && f.Name != "__typename" {
			return true
		}
	}
	return false
}

func pageInfo[T any](pg db.Page[T], cursor func(T) string) *model.PageInfo {
	info := &model.PageInfo{HasNextPage: pg.HasNext, HasPreviousPage: pg.HasPrev}
	if n := len(pg.Items); n > 0 {
		start, end := cursor(pg.Items[0]), cursor(pg.Items[n-1])
		info.StartCursor, info.EndCursor = &start, &end
	}
	return info
}

func paperList[P db.PaperParent](ctx context.Context, ls paperLoaders[P], list db.PaperList, parent P, first *int, after *string, last *int, before, category *string, sort *model.PaperSort) (*model.PaperConnection, error) {
	args, err := pageArgs(paperLists, first, last, after, before, category, paperOrder(sort))
	if err != nil {
		return nil, err
	}
	key := paperTotalKey[P]{list: list, parent: parent, category: args.Category}
	conn := &model.PaperConnection{
		PageInfo: &model.PageInfo{},
		Total:    func(ctx context.Context) (int, error) { return ls.totals.load(ctx, key) },
		FacetCounts: &model.PaperFacets{
			CategoryCounts: func(ctx context.Context) ([]db.CategoryCount, error) { return ls.categoryFacets.load(ctx, key) },
			YearCounts:     func(ctx context.Context) ([]db.YearCount, error) { return ls.yearFacets.load(ctx, key) },
		},
	}
	if !asksPage(ctx, "PaperConnection") {
		return conn, nil
	}
	pg, err := ls.pages.load(ctx, paperPageKey[P]{list: list, parent: parent, args: args})
	if err != nil {
		return nil, err
	}
	fillPaperPage(conn, pg, args.Order)
	return conn, nil
}

// fillPaperPage puts the page pg of a list in order o into conn.
func fillPaperPage(conn *model.PaperConnection, pg db.Page[*db.Paper], o db.PaperOrder) {
	tag := paperLists.tag(o)
	cursor := func(p *db.Paper) string { return cursorString(db.PaperCursor(p, o), tag) }
	conn.Nodes = make([]*model.Paper, len(pg.Items))
	conn.Edges = make([]*model.PaperEdge, len(pg.Items))
	for i, p := range pg.Items {
		conn.Nodes[i] = wrapPaper(p)
		conn.Edges[i] = &model.PaperEdge{Cursor: cursor(p), Node: conn.Nodes[i]}
	}
	conn.PageInfo = pageInfo(pg, cursor)
}

func coauthorList(ctx context.Context, parent int64, first *int, after *string, last *int, before *string) (*model.CoauthorConnection, error) {
	args, err := pageArgs(coauthorLists, first, last, after, before, nil, 0)
	if err != nil {
		return nil, err
	}
	l := loaders(ctx)
	conn := &model.CoauthorConnection{
		PageInfo: &model.PageInfo{},
		Total:    func(ctx context.Context) (int, error) { return l.coauthorTotals.load(ctx, parent) },
	}
	if !asksPage(ctx, "CoauthorConnection") {
		return conn, nil
	}
	pg, err := l.coauthorPages.load(ctx, pageKey{parent: parent, args: args})
	if err != nil {
		return nil, err
	}
	tag := coauthorLists.tag(0)
	cursor := func(c *db.CoauthorRow) string { return cursorString(db.CoauthorCursor(c), tag) }
	conn.Nodes = make([]*model.Coauthor, len(pg.Items))
	conn.Edges = make([]*model.CoauthorEdge, len(pg.Items))
	for i, c := range pg.Items {
		conn.Nodes[i] = &model.Coauthor{Researcher: wrapResearcher(&c.Researcher), SharedPaperCount: c.Shared}
		conn.Edges[i] = &model.CoauthorEdge{Cursor: cursor(c), Node: conn.Nodes[i]}
	}
	conn.PageInfo = pageInfo(pg, cursor)
	return conn, nil
}

func institutionResearcherList(ctx context.Context, parent int64, first *int, after *string, last *int, before *string) (*model.InstitutionResearcherConnection, error) {
	args, err := pageArgs(institutionResearcherLists, first, last, after, before, nil, 0)
	if err != nil {
		return nil, err
	}
	l := loaders(ctx)
	conn := &model.InstitutionResearcherConnection{
		PageInfo: &model.PageInfo{},
		Total:    func(ctx context.Context) (int, error) { return l.institutionResearcherTotals.load(ctx, parent) },
	}
	if !asksPage(ctx, "InstitutionResearcherConnection") {
		return conn, nil
	}
	pg, err := l.institutionResearcherPages.load(ctx, pageKey{parent: parent, args: args})
	if err != nil {
		return nil, err
	}
	tag := institutionResearcherLists.tag(0)
	cursor := func(r *db.InstitutionResearcherRow) string {
		return cursorString(db.InstitutionResearcherCursor(r), tag)
	}
	conn.Nodes = make([]*model.Researcher, len(pg.Items))
	conn.Edges = make([]*model.InstitutionResearcherEdge, len(pg.Items))
	for i, r := range pg.Items {
		conn.Nodes[i] = wrapResearcher(&r.Researcher)
		conn.Edges[i] = &model.InstitutionResearcherEdge{Cursor: cursor(r), Node: conn.Nodes[i], PaperCount: r.PaperCount}
	}
	conn.PageInfo = pageInfo(pg, cursor)
	return conn, nil
}

// fullPaper is p with every column: papers of list pages are read without
// their long text (see db.PaperPages), which this reads by id.
func fullPaper(ctx context.Context, p *model.Paper) (*db.Paper, error) {
	if !p.Partial {
		return p.Paper, nil
	}
	full, err := loaders(ctx).papers.load(ctx, p.Paper.ID)
	if err != nil || full == nil {
		return p.Paper, err
	}
	return full, nil
}

// paperText is a long text field of p, nil when empty.
func paperText(ctx context.Context, p *model.Paper, field func(*db.Paper) *string) (*string, error) {
	full, err := fullPaper(ctx, p)
	if err != nil {
		return nil, err
	}
	return model.Nullable(field(full)), nil
}
