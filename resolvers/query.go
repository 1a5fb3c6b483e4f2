package resolvers

import (
	"context"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
)

// Root lookups read their objects directly (no loader wait), prime the
// loaders with them and hand them to the prefetcher with the selection
// below.

func (r *Resolver) paper(ctx context.Context, id string) (*model.Paper, error) {
	ps, err := r.papers(ctx, "id", []string{id})
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// papers looks up ids, the argument named arg.
func (r *Resolver) papers(ctx context.Context, arg string, ids []string) ([]*model.Paper, error) {
	if len(ids) > MaxIDs {
		return nil, badInput(arg, "at most %d ids, got %d", MaxIDs, len(ids))
	}
	refs := make([]paperRef, len(ids))
	var arxivIDs, dois []string
	for i, s := range ids {
		ref, err := parsePaperRef(arg, s)
		if err != nil {
			return nil, err
		}
		refs[i] = ref
		if ref.arxivID != "" {
			arxivIDs = append(arxivIDs, ref.arxivID)
		} else {
			dois = append(dois, ref.doi)
		}
	}
	byArxiv, byDOI, err := db.PapersByRefs(ctx, r.db, arxivIDs, dois)
	if err != nil {
		return nil, err
	}
	l := loaders(ctx)
	found := make([]*db.Paper, len(refs))
	out := make([]*model.Paper, len(refs))
	for i, ref := range refs {
		p := byArxiv[ref.arxivID]
		if ref.arxivID == "" {
			p = byDOI[ref.doi]
		}
		if p != nil {
			l.papers.Prime(ctx, p.ID, p)
		}
		found[i], out[i] = p, wrapPaper(p)
	}
	return out, prefetchBelow(ctx, l, nonNil(found), (*prefetcher).papers)
}

func (r *Resolver) researcherByRef(ctx context.Context, s string) (*model.Researcher, error) {
	ref, err := parseResearcherRef("id", s)
	if err != nil {
		return nil, err
	}
	l := loaders(ctx)
	var x *db.Researcher
	if ref.id != 0 {
		err = l.researchers.prime(ctx, []int64{ref.id})
		if err == nil {
			x, err = l.researchers.load(ctx, ref.id)
		}
	} else if x, err = db.ResearcherByExternalID(ctx, r.db, ref.column, ref.value); x != nil {
		l.researchers.Prime(ctx, x.ID, x)
	}
	if err != nil || x == nil {
		return nil, err
	}
	return wrapResearcher(x), prefetchBelow(ctx, l, []*db.Researcher{x}, (*prefetcher).researchers)
}

func (r *Resolver) institutionByRef(ctx context.Context, s string) (*model.Institution, error) {
	ref, err := parseInstitutionRef("ref", s)
	if err != nil {
		return nil, err
	}
	l := loaders(ctx)
	var x *db.Institution
	if ref.id != 0 {
		err = l.institutions.prime(ctx, []int64{ref.id})
		if err == nil {
			x, err = l.institutions.load(ctx, ref.id)
		}
	} else {
		x, err = db.InstitutionByRef(ctx, r.db, ref.ror, ref.nameKey, ref.acronym)
	}
	if err != nil || x == nil {
		return nil, err
	}
	return wrapInstitution(x), prefetchBelow(ctx, l, []*db.Institution{x}, (*prefetcher).institutions)
}

func (r *Resolver) category(ctx context.Context, code string) (*db.Category, error) {
	if err := checkText("code", code, codeText); err != nil {
		return nil, err
	}
	cats, err := db.CategoriesByCodes(ctx, r.db, []string{code})
	return cats[code], err
}

func (r *Resolver) node(ctx context.Context, id string) (model.Node, error) {
	ns, err := r.nodes(ctx, "id", []string{id})
	if err != nil {
		return nil, err
	}
	return ns[0], nil
}

// nodes looks up ids, the argument named arg, with one statement per
// kind.
func (r *Resolver) nodes(ctx context.Context, arg string, ids []string) ([]model.Node, error) {
	if len(ids) > MaxIDs {
		return nil, badInput(arg, "at most %d ids, got %d", MaxIDs, len(ids))
	}
	kinds := make([]string, len(ids))
	keys := make([]int64, len(ids))
	byKind := map[string][]int64{}
	for i, s := range ids {
		if err := checkText(arg, s, idText); err != nil {
			return nil, err
		}
		kind, key, ok := model.ParseGlobalID(s)
		if !ok {
			return nil, badInput(arg, "not a global id: %s", QuoteInput(s))
		}
		kinds[i], keys[i] = kind, key
		byKind[kind] = append(byKind[kind], key)
	}
	l := loaders(ctx)
	ps, err := primed(ctx, l.papers, byKind[model.KindPaper])
	if err != nil {
		return nil, err
	}
	rs, err := primed(ctx, l.researchers, byKind[model.KindResearcher])
	if err != nil {
		return nil, err
	}
	is, err := primed(ctx, l.institutions, byKind[model.KindInstitution])
	if err != nil {
		return nil, err
	}
	for _, err := range []error{
		prefetchBelow(ctx, l, ps, (*prefetcher).papers),
		prefetchBelow(ctx, l, rs, (*prefetcher).researchers),
		prefetchBelow(ctx, l, is, (*prefetcher).institutions),
	} {
		if err != nil {
			return nil, err
		}
	}
	out := make([]model.Node, len(ids))
	for i, key := range keys {
		// A typed nil in an interface would not read as null, so only
		// found objects are stored.
		switch kinds[i] {
		case model.KindPaper:
			if p, _ := l.papers.load(ctx, key); p != nil {
				out[i] = wrapPaper(p)
			}
		case model.KindResearcher:
			if x, _ := l.researchers.load(ctx, key); x != nil {
				out[i] = wrapResearcher(x)
			}
		case model.KindInstitution:
			if x, _ := l.institutions.load(ctx, key); x != nil {
				out[i] = wrapInstitution(x)
			}
		}
	}
	return out, nil
}

// primed reads keys through l without waiting and returns the rows found.
func primed[V any](ctx context.Context, l *loader[int64, *V], keys []int64) ([]*V, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if err := l.prime(ctx, keys); err != nil {
		return nil, err
	}
	vs, err := values(ctx, l, keys)
	return nonNil(vs), err
}
