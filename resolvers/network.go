package resolvers

import (
	"context"
	"errors"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/network"
)

// MaxCollaborators is the most institutions Institution.collaborators
// returns.
const MaxCollaborators = 100

// networkOptions are the options of a network field, those left out
// taken from network.DefaultOptions, checked.
func networkOptions(depth, maxNodes, minWeight *int) (network.Options, error) {
	o := network.DefaultOptions
	for _, a := range []struct{ arg, v *int }{{depth, &o.Depth}, {maxNodes, &o.MaxNodes}, {minWeight, &o.MinWeight}} {
		if a.arg != nil {
			*a.v = *a.arg
		}
	}
	return o, networkError(o.Validate())
}

// networkError is err as the client sees it: an argument out of range is
// BAD_USER_INPUT naming the argument, a path search that gave up is
// PATH_SEARCH_LIMIT, anything else is left to ErrorPresenter.
func networkError(err error) error {
	var ae *network.ArgError
	switch {
	case errors.As(err, &ae):
		return badInput(ae.Arg, "%s", ae.Msg)
	case errors.Is(err, network.ErrPathBudget):
		return &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": CodePathSearchLimit}}
	}
	return err
}

// networkNodes reads the objects of g's nodes through l, those not cached
// in one statement, and returns them in node order; a node whose object
// is gone is nil.
func networkNodes[V any](ctx context.Context, l *loader[int64, *V], g *network.Graph) ([]*V, error) {
	ids := make([]int64, len(g.Nodes))
	for i, n := range g.Nodes {
		ids[i] = n.ID
	}
	return l.read(ctx, ids)
}

// networkEdges are g's edges between nodes with an object (present[i] for
// g.Nodes[i]), their ends as global ids of kind.
func networkEdges(g *network.Graph, present []bool, kind string) []*model.NetworkEdge {
	ok := make(map[int64]bool, len(g.Nodes))
	for i, n := range g.Nodes {
		ok[n.ID] = present[i]
	}
	out := []*model.NetworkEdge{}
	for _, e := range g.Edges {
		if ok[e.Source] && ok[e.Target] {
			out = append(out, &model.NetworkEdge{Source: model.GlobalID(kind, e.Source), Target: model.GlobalID(kind, e.Target), Weight: e.Weight})
		}
	}
	return out
}

// present reports which of xs are not nil.
func present[T any](xs []*T) []bool {
	out := make([]bool, len(xs))
	for i, x := range xs {
		out[i] = x != nil
	}
	return out
}

func (r *Resolver) researcherNetwork(ctx context.Context, id int64, depth, maxNodes, minWeight *int) (*model.ResearcherNetwork, error) {
	o, err := networkOptions(depth, maxNodes, minWeight)
	if err != nil {
		return nil, err
	}
	g, err := network.Researcher(ctx, r.db, id, o)
	if err != nil || g == nil {
		return &model.ResearcherNetwork{Nodes: []*model.ResearcherNetworkNode{}, Edges: []*model.NetworkEdge{}}, networkError(err)
	}
	l := loaders(ctx)
	rs, err := networkNodes(ctx, l.researchers, g)
	if err != nil {
		return nil, err
	}
	out := &model.ResearcherNetwork{Nodes: []*model.ResearcherNetworkNode{}, Edges: networkEdges(g, present(rs), model.KindResearcher), Truncated: g.Truncated}
	for i, n := range g.Nodes {
		if rs[i] != nil {
			out.Nodes = append(out.Nodes, &model.ResearcherNetworkNode{Researcher: wrapResearcher(rs[i]), Depth: n.Depth, PaperCount: n.PaperCount})
		}
	}
	return out, lookAhead(ctx, "Researcher", nonNil(rs), "ResearcherNetwork", "nodes", "ResearcherNetworkNode", "researcher")
}

func (r *Resolver) institutionNetwork(ctx context.Context, id int64, depth, maxNodes, minWeight *int) (*model.InstitutionNetwork, error) {
	o, err := networkOptions(depth, maxNodes, minWeight)
	if err != nil {
		return nil, err
	}
	g, err := network.Institution(ctx, r.db, id, o)
	if err != nil || g == nil {
		return &model.InstitutionNetwork{Nodes: []*model.InstitutionNetworkNode{}, Edges: []*model.NetworkEdge{}}, networkError(err)
	}
	l := loaders(ctx)
	is, err := networkNodes(ctx, l.institutions, g)
	if err != nil {
		return nil, err
	}
	out := &model.InstitutionNetwork{Nodes: []*model.InstitutionNetworkNode{}, Edges: networkEdges(g, present(is), model.KindInstitution), Truncated: g.Truncated}
	for i, n := range g.Nodes {
		if is[i] != nil {
			out.Nodes = append(out.Nodes, &model.InstitutionNetworkNode{Institution: wrapInstitution(is[i]), Depth: n.Depth, PaperCount: n.PaperCount})
		}
	}
	return out, lookAhead(ctx, "Institution", nonNil(is), "InstitutionNetwork", "nodes", "InstitutionNetworkNode", "institution")
}

func (r *Resolver) citationNetwork(ctx context.Context, id int64, depth, maxNodes *int) (*model.CitationNetwork, error) {
	o, err := networkOptions(depth, maxNodes, nil)
	if err != nil {
		return nil, err
	}
	g, err := network.Citations(ctx, r.db, id, o)
	if err != nil || g == nil {
		return &model.CitationNetwork{Nodes: []*model.CitationNetworkNode{}, Edges: []*model.NetworkEdge{}}, networkError(err)
	}
	l := loaders(ctx)
	ps, err := networkNodes(ctx, l.papers, g)
	if err != nil {
		return nil, err
	}
	out := &model.CitationNetwork{Nodes: []*model.CitationNetworkNode{}, Edges: networkEdges(g, present(ps), model.KindPaper), Truncated: g.Truncated}
	for i, n := range g.Nodes {
		if ps[i] != nil {
			out.Nodes = append(out.Nodes, &model.CitationNetworkNode{Paper: wrapPaper(ps[i]), Depth: n.Depth})
		}
	}
	return out, lookAhead(ctx, "Paper", nonNil(ps), "CitationNetwork", "nodes", "CitationNetworkNode", "paper")
}

// collaboratorKey names the first n collaborators of an institution.
type collaboratorKey struct {
	institution int64
	n           int
}

// collaboratorCount is Institution.collaborators' first, checked.
func collaboratorCount(first *int) (int, error) {
	n := 10
	if first != nil {
		n = *first
	}
	if n < 1 || n > MaxCollaborators {
		return 0, badInput("first", "must be between 1 and %d, got %d", MaxCollaborators, n)
	}
	return n, nil
}

func institutionCollaborators(ctx context.Context, id int64, first *int) ([]*model.InstitutionCollaborator, error) {
	n, err := collaboratorCount(first)
	if err != nil {
		return nil, err
	}
	l := loaders(ctx)
	ws, err := l.collaborators.load(ctx, collaboratorKey{institution: id, n: n})
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	is, err := l.institutions.loadMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := []*model.InstitutionCollaborator{}
	for i, w := range ws {
		if is[i] != nil {
			out = append(out, &model.InstitutionCollaborator{Institution: wrapInstitution(is[i]), SharedPaperCount: w.Weight})
		}
	}
	return out, nil
}

// researcherID resolves a reference in any form `researcher(id:)` takes
// (a statement for an external id) to an id, or to -1, which names
// nobody, when no researcher has the external id; arg names the argument
// in the error.
func (r *Resolver) researcherID(ctx context.Context, arg, s string) (int64, error) {
	ref, err := parseResearcherRef(arg, s)
	if err != nil || ref.id != 0 {
		return ref.id, err
	}
	x, err := db.ResearcherByExternalID(ctx, r.db, ref.column, ref.value)
	return foundID(x, func(x *db.Researcher) int64 { return x.ID }), err
}

// institutionID resolves a reference in any form `institution(ref:)`
// takes (a statement for a ROR id or a name) to an id, or to -1, which
// names nothing, when no institution has it; arg names the argument in
// the error.
func (r *Resolver) institutionID(ctx context.Context, arg, s string) (int64, error) {
	ref, err := parseInstitutionRef(arg, s)
	if err != nil || ref.id != 0 {
		return ref.id, err
	}
	x, err := db.InstitutionByRef(ctx, r.db, ref.InstitutionRef)
	return foundID(x, func(x *db.Institution) int64 { return x.ID }), err
}

func (r *Resolver) collaborationPath(ctx context.Context, from, to string, maxDepth *int) (*model.CollaborationPath, error) {
	depth := network.DefaultPathDepth
	if maxDepth != nil {
		depth = *maxDepth
	}
	fromID, err := r.researcherID(ctx, "from", from)
	if err != nil {
		return nil, err
	}
	toID, err := r.researcherID(ctx, "to", to)
	if err != nil {
		return nil, err
	}
	steps, err := network.Path(ctx, r.db, fromID, toID, depth)
	if err != nil || steps == nil {
		return nil, networkError(err)
	}
	rids := make([]int64, len(steps))
	var pids []int64
	for i, s := range steps {
		rids[i] = s.ResearcherID
		pids = append(pids, s.PaperIDs...)
	}
	l := loaders(ctx)
	rs, err := found(ctx, l.researchers, rids)
	if err != nil {
		return nil, err
	}
	if len(rs) != len(steps) {
		return nil, nil // a path from an unknown researcher to themself
	}
	ps, err := found(ctx, l.papers, pids)
	if err != nil {
		return nil, err
	}
	out := &model.CollaborationPath{Length: len(steps) - 1, Steps: make([]*model.CollaborationStep, len(steps))}
	for i, s := range steps {
		st := &model.CollaborationStep{Researcher: wrapResearcher(rs[i]), Papers: []*model.Paper{}}
		for _, id := range firstN(s.PaperIDs, maxStepPapers) {
			if p, _ := l.papers.load(ctx, id); p != nil {
				st.Papers = append(st.Papers, wrapPaper(p))
			}
		}
		out.Steps[i] = st
	}
	if err := lookAhead(ctx, "Researcher", rs, "CollaborationPath", "steps", "CollaborationStep", "researcher"); err != nil {
		return nil, err
	}
	return out, lookAhead(ctx, "Paper", ps, "CollaborationPath", "steps", "CollaborationStep", "papers")
}
