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

// networkOf is the part that the three network fields share: it reads
// the objects of g's nodes through l (those not cached, in one
// statement), makes a node of each found one with node, keeps the edges
// between found ones (their ends global ids of kind), and walks the
// look-ahead below the nodes' objects, of GraphQL type typ, at path. A nil
// g, no such subject, is an empty network.
func networkOf[V, N any](ctx context.Context, g *network.Graph, l *loader[int64, *V], kind string,
	node func(*V, network.Node) N, typ string, path ...string) ([]N, []*model.NetworkEdge, error) {
	nodes, edges := []N{}, []*model.NetworkEdge{}
	if g == nil {
		return nodes, edges, nil
	}
	ids := make([]int64, len(g.Nodes))
	for i, n := range g.Nodes {
		ids[i] = n.ID
	}
	vs, err := l.read(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	found := make(map[int64]bool, len(g.Nodes))
	for i, n := range g.Nodes {
		if vs[i] != nil {
			found[n.ID] = true
			nodes = append(nodes, node(vs[i], n))
		}
	}
	for _, e := range g.Edges {
		if found[e.Source] && found[e.Target] {
			edges = append(edges, &model.NetworkEdge{Source: model.GlobalID(kind, e.Source), Target: model.GlobalID(kind, e.Target), Weight: e.Weight})
		}
	}
	return nodes, edges, lookAhead(ctx, typ, nonNil(vs), path...)
}

func (r *Resolver) researcherNetwork(ctx context.Context, id int64, depth, maxNodes, minWeight *int) (*model.ResearcherNetwork, error) {
	o, err := networkOptions(depth, maxNodes, minWeight)
	if err != nil {
		return nil, err
	}
	g, err := network.Researcher(ctx, r.db, id, o)
	if err != nil {
		return nil, networkError(err)
	}
	nodes, edges, err := networkOf(ctx, g, loaders(ctx).researchers, model.KindResearcher,
		func(x *db.Researcher, n network.Node) *model.ResearcherNetworkNode {
			return &model.ResearcherNetworkNode{Researcher: wrapResearcher(x), Depth: n.Depth, PaperCount: n.PaperCount}
		}, "Researcher", "ResearcherNetwork", "nodes", "ResearcherNetworkNode", "researcher")
	return &model.ResearcherNetwork{Nodes: nodes, Edges: edges, Truncated: g != nil && g.Truncated}, err
}

func (r *Resolver) institutionNetwork(ctx context.Context, id int64, depth, maxNodes, minWeight *int) (*model.InstitutionNetwork, error) {
	o, err := networkOptions(depth, maxNodes, minWeight)
	if err != nil {
		return nil, err
	}
	g, err := network.Institution(ctx, r.db, id, o)
	if err != nil {
		return nil, networkError(err)
	}
	nodes, edges, err := networkOf(ctx, g, loaders(ctx).institutions, model.KindInstitution,
		func(x *db.Institution, n network.Node) *model.InstitutionNetworkNode {
			return &model.InstitutionNetworkNode{Institution: wrapInstitution(x), Depth: n.Depth, PaperCount: n.PaperCount}
		}, "Institution", "InstitutionNetwork", "nodes", "InstitutionNetworkNode", "institution")
	return &model.InstitutionNetwork{Nodes: nodes, Edges: edges, Truncated: g != nil && g.Truncated}, err
}

func (r *Resolver) citationNetwork(ctx context.Context, id int64, depth, maxNodes *int) (*model.CitationNetwork, error) {
	o, err := networkOptions(depth, maxNodes, nil)
	if err != nil {
		return nil, err
	}
	g, err := network.Citations(ctx, r.db, id, o)
	if err != nil {
		return nil, networkError(err)
	}
	nodes, edges, err := networkOf(ctx, g, loaders(ctx).papers, model.KindPaper,
		func(x *db.Paper, n network.Node) *model.CitationNetworkNode {
			return &model.CitationNetworkNode{Paper: wrapPaper(x), Depth: n.Depth}
		}, "Paper", "CitationNetwork", "nodes", "CitationNetworkNode", "paper")
	return &model.CitationNetwork{Nodes: nodes, Edges: edges, Truncated: g != nil && g.Truncated}, err
}

// collaboratorCount is Institution.collaborators' first, checked.
func collaboratorCount(first *int) (int, error) {
	return countArg("first", first, 10, MaxCollaborators)
}

func institutionCollaborators(ctx context.Context, id int64, first *int) ([]*model.InstitutionCollaborator, error) {
	n, err := collaboratorCount(first)
	if err != nil || n == 0 {
		return []*model.InstitutionCollaborator{}, err
	}
	l := loaders(ctx)
	ws, err := l.collaborators.load(ctx, countKey[int64]{parent: id, n: n})
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
		pids = append(pids, firstN(s.PaperIDs, maxStepPapers)...)
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
