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
		if row.Institution != nil && !seen[row.Institution.ID] {
			seen[row.Institution.ID] = true
			out = append(out, wrapInstitution(row.Institution))
		}
	}
	return out, err
}

func paperCategories(ctx context.Context, paperID int64) ([]*db.Category, error) {
	return batchedList(ctx, paperCategoriesField, paperID, addressOf[db.Category])
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
	rows, err := researcherFieldsField.load(ctx, id)
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
	rs, err := loaders(ctx).sameName.load(ctx, countKey[int64]{parent: id, n: n})
	return wrapAll(rs, wrapResearcher), err
}

// otherNames returns an institution's other names (aliases, acronyms,
// labels) of a kind, or of every kind when kind is empty.
func otherNames(ctx context.Context, id int64, kind string) ([]*model.InstitutionName, error) {
	ns, err := institutionNamesField.load(ctx, id)
	out := []*model.InstitutionName{}
	for i := range ns {
		if (kind == "" || ns[i].Kind == kind) && len(out) < institutionNamesField.most {
			out = append(out, &model.InstitutionName{InstitutionName: &ns[i]})
		}
	}
	return out, err
}

func otherNameStrings(ctx context.Context, id int64, kind string) ([]string, error) {
	ns, err := otherNames(ctx, id, kind)
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return out, err
}

// asksPage reports whether the connection being resolved, of type conn,
// is asked for anything that needs its page (nodes, edges or pageInfo),
// not only for its total and facets, which are read apart.
func asksPage(ctx context.Context, conn string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{conn}) {
		if f.Name != "totalCount" && f.Name != "facets" && f.Name != "__typename" {
			return true
		}
	}
	return false
}

// fillPage is the one connection builder: the nodes, edges and page info
// of page pg, where node makes an item's node and edge its edge from the
// item, its node and its cursor.
func fillPage[T, N, E any](pg db.Page[T], cursor func(T) string, node func(T) N, edge func(T, N, string) E) ([]N, []E, *model.PageInfo) {
	nodes := make([]N, len(pg.Items))
	edges := make([]E, len(pg.Items))
	for i, x := range pg.Items {
		nodes[i] = node(x)
		edges[i] = edge(x, nodes[i], cursor(x))
	}
	info := &model.PageInfo{HasNextPage: pg.HasNext, HasPreviousPage: pg.HasPrev}
	if n := len(pg.Items); n > 0 {
		start, end := cursor(pg.Items[0]), cursor(pg.Items[n-1])
		info.StartCursor, info.EndCursor = &start, &end
	}
	return nodes, edges, info
}

// listPage reads the page k names through pages, unless the connection
// being resolved, of type conn, asks only for its total and facets: then
// ok is false.
func listPage[K comparable, T any](ctx context.Context, conn string, pages *loader[K, db.Page[T]], k K) (pg db.Page[T], ok bool, err error) {
	if !asksPage(ctx, conn) {
		return pg, false, nil
	}
	pg, err = pages.load(ctx, k)
	return pg, err == nil, err
}

func paperEdge(_ *db.Paper, n *model.Paper, cursor string) *model.PaperEdge {
	return &model.PaperEdge{Cursor: cursor, Node: n}
}

// paperCursor is the cursor function of a paper list in order o.
func paperCursor(o db.PaperOrder) func(*db.Paper) string {
	tag := paperCursors.tag(o)
	return func(p *db.Paper) string { return encodeCursor(tag, db.PaperCursor(p, o)) }
}

func paperList(ctx context.Context, list db.PaperList, parent paperParent, first *int, after *string, last *int, before, category *string, sort *model.PaperSort) (*model.PaperConnection, error) {
	args, err := pageArgs(paperCursors, first, last, after, before, category, paperOrder(sort))
	if err != nil {
		return nil, err
	}
	l := loaders(ctx)
	k := paperPageKey{list: list, parent: parent, args: args}
	conn := &model.PaperConnection{
		PageInfo: &model.PageInfo{},
		Total:    func(ctx context.Context) (int, error) { return l.paperTotals.load(ctx, k.total()) },
		FacetCounts: &model.PaperFacets{
			CategoryCounts: func(ctx context.Context) ([]db.CategoryCount, error) { return l.categoryFacets.load(ctx, k.total()) },
			YearCounts:     func(ctx context.Context) ([]db.YearCount, error) { return l.yearFacets.load(ctx, k.total()) },
		},
	}
	pg, ok, err := listPage(ctx, "PaperConnection", l.paperPages, k)
	if ok {
		conn.Nodes, conn.Edges, conn.PageInfo = fillPage(pg, paperCursor(args.Order), wrapPaper, paperEdge)
	}
	return conn, err
}

func coauthorList(ctx context.Context, parent int64, first *int, after *string, last *int, before *string) (*model.CoauthorConnection, error) {
	args, err := pageArgs(coauthorCursors, first, last, after, before, nil, 0)
	if err != nil {
		return nil, err
	}
	l := loaders(ctx)
	conn := &model.CoauthorConnection{
		PageInfo: &model.PageInfo{},
		Total:    func(ctx context.Context) (int, error) { return l.coauthorTotals.load(ctx, parent) },
	}
	pg, ok, err := listPage(ctx, "CoauthorConnection", l.coauthorPages, pageKey{parent: parent, args: args})
	if ok {
		tag := coauthorCursors.tag(0)
		conn.Nodes, conn.Edges, conn.PageInfo = fillPage(pg,
			func(c *db.CoauthorRow) string { return encodeCursor(tag, db.CoauthorCursor(c)) },
			func(c *db.CoauthorRow) *model.Coauthor {
				return &model.Coauthor{Researcher: wrapResearcher(&c.Researcher), SharedPaperCount: c.Shared}
			},
			func(_ *db.CoauthorRow, n *model.Coauthor, cursor string) *model.CoauthorEdge {
				return &model.CoauthorEdge{Cursor: cursor, Node: n}
			})
	}
	return conn, err
}

func institutionResearcherList(ctx context.Context, parent int64, first *int, after *string, last *int, before *string) (*model.InstitutionResearcherConnection, error) {
	args, err := pageArgs(institutionResearcherCursors, first, last, after, before, nil, 0)
	if err != nil {
		return nil, err
	}
	l := loaders(ctx)
	conn := &model.InstitutionResearcherConnection{
		PageInfo: &model.PageInfo{},
		Total:    func(ctx context.Context) (int, error) { return l.institutionResearcherTotals.load(ctx, parent) },
	}
	pg, ok, err := listPage(ctx, "InstitutionResearcherConnection", l.institutionResearcherPages, pageKey{parent: parent, args: args})
	if ok {
		tag := institutionResearcherCursors.tag(0)
		conn.Nodes, conn.Edges, conn.PageInfo = fillPage(pg,
			func(r *db.InstitutionResearcherRow) string {
				return encodeCursor(tag, db.InstitutionResearcherCursor(r))
			},
			func(r *db.InstitutionResearcherRow) *model.Researcher { return wrapResearcher(&r.Researcher) },
			func(r *db.InstitutionResearcherRow, n *model.Researcher, cursor string) *model.InstitutionResearcherEdge {
				return &model.InstitutionResearcherEdge{Cursor: cursor, Node: n, PaperCount: r.PaperCount}
			})
	}
	return conn, err
}

// paperTextFields are the Paper fields that show what papers of list
// pages lack (db.PaperPages reads them without their long text): in
// gqlgen.yml each has a resolver, which reads the whole row through
// fullPaper, and the look-ahead reads those rows for them (paperSteps).
// TestPaperTextFields checks that the three agree.
var paperTextFields = []string{"abstract", "byline", "comments", "journalRef", "reportNo", "license"}

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
