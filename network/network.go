// Package network reads the graphs around one researcher, institution or
// paper: ego co-author networks, co-affiliation networks, citation
// neighbourhoods and shortest collaboration paths. It only reads the
// database; the API and the file exports present what it returns.
//
// Every function sends a number of statements bounded by its arguments
// (the depth asked for), never by the number of nodes it meets.
package network

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// Bounds and defaults of Options.
const (
	MaxDepth    = 3
	MaxNodesCap = 2000
	// EdgesPerNode bounds a graph's edges: at most this many times its
	// nodes, the strongest kept, so that a dense neighbourhood cannot
	// make an answer of millions of edges.
	EdgesPerNode = 20
)

// DefaultOptions are the options callers use for arguments left out.
var DefaultOptions = Options{Depth: 1, MaxNodes: 100, MinWeight: 1}

// Options bound a network around one centre.
type Options struct {
	// Depth is how many hops from the centre the network reaches, 1 to
	// MaxDepth.
	Depth int
	// MaxNodes caps the nodes returned, the centre included, 1 to
	// MaxNodesCap. When it cuts, nodes nearer the centre are kept first,
	// then those with the strongest ties to the layer before theirs.
	MaxNodes int
	// MinWeight drops ties weaker than it (fewer shared papers), both
	// when walking out from the centre and among the returned nodes.
	MinWeight int
}

// ArgError is an argument out of range. Arg is the argument's name as the
// API spells it.
type ArgError struct{ Arg, Msg string }

func (e *ArgError) Error() string { return e.Arg + ": " + e.Msg }

// Validate returns an *ArgError for the first option out of range.
func (o Options) Validate() error {
	switch {
	case o.Depth < 1 || o.Depth > MaxDepth:
		return &ArgError{"depth", fmt.Sprintf("must be between 1 and %d, got %d", MaxDepth, o.Depth)}
	case o.MaxNodes < 1 || o.MaxNodes > MaxNodesCap:
		return &ArgError{"maxNodes", fmt.Sprintf("must be between 1 and %d, got %d", MaxNodesCap, o.MaxNodes)}
	case o.MinWeight < 1:
		return &ArgError{"minWeight", fmt.Sprintf("must be at least 1, got %d", o.MinWeight)}
	}
	return nil
}

// Node is one vertex of a network. Depth is its distance in hops from the
// centre (0 for the centre). Label is a researcher's or institution's
// name, or a paper's arXiv id (its DOI when it has none). PaperCount is a
// researcher's or institution's number of papers; for a paper it is the
// number of papers in the archive that cite it.
type Node struct {
	ID         int64
	Depth      int
	PaperCount int
	Label      string
}

// Edge is one tie between two returned nodes. Weight is the number of
// shared papers; a citation edge runs from the citing paper (Source) to
// the cited one (Target) and weighs 1.
type Edge = db.NetworkEdge

// Graph is a network: its nodes in order of depth, then of the strength
// of their tie to the layer before, and every edge among them. Truncated
// says MaxNodes left out nodes within the depth asked for.
type Graph struct {
	Nodes     []Node
	Edges     []Edge
	Truncated bool
}

// Weighted is a neighbour with the weight of its tie.
type Weighted = db.Neighbour

// build walks out from centre breadth first and returns the network, or
// nil if the centre does not exist. It sends one statement per layer
// (fewer if the network ends sooner), one for the labels and one for the
// edges: at most o.Depth+2.
func build(ctx context.Context, idb bun.IDB, k db.NetworkKind, centre int64, o Options) (*Graph, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	g := &Graph{Nodes: []Node{{ID: centre}}}
	seen := []int64{centre}
	frontier := seen
	for depth := 1; depth <= o.Depth && len(frontier) > 0 && !g.Truncated; depth++ {
		room := o.MaxNodes - len(g.Nodes)
		// One more than there is room for tells whether MaxNodes cuts.
		found, err := k.Expand(ctx, idb, frontier, seen, o.MinWeight, room+1)
		if err != nil {
			return nil, err
		}
		if len(found) > room {
			found, g.Truncated = found[:room], true
		}
		frontier = make([]int64, len(found))
		for i, n := range found {
			g.Nodes = append(g.Nodes, Node{ID: n.ID, Depth: depth})
			frontier[i] = n.ID
		}
		seen = append(seen, frontier...)
	}

	labels, err := k.Labels(ctx, idb, seen)
	if err != nil {
		return nil, err
	}
	at := make(map[int64]int, len(g.Nodes))
	for i, n := range g.Nodes {
		at[n.ID] = i
	}
	centreFound := false
	for _, l := range labels {
		n := &g.Nodes[at[l.ID]]
		n.Label, n.PaperCount = l.Label, l.PaperCount
		centreFound = centreFound || l.ID == centre
	}
	if !centreFound {
		return nil, nil
	}
	if len(seen) > 1 {
		// The strongest edges first, one more than the bound to tell
		// whether it cut; then back to the order of the ends.
		most := EdgesPerNode * len(seen)
		if err := k.Edges(ctx, idb, seen, o.MinWeight, most+1, &g.Edges); err != nil {
			return nil, err
		}
		if len(g.Edges) > most {
			g.Edges, g.Truncated = g.Edges[:most], true
		}
		slices.SortFunc(g.Edges, func(a, b Edge) int {
			return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Target, b.Target))
		})
	}
	return g, nil
}

// Researcher returns the ego co-author network of a researcher: co-authors
// to o.Depth hops, tied by shared papers (papers with more than
// db.MaxCoauthorPaperAuthors authors tie no one). It returns nil if
// there is no such researcher. It sends at most o.Depth+2 statements: one
// per layer, one for names and paper counts, one for the edges.
func Researcher(ctx context.Context, idb bun.IDB, id int64, o Options) (*Graph, error) {
	return build(ctx, idb, db.CoauthorNetwork, id, o)
}

// Institution returns the co-affiliation network of an institution:
// institutions to o.Depth hops, tied by the papers with authors at both
// (papers with more than db.MaxCoauthorPaperAuthors authors tie no
// one). It returns nil if there is no such institution. It sends at most
// o.Depth+2 statements: one per layer, one for names and paper counts,
// one for the edges.
func Institution(ctx context.Context, idb bun.IDB, id int64, o Options) (*Graph, error) {
	return build(ctx, idb, db.CoaffiliationNetwork, id, o)
}

// Collaborators returns, for each of the given institutions, at most
// first institutions it shares papers with, most shared papers first (then
// by id), each weighed by those papers. An institution with none is absent
// from the map. It sends one statement, none for an empty list.
func Collaborators(ctx context.Context, idb bun.IDB, institutionIDs []int64, first int) (map[int64][]Weighted, error) {
	if first < 1 {
		return nil, &ArgError{"first", fmt.Sprintf("must be at least 1, got %d", first)}
	}
	if len(institutionIDs) == 0 {
		return map[int64][]Weighted{}, nil
	}
	return db.CollaboratorsByInstitutionIDs(ctx, idb, institutionIDs, first)
}

// Citations returns the citation neighbourhood of a paper: the papers it
// cites and that cite it, to o.Depth hops, with every citation among them
// as an edge from citing to cited paper. Citation edges all weigh 1, so
// o.MinWeight must be 1. It returns nil if there is no such paper. It
// sends at most o.Depth+2 statements: one per layer, one for labels and
// citation counts, one for the edges.
func Citations(ctx context.Context, idb bun.IDB, paperID int64, o Options) (*Graph, error) {
	if o.MinWeight > 1 {
		return nil, &ArgError{"minWeight", "citation edges all weigh 1, so it must be 1"}
	}
	return build(ctx, idb, db.CitationNetwork, paperID, o)
}
