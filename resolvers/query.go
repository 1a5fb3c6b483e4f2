package resolvers

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
)

// Root lookups go through the operation's rootLookups (see roots.go):
// whichever runs first reads the references of all of them and primes the
// loaders below; a root the look-ahead did not walk walks its own
// selection.

func (r *Resolver) paper(ctx context.Context, id string) (*model.Paper, error) {
	ps, err := r.papers(ctx, "id", []string{id})
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// papers looks up ids, the argument named arg.
func (r *Resolver) papers(ctx context.Context, arg string, ids []string) ([]*model.Paper, error) {
	refs, err := parsePaperRefs(arg, ids)
	if err != nil {
		return nil, err
	}
	ps, err := lookUp(ctx, r, refs, (*rootLookups).findPapers, "Paper")
	return wrapAll(ps, wrapPaper), err
}

func (r *Resolver) researcherByRef(ctx context.Context, s string) (*model.Researcher, error) {
	ref, err := parseResearcherRef("id", s)
	if err != nil {
		return nil, err
	}
	rs, err := lookUp(ctx, r, []researcherRef{ref}, (*rootLookups).findResearchers, "Researcher")
	if err != nil {
		return nil, err
	}
	return wrapResearcher(rs[0]), nil
}

func (r *Resolver) institutionByRef(ctx context.Context, s string) (*model.Institution, error) {
	ref, err := parseInstitutionRef("id", s)
	if err != nil {
		return nil, err
	}
	is, err := lookUp(ctx, r, []institutionRef{ref}, (*rootLookups).findInstitutions, "Institution")
	if err != nil {
		return nil, err
	}
	return wrapInstitution(is[0]), nil
}

// lookUp finds the objects refs name through the operation's root
// lookups, in order, nil for none, and walks the selection below them,
// objects of GraphQL type typ, unless the root lookups have.
func lookUp[R any, V any](ctx context.Context, r *Resolver, refs []R,
	find func(*rootLookups, context.Context, bun.IDB, *Loaders, []R) ([]*V, error), typ string,
) ([]*V, error) {
	rl, l, err := r.lookups(ctx)
	if err != nil {
		return nil, err
	}
	vs, err := find(rl, ctx, r.db, l, refs)
	if err != nil || rl.walkedBelow(ctx) {
		return vs, err
	}
	return vs, lookAhead(ctx, typ, nonNil(vs))
}

func (r *Resolver) category(ctx context.Context, code string) (*db.Category, error) {
	if err := checkText("code", code, codeText); err != nil {
		return nil, err
	}
	rl, _, err := r.lookups(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := rl.findCategories(ctx, r.db, []string{code})
	if err != nil {
		return nil, err
	}
	if rl.walkedBelow(ctx) {
		return cs[0], nil
	}
	return cs[0], lookAhead(ctx, "Category", nonNil(cs))
}

func (r *Resolver) node(ctx context.Context, id string) (model.Node, error) {
	ns, err := r.nodes(ctx, "id", []string{id})
	if err != nil {
		return nil, err
	}
	return ns[0], nil
}

// nodes looks up ids, the argument named arg.
func (r *Resolver) nodes(ctx context.Context, arg string, ids []string) ([]model.Node, error) {
	keys, err := parseNodeIDs(arg, ids)
	if err != nil {
		return nil, err
	}
	prefs, rrefs, irefs := nodeRefs(keys)
	ps, err := lookUp(ctx, r, prefs, (*rootLookups).findPapers, "Paper")
	if err != nil {
		return nil, err
	}
	rs, err := lookUp(ctx, r, rrefs, (*rootLookups).findResearchers, "Researcher")
	if err != nil {
		return nil, err
	}
	is, err := lookUp(ctx, r, irefs, (*rootLookups).findInstitutions, "Institution")
	if err != nil {
		return nil, err
	}
	out := make([]model.Node, len(keys))
	for i, k := range keys {
		// A typed nil in an interface would not read as null, so only
		// found objects are stored.
		switch k.kind {
		case model.KindPaper:
			if ps[0] != nil {
				out[i] = wrapPaper(ps[0])
			}
			ps = ps[1:]
		case model.KindResearcher:
			if rs[0] != nil {
				out[i] = wrapResearcher(rs[0])
			}
			rs = rs[1:]
		case model.KindInstitution:
			if is[0] != nil {
				out[i] = wrapInstitution(is[0])
			}
			is = is[1:]
		}
	}
	return out, nil
}

// found reads keys through l without waiting and returns the rows found.
func found[V any](ctx context.Context, l *loader[int64, *V], keys []int64) ([]*V, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	vs, err := l.read(ctx, keys)
	return nonNil(vs), err
}

// nonNil is xs without its nils.
func nonNil[T any](xs []*T) []*T {
	out := xs[:0:0]
	for _, x := range xs {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}
