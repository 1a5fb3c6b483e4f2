package resolvers

import (
	"cmp"
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/network"
)

// The look-ahead makes the statement count of a query depend on its depth,
// not on its width. A root resolver hands it the objects it found; the
// look-ahead walks the selection below them one level at a time and, for
// each field the level asks for, follows the field's step in lookAheads:
// one statement through the field's loader for all the level's objects,
// whose values give the objects of the next level. The field resolvers
// below then find everything cached: they wait on no dataloader timer and
// send no statement of their own, and the lists between them are
// marshaled in line (inline.go). A shape the table does not know still
// answers, but its resolvers miss the cache and read through the
// loaders' batches, its lists marshaled an element a goroutine so that
// the misses meet: the root-list and contract tests count the statements
// of every shape.
//
// A list field read by a db read of lists by parent id declares it in
// schema.graphqls (@batched), and go generate writes its step
// (batchedSteps). The steps below are those of fields whose reads take
// arguments, pages or windows, or whose value is at hand in the parent.
// TestLookAheadsMatchSchema fails until a field that resolves through code
// has a step, and where a field with no step (or one that stops the walk)
// leads to fields that have steps further down.

// lookAheadOn switches the look-ahead on; the benchmarks switch it off to
// record what it saves (BenchmarkContractQuery/lookahead=off).
var lookAheadOn = true

// step is how the look-ahead reads one field for all the objects of a
// level: read takes the level's objects and the field's arguments and
// returns the objects of the next level, of GraphQL type next ("" when the
// walk stops at the field).
type step struct {
	next string
	read func(ctx context.Context, l *Loaders, parents []any, args map[string]any) ([]any, error)
	// readAsking, when set, is read for a field whose selection asks for
	// the field of next named asking: a read that fetches that too.
	asking     string
	readAsking func(ctx context.Context, l *Loaders, parents []any, args map[string]any) ([]any, error)
}

// follow is the step of a field whose resolver reads through a loader:
// of picks the loader, key names what the field reads of one parent
// given the field's arguments (ok false: nothing to read for it; an error:
// arguments the field's resolver refuses, so nothing is read), and
// children appends to out the objects of type next that one value leads
// to.
func follow[P any, K comparable, V any](of func(*Loaders) *loader[K, V], key func(args map[string]any) (func(P) (K, bool), error),
	next string, children func(out []any, k K, v V) []any) step {
	return step{next: next, read: func(ctx context.Context, l *Loaders, parents []any, args map[string]any) ([]any, error) {
		keyOf, err := key(args)
		if err != nil {
			return nil, nil // the field's resolver reports it
		}
		keys := make([]K, 0, len(parents))
		seen := make(map[K]bool, len(parents))
		for _, p := range parents {
			if k, ok := keyOf(p.(P)); ok && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			return nil, nil
		}
		vs, err := of(l).read(ctx, keys)
		if err != nil || children == nil {
			return nil, err
		}
		var out []any
		for i, v := range vs {
			out = children(out, keys[i], v)
		}
		return out, nil
	}}
}

// hop is the step of a field whose value is at hand in its parent: no
// statement, only the object of type next each parent leads to, built
// from the field's arguments when it takes some.
func hop[P any](next string, key func(args map[string]any) (func(P) any, error)) step {
	return step{next: next, read: func(_ context.Context, _ *Loaders, parents []any, args map[string]any) ([]any, error) {
		children, err := key(args)
		if err != nil {
			return nil, nil // the field's resolver reports it
		}
		out := make([]any, len(parents))
		for i, p := range parents {
			out[i] = children(p.(P))
		}
		return out, nil
	}}
}

// noArgs makes the key or children function of a field that takes no
// arguments out of f.
func noArgs[F any](f F) func(map[string]any) (F, error) {
	return func(map[string]any) (F, error) { return f, nil }
}

// keyOfEach makes a key function whose every parent has a key out of key.
func keyOfEach[P, K any](key func(P) K) func(P) (K, bool) {
	return func(p P) (K, bool) { return key(p), true }
}

// appendObject and appendItems are the children functions of a value
// that is one object (none when nil) or a list of them.
func appendObject[K, T any](out []any, _ K, x *T) []any {
	if x == nil {
		return out
	}
	return append(out, x)
}

func appendItems[K, T any](out []any, _ K, xs []T) []any {
	for _, x := range xs {
		out = append(out, x)
	}
	return out
}

// pointers appends to out a pointer to each of xs: the objects of a
// level whose rows a loader holds by value.
func pointers[T any](out []any, xs []T) []any {
	for i := range xs {
		out = append(out, &xs[i])
	}
	return out
}

// anys is xs as the objects of a level.
func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// Keys and children of the objects of the levels.
func paperID(p *db.Paper) int64                               { return p.ID }
func researcherID(r *db.Researcher) int64                     { return r.ID }
func institutionID(i *db.Institution) int64                   { return i.ID }
func identity[K any](k K) K                                   { return k }
func asObject[T any](x T) any                                 { return x }
func pageItems[K, T any](out []any, k K, pg db.Page[T]) []any { return appendItems(out, k, pg.Items) }

// lookAheads is the look-ahead's table: for each field "Type.field" that
// resolves through a loader, how to read it for a whole level. The types
// of a level's objects are fixed by the level's GraphQL type:
//
//	Paper, PaperEdge                   *db.Paper
//	Researcher, ResearcherEdge         *db.Researcher
//	Institution, InstitutionEdge       *db.Institution
//	Category                           *db.Category
//	ResearcherField                    *db.ResearcherFieldRow
//	CategoryCount                      *db.CategoryCount
//	InstitutionName                    *db.InstitutionName
//	Authorship                         *model.Authorship
//	PaperConnection                    paperPageKey
//	PaperFacets                        paperTotalKey
//	CoauthorConnection, Institution-
//	ResearcherConnection               pageKey
//	Coauthor, CoauthorEdge             *db.CoauthorRow
//	InstitutionResearcherEdge          *db.InstitutionResearcherRow
//	CategoryResearcher                 *db.ResearcherCount
//	InstitutionCollaborator            network.Weighted
//	Topic, TopicEdge                   *db.Topic
//	TopicResearcher                    *db.TopicResearcher
//	ResearcherTopic                    *db.TopicCount
var lookAheads = joinSteps(batchedSteps, paperSteps(), researcherSteps(), institutionSteps(), categorySteps(),
	paperConnectionSteps(), pageConnectionSteps(), semanticSteps(), analysisSteps(), topicSteps())

// joinSteps is the table of all the steps of tables; a field in two of
// them is a bug, caught when the package starts.
func joinSteps(tables ...map[string]step) map[string]step {
	out := map[string]step{}
	for _, t := range tables {
		for name, s := range t {
			if _, ok := out[name]; ok {
				panic("resolvers: two look-ahead steps for " + name)
			}
			out[name] = s
		}
	}
	return out
}

// paperSteps are the steps of the fields of Paper and Authorship.
func paperSteps() map[string]step {
	categories := func(l *Loaders) *loader[int64, []db.Category] { return paperCategoriesField.loader(l) }
	affiliations := func(next string, children func([]any, bylineKey, []db.AffiliationRow) []any) step {
		return follow(func(l *Loaders) *loader[bylineKey, []db.AffiliationRow] { return l.affiliations },
			noArgs(keyOfEach(func(a *model.Authorship) bylineKey { return bylineKey{paper: a.PaperID, window: a.Window} })), next, children)
	}
	t := map[string]step{
		"Paper.authors":         bylineStep(),
		"Paper.primaryCategory": followEach(categories, keyOfEach(paperID), "Category", noArgs(primaryOf)),
		"Paper.citations":       paperConnection(db.Citations, func(p *db.Paper) paperParent { return paperParent{id: p.ID} }),
		"Paper.references":      paperConnection(db.References, func(p *db.Paper) paperParent { return paperParent{id: p.ID} }),

		"Authorship.researcher": follow(func(l *Loaders) *loader[int64, *db.Researcher] { return l.researchers },
			noArgs(func(a *model.Authorship) (int64, bool) { return a.ResearcherID, a.ResearcherID != 0 }),
			"Researcher", appendObject[int64, db.Researcher]),
		"Authorship.affiliations": affiliations("", nil),
		"Authorship.institutions": affiliations("Institution", func(out []any, _ bylineKey, rows []db.AffiliationRow) []any {
			for _, row := range rows {
				if row.Institution != nil {
					out = append(out, row.Institution)
				}
			}
			return out
		}),
	}
	// Papers of list pages are read without their long text; the fields
	// that show it read the whole row (see paperTextFields).
	for _, f := range paperTextFields {
		t["Paper."+f] = follow(func(l *Loaders) *loader[int64, *db.Paper] { return l.papers },
			noArgs(func(p *db.Paper) (int64, bool) { return p.ID, p.Partial }), "", nil)
	}
	return t
}

// bylineStep is the step of Paper.authors. A byline whose selection asks
// for researchers reads them with the authorships, in one statement
// (Loaders.bylines).
func bylineStep() step {
	byline := func(of func(*Loaders) *loader[bylineKey, []db.Authorship]) step {
		return follow(of, func(args map[string]any) (func(*db.Paper) (bylineKey, bool), error) {
			ia := intArgs(args, "first", "after")
			w, err := authorWindow(ia[0], ia[1])
			return keyOfEach(func(p *db.Paper) bylineKey { return bylineKey{paper: p.ID, window: w} }), err
		}, "Authorship", func(out []any, k bylineKey, as []db.Authorship) []any {
			ms := make([]model.Authorship, len(as))
			for i, a := range as {
				ms[i] = model.Authorship{Authorship: a, Window: k.window}
				out = append(out, &ms[i])
			}
			return out
		})
	}
	authors := byline(func(l *Loaders) *loader[bylineKey, []db.Authorship] { return l.authorships })
	authors.asking = "researcher"
	authors.readAsking = byline(func(l *Loaders) *loader[bylineKey, []db.Authorship] { return l.bylines }).read
	return authors
}

// researcherSteps are the steps of the fields of Researcher.
func researcherSteps() map[string]step {
	return map[string]step{
		"ResearcherField.category": hop("Category", noArgs(func(f *db.ResearcherFieldRow) any { return &f.Category })),
		"Researcher.sameName": follow(func(l *Loaders) *loader[countKey[int64], []*db.Researcher] { return l.sameName },
			func(args map[string]any) (func(*db.Researcher) (countKey[int64], bool), error) {
				n, err := countArg("first", intArgs(args, "first")[0], DefaultSameName, MaxSameName)
				return keyOfEach(func(r *db.Researcher) countKey[int64] { return countKey[int64]{parent: r.ID, n: n} }), err
			}, "Researcher", appendItems[countKey[int64], *db.Researcher]),
		"Researcher.mostCitedPaper": follow(func(l *Loaders) *loader[int64, *db.Paper] { return l.papers },
			noArgs(func(r *db.Researcher) (int64, bool) { return r.MostCitedPaperID, r.MostCitedPaperID != 0 }),
			"Paper", appendObject[int64, db.Paper]),
		"Researcher.papers":    paperConnection(db.ResearcherPapers, func(r *db.Researcher) paperParent { return paperParent{id: r.ID} }),
		"Researcher.coauthors": connection(coauthorCursors, "CoauthorConnection", researcherID),
		"ResearcherEdge.node":  hop("Researcher", noArgs(asObject[*db.Researcher])),
	}
}

// institutionSteps are the steps of the fields of Institution.
func institutionSteps() map[string]step {
	return map[string]step{
		"Institution.papers":      paperConnection(db.InstitutionPapers, func(i *db.Institution) paperParent { return paperParent{id: i.ID} }),
		"Institution.researchers": connection(institutionResearcherCursors, "InstitutionResearcherConnection", institutionID),
		"Institution.collaborators": follow(func(l *Loaders) *loader[countKey[int64], []network.Weighted] { return l.collaborators },
			func(args map[string]any) (func(*db.Institution) (countKey[int64], bool), error) {
				n, err := collaboratorCount(intArgs(args, "first")[0])
				return keyOfEach(func(i *db.Institution) countKey[int64] { return countKey[int64]{parent: i.ID, n: n} }), err
			}, "InstitutionCollaborator", appendItems[countKey[int64], network.Weighted]),
		"InstitutionCollaborator.institution": follow(func(l *Loaders) *loader[int64, *db.Institution] { return l.institutions },
			noArgs(keyOfEach(func(w network.Weighted) int64 { return w.ID })), "Institution", appendObject[int64, db.Institution]),
		"InstitutionEdge.node": hop("Institution", noArgs(asObject[*db.Institution])),
	}
}

// categorySteps are the steps of the fields of Category.
func categorySteps() map[string]step {
	return map[string]step{
		"Category.papers": paperConnection(db.CategoryPapers, func(c *db.Category) paperParent { return paperParent{code: c.Code} }),
		"Category.topResearchers": follow(func(l *Loaders) *loader[countKey[string], []*db.ResearcherCount] { return l.topResearchers },
			func(args map[string]any) (func(*db.Category) (countKey[string], bool), error) {
				n, err := topResearcherCount(intArgs(args, "first")[0])
				return keyOfEach(func(c *db.Category) countKey[string] { return countKey[string]{parent: c.Code, n: n} }), err
			}, "CategoryResearcher", appendItems[countKey[string], *db.ResearcherCount]),
		"CategoryResearcher.researcher": hop("Researcher", noArgs(func(r *db.ResearcherCount) any { return &r.Researcher })),
	}
}

// paperConnectionSteps are the steps of the fields of PaperConnection
// and of what it leads to.
func paperConnectionSteps() map[string]step {
	pages := func(l *Loaders) *loader[paperPageKey, db.Page[*db.Paper]] { return l.paperPages }
	return map[string]step{
		"PaperConnection.totalCount": follow(func(l *Loaders) *loader[paperTotalKey, int] { return l.paperTotals },
			noArgs(keyOfEach(paperPageKey.total)), "", nil),
		"PaperConnection.facets": hop("PaperFacets", noArgs(func(k paperPageKey) any { return k.total() })),
		"PaperFacets.categories": follow(func(l *Loaders) *loader[paperTotalKey, []db.CategoryCount] { return l.categoryFacets },
			noArgs(keyOfEach(identity[paperTotalKey])), "CategoryCount", shownFacets),
		"CategoryCount.category": hop("Category", noArgs(func(c *db.CategoryCount) any { return &c.Category })),
		"PaperFacets.years": follow(func(l *Loaders) *loader[paperTotalKey, []db.YearCount] { return l.yearFacets },
			noArgs(keyOfEach(identity[paperTotalKey])), "", nil),
		"PaperConnection.pageInfo": follow(pages, noArgs(keyOfEach(identity[paperPageKey])), "", nil),
		"PaperConnection.nodes":    follow(pages, noArgs(keyOfEach(identity[paperPageKey])), "Paper", pageItems[paperPageKey, *db.Paper]),
		"PaperConnection.edges":    follow(pages, noArgs(keyOfEach(identity[paperPageKey])), "PaperEdge", pageItems[paperPageKey, *db.Paper]),
		"PaperEdge.node":           hop("Paper", noArgs(asObject[*db.Paper])),
	}
}

// pageConnectionSteps are the steps of the fields of the connections
// with only page arguments (co-authors, an institution's researchers).
func pageConnectionSteps() map[string]step {
	coauthorPages := func(l *Loaders) *loader[pageKey, db.Page[*db.CoauthorRow]] { return l.coauthorPages }
	irPages := func(l *Loaders) *loader[pageKey, db.Page[*db.InstitutionResearcherRow]] {
		return l.institutionResearcherPages
	}
	parent := noArgs(keyOfEach(func(k pageKey) int64 { return k.parent }))
	page := noArgs(keyOfEach(identity[pageKey]))
	return map[string]step{
		"CoauthorConnection.totalCount": follow(func(l *Loaders) *loader[int64, int] { return l.coauthorTotals }, parent, "", nil),
		"CoauthorConnection.pageInfo":   follow(coauthorPages, page, "", nil),
		"CoauthorConnection.nodes":      follow(coauthorPages, page, "Coauthor", pageItems[pageKey, *db.CoauthorRow]),
		"CoauthorConnection.edges":      follow(coauthorPages, page, "CoauthorEdge", pageItems[pageKey, *db.CoauthorRow]),
		"CoauthorEdge.node":             hop("Coauthor", noArgs(asObject[*db.CoauthorRow])),
		"Coauthor.researcher":           hop("Researcher", noArgs(func(r *db.CoauthorRow) any { return &r.Researcher })),

		"InstitutionResearcherConnection.totalCount": follow(func(l *Loaders) *loader[int64, int] { return l.institutionResearcherTotals },
			parent, "", nil),
		"InstitutionResearcherConnection.pageInfo": follow(irPages, page, "", nil),
		"InstitutionResearcherConnection.nodes": follow(irPages, page, "Researcher",
			func(out []any, _ pageKey, pg db.Page[*db.InstitutionResearcherRow]) []any {
				for _, r := range pg.Items {
					out = append(out, &r.Researcher)
				}
				return out
			}),
		"InstitutionResearcherConnection.edges": follow(irPages, page, "InstitutionResearcherEdge",
			pageItems[pageKey, *db.InstitutionResearcherRow]),
		"InstitutionResearcherEdge.node": hop("Researcher", noArgs(func(r *db.InstitutionResearcherRow) any { return &r.Researcher })),
	}
}

// followEach is follow for a field that shows of the value it reads a
// part that depends on the parent or on the field's arguments: shows
// makes, from the arguments, the function that appends to out the
// objects of type next that parent p shows of its value v (an error:
// arguments the field's resolver refuses, so nothing is read).
func followEach[P any, K comparable, V any](of func(*Loaders) *loader[K, V], key func(P) (K, bool), next string,
	shows func(args map[string]any) (func(out []any, p P, v V) []any, error)) step {
	read := follow(of, noArgs(key), "", nil).read
	return step{next: next, read: func(ctx context.Context, l *Loaders, parents []any, args map[string]any) ([]any, error) {
		children, err := shows(args)
		if err != nil {
			return nil, nil // the field's resolver reports it
		}
		if _, err := read(ctx, l, parents, args); err != nil {
			return nil, err
		}
		var out []any
		for _, p := range parents {
			if k, ok := key(p.(P)); ok {
				v, err := of(l).load(ctx, k) // cached by read
				if err != nil {
					return nil, err
				}
				out = children(out, p.(P), v)
			}
		}
		return out, nil
	}}
}

// The children a field shows of the rows its loader reads, cut as its
// resolver cuts them (fields.go, model.PaperFacets).
func shownFacets(out []any, _ paperTotalKey, rows []db.CategoryCount) []any {
	return pointers(out, firstN(rows, model.MaxFacets))
}

func primaryOf(out []any, p *db.Paper, cs []db.Category) []any {
	for i := range firstN(cs, paperCategoriesField.most) {
		if cs[i].Code == p.PrimaryCategory {
			return append(out, &cs[i])
		}
	}
	return out
}

// paperConnection is the step of a paper list field of parents of type
// P: the level below is the page each parent's arguments name.
func paperConnection[P any](list db.PaperList, parent func(P) paperParent) step {
	return hop("PaperConnection", func(args map[string]any) (func(P) any, error) {
		a, err := rawPageArgs(paperCursors, args)
		return func(p P) any { return paperPageKey{list: list, parent: parent(p), args: a} }, err
	})
}

// connection is the step of a list field with only page arguments
// (co-authors, an institution's researchers), of type conn.
func connection[P any](list listKind, conn string, id func(P) int64) step {
	return hop(conn, func(args map[string]any) (func(P) any, error) {
		a, err := rawPageArgs(list, args)
		return func(p P) any { return pageKey{parent: id(p), args: a} }, err
	})
}

// implementors are the types a level's fragments may name besides its
// own: the interfaces and unions the type belongs to.
var implementors = map[string][]string{
	"Paper":       {"Paper", "Node", "SuggestTarget"},
	"Researcher":  {"Researcher", "Node", "SuggestTarget"},
	"Institution": {"Institution", "Node", "SuggestTarget"},
	"Category":    {"Category", "SuggestTarget"},
}

// walker walks one operation's selections.
type walker struct {
	l  *Loaders
	op *graphql.OperationContext
	// reached are the fields walked so far, which the plan records once
	// the whole walk has succeeded; unknown is set when the walk met a
	// field that reads through code but has no step, whose resolvers will
	// miss: then the plan records nothing of the walk.
	reached []*ast.Field
	unknown bool
}

// walk reads what sel asks of objs, the objects of one level, of GraphQL
// type typ, and walks the levels below.
func (w *walker) walk(ctx context.Context, typ string, objs []any, sel ast.SelectionSet) error {
	if len(objs) == 0 || len(sel) == 0 {
		return nil
	}
	w.remember(ctx, objs)
	types := implementors[typ]
	if types == nil {
		types = []string{typ}
	}
	fields := graphql.CollectFields(w.op, sel, types)
	// A connection's totalCount comes last: the page read without a
	// cursor counts the list too (see counting), so its total is then
	// cached and costs no statement of its own.
	slices.SortStableFunc(fields, func(a, b graphql.CollectedField) int {
		return cmp.Compare(boolInt(a.Name == "totalCount"), boolInt(b.Name == "totalCount"))
	})
	for _, f := range fields {
		s, ok := lookAheads[typ+"."+f.Name]
		if !ok {
			w.unknown = w.unknown || resolvedFields[typ+"."+f.Name]
			continue
		}
		read := s.read
		if s.readAsking != nil && w.asks(f.Selections, s.next, s.asking) {
			read = s.readAsking
		}
		next, err := read(ctx, w.l, objs, f.ArgumentMap(w.op.Variables))
		if err == nil && s.next != "" {
			err = w.walk(ctx, s.next, next, f.Selections)
		}
		if err != nil {
			return err
		}
		w.reached = append(w.reached, f.Field)
	}
	return nil
}

// asks tells whether sel, a selection on objects of type typ, asks for
// their field name.
func (w *walker) asks(sel ast.SelectionSet, typ, name string) bool {
	for _, f := range graphql.CollectFields(w.op, sel, []string{typ}) {
		if f.Name == name {
			return true
		}
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// remember caches by id the researchers a level holds, read whole by
// whatever statement found them, so that a byline naming one reads it no
// more.
func (w *walker) remember(ctx context.Context, objs []any) {
	for _, o := range objs {
		if r, ok := o.(*db.Researcher); ok {
			w.l.researchers.put(ctx, r.ID, r)
		}
	}
}

// below is the selection found by following a path of (type, field)
// pairs down from sel: below(sel, "A", "x", "B", "y") is what sel asks of
// the y of the B objects of the x of the A objects.
//
// It also returns the fields at the end of the path (none for an empty
// path), whose values are the objects the selection is asked of.
func (w *walker) below(sel ast.SelectionSet, path ...string) (ast.SelectionSet, []*ast.Field) {
	var fields []*ast.Field
	for i := 0; i+1 < len(path); i += 2 {
		var next ast.SelectionSet
		fields = fields[:0]
		for _, f := range graphql.CollectFields(w.op, sel, []string{path[i]}) {
			if f.Name == path[i+1] {
				next = append(next, f.Selections...)
				fields = append(fields, f.Field)
			}
		}
		sel = next
	}
	return sel, fields
}

// walkFrom walks sel below objs, the values of the fields starts, and
// records in the plan what the walk reached once all of it succeeded and
// left no field unread.
func (w *walker) walkFrom(ctx context.Context, typ string, objs []any, sel ast.SelectionSet, starts []*ast.Field) error {
	if err := w.walk(ctx, typ, objs, sel); err != nil {
		return err
	}
	if !w.unknown {
		w.l.plan.record(starts, w.reached)
	}
	return nil
}

// lookAhead walks below objs, objects of GraphQL type typ that the current
// field's value holds at path (type, field pairs from the field's type
// down; none when the value is objs themselves).
func lookAhead[T any](ctx context.Context, typ string, objs []T, path ...string) error {
	if graphql.GetFieldContext(ctx) == nil {
		return nil // outside a field, where there are no loaders either
	}
	return lookAheadWith(ctx, loaders(ctx), typ, objs, path...)
}

// lookAheadWith is lookAhead filling the loaders l rather than the
// request's: a subscription fills those of the answer that will carry
// objs (see stream).
func lookAheadWith[T any](ctx context.Context, l *Loaders, typ string, objs []T, path ...string) error {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || len(objs) == 0 || !lookAheadOn {
		return nil
	}
	w := &walker{l: l, op: graphql.GetOperationContext(ctx)}
	sel, starts := w.below(fc.Field.Selections, path...)
	if len(path) == 0 {
		starts = []*ast.Field{fc.Field.Field}
	}
	return w.walkFrom(ctx, typ, anys(objs), sel, starts)
}

// lookAheadFacets walks below the category facets of the paper list the
// current field returns when its root reads them on its own (searchPapers:
// categories, not a loader): it reads them, as their field would, only
// when the selection asks for them.
func lookAheadFacets(ctx context.Context, categories func(context.Context) ([]db.CategoryCount, error)) error {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !lookAheadOn {
		return nil
	}
	w := &walker{l: loaders(ctx), op: graphql.GetOperationContext(ctx)}
	sel, starts := w.below(fc.Field.Selections, "PaperConnection", "facets", "PaperFacets", "categories")
	if len(sel) == 0 {
		return nil
	}
	rows, err := categories(ctx)
	if err != nil {
		return nil // the field's resolver reports it
	}
	return w.walkFrom(ctx, "CategoryCount", pointers(nil, firstN(rows, model.MaxFacets)), sel, starts)
}

// lookAheadPage walks below the items of a page of a connection of type
// conn that the current field returns: the nodes, and the edges of type
// edge.
func lookAheadPage[T any](ctx context.Context, conn, typ, edge string, items []T) error {
	if err := lookAhead(ctx, typ, items, conn, "nodes"); err != nil {
		return err
	}
	return lookAhead(ctx, edge, items, conn, "edges")
}
