package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/db"
)

// The prefetcher makes the statement count of a query depend on its depth,
// not on its width. A root resolver hands it what it found and the
// selection below; the prefetcher walks that selection one level at a
// time, reads every relation the level asks for with one statement for all
// the level's objects, and primes the loaders. The field resolvers below
// then find everything cached: they wait on no dataloader timer and send
// no statement of their own. A shape the walk does not know still works;
// its resolvers miss the cache and batch through the loaders as usual.

// lookAhead switches the prefetcher on; the benchmarks switch it off to
// record what it saves (BenchmarkContractQuery/lookahead=off).
var lookAhead = true

type prefetcher struct {
	l  *Loaders
	op *graphql.OperationContext
}

var (
	paperTypes       = []string{"Paper", "Node"}
	researcherTypes  = []string{"Researcher", "Node"}
	institutionTypes = []string{"Institution", "Node"}
)

// prefetchBelow walks the current field's selection for its result objs.
func prefetchBelow[T any](ctx context.Context, l *Loaders, objs []T, walk func(*prefetcher, context.Context, []T, ast.SelectionSet) error) error {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || len(objs) == 0 || !lookAhead {
		return nil
	}
	p := &prefetcher{l: l, op: graphql.GetOperationContext(ctx)}
	return walk(p, ctx, objs, fc.Field.Selections)
}

func (p *prefetcher) fields(sel ast.SelectionSet, types ...string) []graphql.CollectedField {
	return graphql.CollectFields(p.op, sel, types)
}

// values returns the cached values of keys; call it after prime.
func values[K comparable, V any](ctx context.Context, l *loader[K, V], keys []K) ([]V, error) {
	out := make([]V, 0, len(keys))
	for _, k := range keys {
		v, err := l.load(ctx, k)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (p *prefetcher) papers(ctx context.Context, ps []*db.Paper, sel ast.SelectionSet) error {
	if len(ps) == 0 {
		return nil
	}
	ids := make([]int64, len(ps))
	for i, x := range ps {
		ids[i] = x.ID
	}
	for _, f := range p.fields(sel, paperTypes...) {
		var err error
		switch f.Name {
		case "authors":
			err = p.authors(ctx, ids, f)
		case "categories", "primaryCategory":
			err = p.l.categories.prime(ctx, ids)
		case "abstract", "byline", "comments", "journalRef", "reportNo", "license":
			err = p.fullPapers(ctx, ps)
		case "citations":
			err = p.paperList(ctx, db.Citations, ids, f)
		case "references":
			err = p.paperList(ctx, db.References, ids, f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fullPapers reads the whole rows of the papers of list pages among ps.
func (p *prefetcher) fullPapers(ctx context.Context, ps []*db.Paper) error {
	var ids []int64
	for _, x := range ps {
		if x.Partial {
			ids = append(ids, x.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return p.l.papers.prime(ctx, ids)
}

func (p *prefetcher) authors(ctx context.Context, paperIDs []int64, field graphql.CollectedField) error {
	args := intArgs(field.ArgumentMap(p.op.Variables), "first", "after")
	w, err := authorWindow(args[0], args[1])
	if err != nil {
		return nil // the field's resolver reports it
	}
	keys := make([]bylineKey, len(paperIDs))
	for i, id := range paperIDs {
		keys[i] = bylineKey{paper: id, window: w}
	}
	if err := p.l.authorships.prime(ctx, keys); err != nil {
		return err
	}
	lists, err := values(ctx, p.l.authorships, keys)
	if err != nil {
		return err
	}
	for _, f := range p.fields(field.Selections, "Authorship") {
		switch f.Name {
		case "researcher":
			var rids []int64
			for _, as := range lists {
				for _, a := range as {
					if a.ResearcherID != 0 {
						rids = append(rids, a.ResearcherID)
					}
				}
			}
			if err := p.researchersByID(ctx, rids, f.Selections); err != nil {
				return err
			}
		case "affiliations", "institutions":
			if err := p.l.affiliations.prime(ctx, keys); err != nil {
				return err
			}
			if f.Name == "institutions" {
				affs, err := values(ctx, p.l.affiliations, keys)
				if err != nil {
					return err
				}
				var insts []*db.Institution
				for _, as := range affs {
					for _, a := range as {
						if a.Institution != nil {
							insts = append(insts, a.Institution)
						}
					}
				}
				if err := p.institutions(ctx, insts, f.Selections); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (p *prefetcher) researchersByID(ctx context.Context, ids []int64, sel ast.SelectionSet) error {
	if err := p.l.researchers.prime(ctx, ids); err != nil {
		return err
	}
	rs, err := values(ctx, p.l.researchers, ids)
	if err != nil {
		return err
	}
	return p.researchers(ctx, rs, sel)
}

// researchers walks below researchers; rs may hold nils and repeats.
func (p *prefetcher) researchers(ctx context.Context, rs []*db.Researcher, sel ast.SelectionSet) error {
	var ids []int64
	seen := map[int64]bool{}
	for _, r := range rs {
		if r != nil && !seen[r.ID] {
			seen[r.ID] = true
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	for _, f := range p.fields(sel, researcherTypes...) {
		var err error
		switch f.Name {
		case "fields":
			err = p.l.fields.prime(ctx, ids)
		case "sameName":
			err = p.sameName(ctx, ids, f)
		case "mostCitedPaper":
			err = p.mostCited(ctx, rs, f.Selections)
		case "papers":
			err = p.paperList(ctx, db.ResearcherPapers, ids, f)
		case "coauthors":
			err = p.coauthors(ctx, ids, f)
		case "institutions":
			err = p.researcherInstitutions(ctx, ids, f.Selections)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *prefetcher) sameName(ctx context.Context, ids []int64, f graphql.CollectedField) error {
	n, err := countArg("first", intArgs(f.ArgumentMap(p.op.Variables), "first")[0], DefaultSameName, MaxSameName)
	if err != nil {
		return nil // the field's resolver reports it
	}
	keys := make([]countKey, len(ids))
	for i, id := range ids {
		keys[i] = countKey{parent: id, n: n}
	}
	if err := p.l.sameName.prime(ctx, keys); err != nil {
		return err
	}
	sel := f.Selections
	lists, err := values(ctx, p.l.sameName, keys)
	if err != nil {
		return err
	}
	var others []*db.Researcher
	for _, rs := range lists {
		for _, r := range rs {
			p.l.researchers.Prime(ctx, r.ID, r)
			others = append(others, r)
		}
	}
	return p.researchers(ctx, others, sel)
}

func (p *prefetcher) mostCited(ctx context.Context, rs []*db.Researcher, sel ast.SelectionSet) error {
	var ids []int64
	for _, r := range rs {
		if r != nil && r.MostCitedPaperID != 0 {
			ids = append(ids, r.MostCitedPaperID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := p.l.papers.prime(ctx, ids); err != nil {
		return err
	}
	ps, err := values(ctx, p.l.papers, ids)
	if err != nil {
		return err
	}
	return p.papers(ctx, nonNil(ps), sel)
}

func (p *prefetcher) researcherInstitutions(ctx context.Context, ids []int64, sel ast.SelectionSet) error {
	if err := p.l.researcherInstitutions.prime(ctx, ids); err != nil {
		return err
	}
	lists, err := values(ctx, p.l.researcherInstitutions, ids)
	if err != nil {
		return err
	}
	var insts []*db.Institution
	for _, is := range lists {
		insts = append(insts, is...)
	}
	return p.institutions(ctx, insts, sel)
}

// institutions walks below institutions; is may hold repeats.
func (p *prefetcher) institutions(ctx context.Context, is []*db.Institution, sel ast.SelectionSet) error {
	ids := make([]int64, 0, len(is))
	seen := make(map[int64]bool, len(is))
	for _, x := range is {
		if !seen[x.ID] {
			seen[x.ID] = true
			ids = append(ids, x.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	for _, f := range p.fields(sel, institutionTypes...) {
		var err error
		switch f.Name {
		case "names", "aliases", "acronyms":
			err = p.l.institutionNames.prime(ctx, ids)
		case "papers":
			err = p.paperList(ctx, db.InstitutionPapers, ids, f)
		case "researchers":
			err = p.institutionResearchers(ctx, ids, f)
		case "collaborators":
			err = p.collaborators(ctx, ids, f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// connection reports what a connection field asks for: the page (edges,
// nodes or pageInfo), the selection below its items, and the total.
func (p *prefetcher) connection(f graphql.CollectedField, conn, edge string) (page bool, items ast.SelectionSet, total bool) {
	for _, c := range p.fields(f.Selections, conn) {
		switch c.Name {
		case "nodes":
			page = true
			items = append(items, c.Selections...)
		case "edges":
			page = true
			for _, e := range p.fields(c.Selections, edge) {
				if e.Name == "node" {
					items = append(items, e.Selections...)
				}
			}
		case "pageInfo":
			page = true
		case "totalCount":
			total = true
		}
	}
	return page, items, total
}

func (p *prefetcher) paperList(ctx context.Context, list db.PaperList, parents []int64, f graphql.CollectedField) error {
	args, err := rawPageArgs(paperLists, f.ArgumentMap(p.op.Variables))
	if err != nil {
		return nil // the field's resolver reports it
	}
	page, items, total := p.connection(f, "PaperConnection", "PaperEdge")
	listKeys := make([]paperTotalKey[int64], len(parents))
	for i, id := range parents {
		listKeys[i] = paperTotalKey[int64]{list: list, parent: id, category: args.Category}
	}
	for _, c := range p.fields(p.below(f.Selections, "PaperConnection", "facets"), "PaperFacets") {
		switch c.Name {
		case "categories":
			err = p.l.paperLists.categoryFacets.prime(ctx, listKeys)
		case "years":
			err = p.l.paperLists.yearFacets.prime(ctx, listKeys)
		}
		if err != nil {
			return err
		}
	}
	if total {
		if err := p.l.paperLists.totals.prime(ctx, listKeys); err != nil {
			return err
		}
	}
	if !page {
		return nil
	}
	keys := make([]paperPageKey[int64], len(parents))
	for i, id := range parents {
		keys[i] = paperPageKey[int64]{list: list, parent: id, args: args}
	}
	if err := p.l.paperLists.pages.prime(ctx, keys); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	pages, err := values(ctx, p.l.paperLists.pages, keys)
	if err != nil {
		return err
	}
	var ps []*db.Paper
	seen := map[int64]bool{}
	for _, pg := range pages {
		for _, x := range pg.Items {
			if !seen[x.ID] {
				seen[x.ID] = true
				ps = append(ps, x)
			}
		}
	}
	return p.papers(ctx, ps, items)
}

// primePages primes the total and the page of each parent that a
// connection field f with only page arguments asks for. It returns the
// keys of the pages, none when no page is asked for, and the selection
// below the items.
func primePages[T any](ctx context.Context, p *prefetcher, list listKind, pages *loader[pageKey, db.Page[T]], totals *loader[int64, int], parents []int64, f graphql.CollectedField, conn, edge string) ([]pageKey, ast.SelectionSet, error) {
	args, err := rawPageArgs(list, f.ArgumentMap(p.op.Variables))
	if err != nil {
		return nil, nil, nil // the field's resolver reports it
	}
	page, items, total := p.connection(f, conn, edge)
	if total {
		if err := totals.prime(ctx, parents); err != nil {
			return nil, nil, err
		}
	}
	if !page {
		return nil, nil, nil
	}
	keys := make([]pageKey, len(parents))
	for i, id := range parents {
		keys[i] = pageKey{parent: id, args: args}
	}
	return keys, items, pages.prime(ctx, keys)
}

func (p *prefetcher) coauthors(ctx context.Context, parents []int64, f graphql.CollectedField) error {
	keys, items, err := primePages(ctx, p, coauthorLists, p.l.coauthorPages, p.l.coauthorTotals, parents, f, "CoauthorConnection", "CoauthorEdge")
	if err != nil || len(keys) == 0 {
		return err
	}
	var rsel ast.SelectionSet
	for _, c := range p.fields(items, "Coauthor") {
		if c.Name == "researcher" {
			rsel = append(rsel, c.Selections...)
		}
	}
	if len(rsel) == 0 {
		return nil
	}
	rs, err := pageResearchers(ctx, p, p.l.coauthorPages, keys, func(r *db.CoauthorRow) *db.Researcher { return &r.Researcher })
	if err != nil {
		return err
	}
	return p.researchers(ctx, rs, rsel)
}

// pageResearchers reads the pages of researcher rows at keys from their
// loader, primes the researcher loader with every row, and returns them.
func pageResearchers[R any](ctx context.Context, p *prefetcher, pages *loader[pageKey, db.Page[*R]], keys []pageKey,
	researcher func(*R) *db.Researcher) ([]*db.Researcher, error) {
	pgs, err := values(ctx, pages, keys)
	if err != nil {
		return nil, err
	}
	var rs []*db.Researcher
	for _, pg := range pgs {
		for _, row := range pg.Items {
			r := researcher(row)
			p.l.researchers.Prime(ctx, r.ID, r)
			rs = append(rs, r)
		}
	}
	return rs, nil
}

func (p *prefetcher) institutionResearchers(ctx context.Context, parents []int64, f graphql.CollectedField) error {
	keys, items, err := primePages(ctx, p, institutionResearcherLists, p.l.institutionResearcherPages, p.l.institutionResearcherTotals,
		parents, f, "InstitutionResearcherConnection", "InstitutionResearcherEdge")
	if err != nil || len(keys) == 0 || len(items) == 0 {
		return err
	}
	rs, err := pageResearchers(ctx, p, p.l.institutionResearcherPages, keys,
		func(r *db.InstitutionResearcherRow) *db.Researcher { return &r.Researcher })
	if err != nil {
		return err
	}
	return p.researchers(ctx, rs, items)
}

func (p *prefetcher) collaborators(ctx context.Context, parents []int64, f graphql.CollectedField) error {
	var first *int
	if v := f.ArgumentMap(p.op.Variables)["first"]; v != nil {
		n, err := graphql.UnmarshalInt(v)
		if err != nil {
			return nil // the field's resolver reports it
		}
		first = &n
	}
	n, err := collaboratorCount(first)
	if err != nil {
		return nil // the field's resolver reports it
	}
	keys := make([]collaboratorKey, len(parents))
	for i, id := range parents {
		keys[i] = collaboratorKey{institution: id, n: n}
	}
	if err := p.l.collaborators.prime(ctx, keys); err != nil {
		return err
	}
	lists, err := values(ctx, p.l.collaborators, keys)
	if err != nil {
		return err
	}
	var ids []int64
	for _, ws := range lists {
		for _, w := range ws {
			ids = append(ids, w.ID)
		}
	}
	is, err := primed(ctx, p.l.institutions, ids)
	if err != nil {
		return err
	}
	return p.institutions(ctx, is, p.below(f.Selections, "InstitutionCollaborator", "institution"))
}

// below is the selection found by following a path of (type, field)
// pairs down from sel: below(sel, "A", "x", "B", "y") is what sel asks of
// the y of the B objects of the x of the A objects.
func (p *prefetcher) below(sel ast.SelectionSet, path ...string) ast.SelectionSet {
	for i := 0; i+1 < len(path); i += 2 {
		var next ast.SelectionSet
		for _, f := range p.fields(sel, path[i]) {
			if f.Name == path[i+1] {
				next = append(next, f.Selections...)
			}
		}
		sel = next
	}
	return sel
}

func nonNil[T any](xs []*T) []*T {
	out := xs[:0:0]
	for _, x := range xs {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

// items is the selection below the items of a connection, given the
// connection's own selection.
func (p *prefetcher) items(sel ast.SelectionSet, conn, edge string) ast.SelectionSet {
	_, items, _ := p.connection(graphql.CollectedField{Selections: sel}, conn, edge)
	return items
}

// paperPage walks below the papers of a page of a paper connection whose
// selection is sel.
func (p *prefetcher) paperPage(ctx context.Context, ps []*db.Paper, sel ast.SelectionSet) error {
	return p.papers(ctx, ps, p.items(sel, "PaperConnection", "PaperEdge"))
}
