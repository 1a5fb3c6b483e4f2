package network_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/network"
)

// load imports the real 1992 Paperscape file (papers, bylines and
// citations) into bdb and counts its statements from then on.
func load(tb testing.TB, bdb *bun.DB) *db.StatementCounter {
	tb.Helper()
	_, err := ingest.Import(context.Background(), bdb, ingest.Options{
		Format: ingest.Paperscape, Paths: []string{"../demo/data/pscp-1992.csv.gz"},
	})
	if err != nil {
		tb.Fatal(err)
	}
	counter := &db.StatementCounter{}
	bdb.AddQueryHook(counter)
	return counter
}

// coauthorship is the co-author graph worked out here from the bylines
// alone, not from the derived coauthors table: weights are the papers two
// researchers share, counting only papers that make ties.
type coauthorship struct {
	papers map[int64]map[int64]bool // researcher → papers
	weight map[[2]int64]int         // (lower id, higher id) → shared papers
	adj    map[int64][]int64
}

func pair(a, b int64) [2]int64 { return [2]int64{min(a, b), max(a, b)} }

func readCoauthorship(t *testing.T, bdb *bun.DB) coauthorship {
	t.Helper()
	var rows []struct{ PaperID, ResearcherID int64 }
	err := bdb.NewSelect().ColumnExpr("DISTINCT a.paper_id, a.researcher_id").TableExpr("authorships AS a").
		Join("JOIN papers AS p ON p.id = a.paper_id").
		Where("a.researcher_id IS NOT NULL AND p.author_count <= ?", db.MaxCoauthorPaperAuthors).
		Scan(context.Background(), &rows)
	if err != nil {
		t.Fatal(err)
	}
	g := coauthorship{papers: map[int64]map[int64]bool{}, weight: map[[2]int64]int{}, adj: map[int64][]int64{}}
	byPaper := map[int64][]int64{}
	for _, r := range rows {
		byPaper[r.PaperID] = append(byPaper[r.PaperID], r.ResearcherID)
		if g.papers[r.ResearcherID] == nil {
			g.papers[r.ResearcherID] = map[int64]bool{}
		}
		g.papers[r.ResearcherID][r.PaperID] = true
	}
	for _, authors := range byPaper {
		for i, a := range authors {
			for _, b := range authors[i+1:] {
				if a != b {
					g.weight[pair(a, b)]++
				}
			}
		}
	}
	for k := range g.weight {
		g.adj[k[0]] = append(g.adj[k[0]], k[1])
		g.adj[k[1]] = append(g.adj[k[1]], k[0])
	}
	return g
}

// hub returns the researcher with the most co-authors (the lowest id of
// those with as many).
func (g coauthorship) hub() int64 { return g.hubOf(maps.Keys(g.adj)) }

// hubOf returns the researcher among ids with the most co-authors (the
// lowest id of those with as many).
func (g coauthorship) hubOf(ids iter.Seq[int64]) int64 {
	var best int64
	for id := range ids {
		if n := g.adj[id]; len(n) > len(g.adj[best]) || len(n) == len(g.adj[best]) && id < best {
			best = id
		}
	}
	return best
}

// largestComponent returns the researchers of the largest connected part
// of the graph.
func largestComponent(adj map[int64][]int64) iter.Seq[int64] {
	var best map[int64]int
	done := map[int64]bool{}
	for _, id := range slices.Sorted(maps.Keys(adj)) {
		if done[id] {
			continue
		}
		c := bfs(adj, id)
		for m := range c {
			done[m] = true
		}
		if len(c) > len(best) {
			best = c
		}
	}
	return maps.Keys(best)
}

// ranked is a node as the spec orders a network: by depth, then by the
// summed weight of its ties to the layer before, strongest first, then id.
type ranked struct {
	id              int64
	depth, strength int
}

// ego returns the network around centre the slow way: every node within
// depth hops by ties of at least minWeight, ranked.
func ego(adj map[int64][]int64, weight func(a, b int64) int, centre int64, depth, minWeight int) []ranked {
	out := []ranked{{id: centre}}
	seen := map[int64]bool{centre: true}
	layer := []int64{centre}
	for d := 1; d <= depth; d++ {
		strength := map[int64]int{}
		for _, a := range layer {
			for _, b := range adj[a] {
				if w := weight(a, b); !seen[b] && w >= minWeight {
					strength[b] += w
				}
			}
		}
		next := slices.Collect(maps.Keys(strength))
		slices.SortFunc(next, func(a, b int64) int {
			if strength[a] != strength[b] {
				return strength[b] - strength[a]
			}
			return int(a - b)
		})
		for _, id := range next {
			seen[id] = true
			out = append(out, ranked{id, d, strength[id]})
		}
		layer = next
	}
	return out
}

// ids returns the node ids of a graph in order.
func ids(g *network.Graph) []int64 {
	var out []int64
	for _, n := range g.Nodes {
		out = append(out, n.ID)
	}
	return out
}

// rankedIDs returns the first n ids of r.
func rankedIDs(r []ranked, n int) []int64 {
	var out []int64
	for _, x := range r[:min(n, len(r))] {
		out = append(out, x.id)
	}
	return out
}

// edgeSet returns the edges of g keyed by their ends.
func edgeSet(g *network.Graph) map[[2]int64]int {
	out := map[[2]int64]int{}
	for _, e := range g.Edges {
		out[[2]int64{e.Source, e.Target}] = e.Weight
	}
	return out
}

func TestNetworks(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		counter := load(t, bdb)
		co := readCoauthorship(t, bdb)
		centre := co.hub()
		if len(co.adj[centre]) < 10 {
			t.Fatalf("the best connected researcher has %d co-authors; the fixture is not what the tests expect", len(co.adj[centre]))
		}
		weight := func(a, b int64) int { return co.weight[pair(a, b)] }

		t.Run("researcher", func(t *testing.T) {
			full2 := ego(co.adj, weight, centre, 2, 1)
			tests := []struct {
				name string
				o    network.Options
				// wantStatements are one per layer read, one for the
				// labels and one for the edges (none for a lone centre).
				wantStatements int64
			}{
				{"depth 1", network.Options{Depth: 1, MaxNodes: 2000, MinWeight: 1}, 3},
				{"depth 2", network.Options{Depth: 2, MaxNodes: 2000, MinWeight: 1}, 4},
				{"depth 3", network.Options{Depth: 3, MaxNodes: 2000, MinWeight: 1}, 5},
				{"depth 2 minWeight 2", network.Options{Depth: 2, MaxNodes: 2000, MinWeight: 2}, 4},
				// Layer 1 overflows: layer 2 is never read.
				{"depth 2 cut to 10", network.Options{Depth: 2, MaxNodes: 10, MinWeight: 1}, 3},
				{"depth 2 cut inside layer 2", network.Options{Depth: 2, MaxNodes: len(co.adj[centre]) + 3, MinWeight: 1}, 4},
				{"depth 2 cut by one", network.Options{Depth: 2, MaxNodes: len(full2) - 1, MinWeight: 1}, 4},
				{"depth 2 exactly full", network.Options{Depth: 2, MaxNodes: len(full2), MinWeight: 1}, 4},
				// One node has no edges to read.
				{"centre only", network.Options{Depth: 1, MaxNodes: 1, MinWeight: 1}, 2},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					want := ego(co.adj, weight, centre, tt.o.Depth, tt.o.MinWeight)
					before := counter.Count()
					g, err := network.Researcher(ctx, bdb, centre, tt.o)
					if err != nil {
						t.Fatal(err)
					}
					if got := counter.Count() - before; got != tt.wantStatements || got > int64(tt.o.Depth+2) {
						t.Errorf("statements = %d, want %d", got, tt.wantStatements)
					}
					if got, want := ids(g), rankedIDs(want, tt.o.MaxNodes); !slices.Equal(got, want) {
						t.Errorf("nodes = %v,\nwant %v", got, want)
					}
					if got, want := g.Truncated, len(want) > tt.o.MaxNodes; got != want {
						t.Errorf("Truncated = %v, want %v", got, want)
					}
					kept := map[int64]bool{}
					for i, n := range g.Nodes {
						kept[n.ID] = true
						if n.Depth != want[i].depth {
							t.Errorf("node %d depth = %d, want %d", n.ID, n.Depth, want[i].depth)
						}
						if n.PaperCount != len(co.papers[n.ID]) || n.Label == "" {
							t.Errorf("node %d has %d papers and label %q, want %d papers and a name", n.ID, n.PaperCount, n.Label, len(co.papers[n.ID]))
						}
					}
					wantEdges := map[[2]int64]int{}
					for k, w := range co.weight {
						if kept[k[0]] && kept[k[1]] && w >= tt.o.MinWeight {
							wantEdges[k] = w
						}
					}
					if got := edgeSet(g); !maps.Equal(got, wantEdges) || len(g.Edges) != len(wantEdges) {
						t.Errorf("%d edges, want %d (equal: %v)", len(g.Edges), len(wantEdges), maps.Equal(got, wantEdges))
					}
				})
			}
		})

		t.Run("researcher unknown", func(t *testing.T) {
			before := counter.Count()
			g, err := network.Researcher(ctx, bdb, 1<<40, network.DefaultOptions)
			if g != nil || err != nil {
				t.Errorf("got %+v, %v; want nil, nil", g, err)
			}
			// The empty first layer, then the labels that lack the centre.
			if got := counter.Count() - before; got != 2 {
				t.Errorf("statements = %d, want 2", got)
			}
		})

		t.Run("bad options", func(t *testing.T) {
			tests := []struct {
				o       network.Options
				wantArg string
			}{
				{network.Options{Depth: 0, MaxNodes: 10, MinWeight: 1}, "depth"},
				{network.Options{Depth: 4, MaxNodes: 10, MinWeight: 1}, "depth"},
				{network.Options{Depth: 1, MaxNodes: 0, MinWeight: 1}, "maxNodes"},
				{network.Options{Depth: 1, MaxNodes: network.MaxNodesCap + 1, MinWeight: 1}, "maxNodes"},
				{network.Options{Depth: 1, MaxNodes: 10, MinWeight: 0}, "minWeight"},
			}
			for _, tt := range tests {
				before := counter.Count()
				_, err := network.Researcher(ctx, bdb, centre, tt.o)
				var ae *network.ArgError
				if !errors.As(err, &ae) || ae.Arg != tt.wantArg {
					t.Errorf("%+v: got %v, want an ArgError for %s", tt.o, err, tt.wantArg)
				}
				if got := counter.Count() - before; got != 0 {
					t.Errorf("%+v: %d statements, want 0", tt.o, got)
				}
			}
		})

		t.Run("path", func(t *testing.T) {
			// The hub's circle is small and tight; paths are long in the
			// largest connected part of the graph.
			start := co.hubOf(largestComponent(co.adj))
			dist := bfs(co.adj, start)
			tests := []struct {
				name     string
				to       int64
				maxDepth int
				wantLen  int // hops; -1 for no path
				// statements, when set: the search reads the ends' counts
				// and whether they are tied, then after each layer whether
				// the sides are, and reads no layer where they are or
				// where the depth allows no further layer.
				statements int64
			}{
				{"self", start, 1, 0, 0},
				{"co-author", farthest(dist, 1), 1, 1, 2},
				{"two hops", farthest(dist, 2), network.DefaultPathDepth, 2, 4},
				{"three hops", farthest(dist, 3), network.DefaultPathDepth, 3, 0},
				{"longest allowed", farthest(dist, min(maxDist(dist), network.MaxPathDepth)), network.MaxPathDepth, min(maxDist(dist), network.MaxPathDepth), 0},
				{"farthest", farthest(dist, maxDist(dist)), network.MaxPathDepth, maxDist(dist), 0},
				{"too far", farthest(dist, 3), 2, -1, 3},
				{"unreachable", unreachable(co, dist), network.MaxPathDepth, -1, 0},
				{"unknown", 1 << 40, 3, -1, 0},
			}
			// Each way of reading the ties between two frontiers gives the
			// same paths: as the costs choose, probing every pair, reading
			// a frontier's ties.
			chosen := map[string][]network.Step{}
			for _, cost := range []int64{-1, 0, 1 << 20} {
				for _, tt := range tests {
					name := tt.name
					if cost >= 0 {
						name = fmt.Sprintf("%s, probe cost %d", tt.name, cost)
					}
					t.Run(name, func(t *testing.T) {
						if cost >= 0 {
							defer network.SetProbeCost(cost)()
						}
						if tt.wantLen > network.MaxPathDepth {
							tt.wantLen = -1
						}
						before := counter.Count()
						steps, err := network.Path(ctx, bdb, start, tt.to, tt.maxDepth)
						if err != nil {
							t.Fatal(err)
						}
						if got := counter.Count() - before; got > int64(2*tt.maxDepth) || tt.statements != 0 && got != tt.statements {
							t.Errorf("statements = %d, want at most %d (%d if set)", got, 2*tt.maxDepth, tt.statements)
						}
						if cost < 0 {
							chosen[tt.name] = steps
						} else if !reflect.DeepEqual(steps, chosen[tt.name]) {
							t.Errorf("got %+v, want the path found as the costs choose, %+v", steps, chosen[tt.name])
						}
						if tt.wantLen < 0 {
							if steps != nil {
								t.Errorf("got %+v, want no path", steps)
							}
							return
						}
						if len(steps) != tt.wantLen+1 || steps[0].ResearcherID != start || steps[len(steps)-1].ResearcherID != tt.to {
							t.Fatalf("got %+v, want %d steps from %d to %d", steps, tt.wantLen+1, start, tt.to)
						}
						if steps[0].PaperIDs != nil {
							t.Errorf("first step has papers %v, want none", steps[0].PaperIDs)
						}
						for i := 1; i < len(steps); i++ {
							a, b := steps[i-1].ResearcherID, steps[i].ResearcherID
							var want []int64
							for p := range co.papers[a] {
								if co.papers[b][p] {
									want = append(want, p)
								}
							}
							slices.Sort(want)
							if !slices.Equal(steps[i].PaperIDs, want) || len(want) == 0 {
								t.Errorf("step %d (%d→%d): papers %v, want %v", i, a, b, steps[i].PaperIDs, want)
							}
						}
					})
				}
			}
			t.Run("co-author counts", func(t *testing.T) {
				var rows []struct{ ID, CoauthorCount int64 }
				if err := bdb.NewSelect().Column("id", "coauthor_count").Table("researchers").Scan(ctx, &rows); err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					if r.CoauthorCount != int64(len(co.adj[r.ID])) {
						t.Errorf("researcher %d: coauthor_count %d, want %d", r.ID, r.CoauthorCount, len(co.adj[r.ID]))
					}
				}
			})
			t.Run("widens the side of fewer co-authors", func(t *testing.T) {
				// A researcher three hops from the hub whose co-authors
				// have fewer co-authors in all than the hub: the search
				// widens that side twice and never reads the hub's
				// co-authors.
				var leaf int64
				for _, id := range slices.Sorted(maps.Keys(dist)) {
					var ties int
					for _, c := range co.adj[id] {
						ties += len(co.adj[c])
					}
					if dist[id] == 3 && ties <= len(co.adj[start]) {
						leaf = id
						break
					}
				}
				if leaf == 0 {
					t.Fatal("no researcher three hops from the hub has few enough ties; the fixture is not what the test expects")
				}
				var reads [][]int64
				restore := network.OnLayer(func(frontier []int64) { reads = append(reads, slices.Clone(frontier)) })
				defer restore()
				before := counter.Count()
				steps, err := network.Path(ctx, bdb, leaf, start, network.DefaultPathDepth)
				if err != nil || len(steps) != 4 {
					t.Fatalf("got %+v, %v; want a path of 4 steps", steps, err)
				}
				// The ends, two layers and two meetings, the shared papers.
				if got := counter.Count() - before; got != 6 {
					t.Errorf("statements = %d, want 6", got)
				}
				restore()
				if len(reads) != 2 || len(reads[0]) != 1 || reads[0][0] != leaf {
					t.Errorf("read the co-authors of %v, want two layers, the first from %d", reads, leaf)
				}
				for _, ids := range reads {
					if slices.Contains(ids, start) {
						t.Errorf("read the co-authors of %v, the hub %d among them", ids, start)
					}
				}
			})
			t.Run("past the budget", func(t *testing.T) {
				// The first layer, the hub's co-authors, is past a budget
				// of two researchers: the search still looks one hop
				// further, and no further.
				defer network.SetPathBudget(2)()
				steps, err := network.Path(ctx, bdb, start, farthest(dist, 2), network.DefaultPathDepth)
				if err != nil || len(steps) != 3 {
					t.Errorf("two hops: got %+v, %v; want a path of 3 steps", steps, err)
				}
				steps, err = network.Path(ctx, bdb, start, farthest(dist, 3), network.DefaultPathDepth)
				if !errors.Is(err, network.ErrPathBudget) || !strings.Contains(err.Error(), "none of 2 hops or fewer") || steps != nil {
					t.Errorf("three hops: got %+v, %v; want ErrPathBudget ruling out 2 hops", steps, err)
				}
			})
			var ae *network.ArgError
			if _, err := network.Path(ctx, bdb, start, start, network.MaxPathDepth+1); !errors.As(err, &ae) || ae.Arg != "maxDepth" {
				t.Errorf("maxDepth %d: got %v, want an ArgError for maxDepth", network.MaxPathDepth+1, err)
			}
		})

		t.Run("citations", func(t *testing.T) {
			adj, cites := readCitations(t, bdb)
			var paper int64
			for id, n := range adj {
				if len(n) > len(adj[paper]) || len(n) == len(adj[paper]) && id < paper {
					paper = id
				}
			}
			one := func(a, b int64) int { return 1 }
			for _, depth := range []int{1, 2} {
				o := network.Options{Depth: depth, MaxNodes: network.MaxNodesCap, MinWeight: 1}
				want := ego(adj, one, paper, depth, 1)
				before := counter.Count()
				g, err := network.Citations(ctx, bdb, paper, o)
				if err != nil {
					t.Fatal(err)
				}
				if got := counter.Count() - before; got != int64(depth+2) {
					t.Errorf("depth %d: statements = %d, want %d", depth, got, depth+2)
				}
				if got, want := ids(g), rankedIDs(want, o.MaxNodes); !slices.Equal(got, want) {
					t.Errorf("depth %d: nodes = %v,\nwant %v", depth, got, want)
				}
				kept := map[int64]bool{}
				for _, n := range g.Nodes {
					kept[n.ID] = true
				}
				wantEdges := map[[2]int64]int{}
				for c := range cites {
					if kept[c[0]] && kept[c[1]] {
						wantEdges[c] = 1
					}
				}
				if got := edgeSet(g); !maps.Equal(got, wantEdges) || len(g.Edges) != len(wantEdges) {
					t.Errorf("depth %d: %d edges, want %d", depth, len(g.Edges), len(wantEdges))
				}
				if g.Nodes[0].Label == "" || g.Nodes[0].PaperCount != len(inbound(cites, paper)) {
					t.Errorf("centre %+v, want an arXiv id and %d citations", g.Nodes[0], len(inbound(cites, paper)))
				}
			}
			var ae *network.ArgError
			if _, err := network.Citations(ctx, bdb, paper, network.Options{Depth: 1, MaxNodes: 10, MinWeight: 2}); !errors.As(err, &ae) || ae.Arg != "minWeight" {
				t.Errorf("minWeight 2: got %v, want an ArgError for minWeight", err)
			}
		})
	})
}

// bfs returns the hops from start to every researcher it reaches.
func bfs(adj map[int64][]int64, start int64) map[int64]int {
	dist := map[int64]int{start: 0}
	for layer := []int64{start}; len(layer) > 0; {
		var next []int64
		for _, a := range layer {
			for _, b := range adj[a] {
				if _, ok := dist[b]; !ok {
					dist[b] = dist[a] + 1
					next = append(next, b)
				}
			}
		}
		layer = next
	}
	return dist
}

// farthest returns the lowest id at d hops.
func farthest(dist map[int64]int, d int) int64 {
	var best int64
	for id, n := range dist {
		if n == d && (best == 0 || id < best) {
			best = id
		}
	}
	if best == 0 {
		panic(fmt.Sprintf("no researcher at %d hops", d))
	}
	return best
}

func maxDist(dist map[int64]int) int { return slices.Max(slices.Collect(maps.Values(dist))) }

// unreachable returns a researcher with co-authors that dist does not
// reach.
func unreachable(co coauthorship, dist map[int64]int) int64 {
	for _, id := range slices.Sorted(maps.Keys(co.adj)) {
		if _, ok := dist[id]; !ok {
			return id
		}
	}
	panic("every researcher is reachable")
}

// readCitations returns the citation graph from paper_references: the
// undirected adjacency and the set of (citing, cited) pairs.
func readCitations(t *testing.T, bdb *bun.DB) (map[int64][]int64, map[[2]int64]bool) {
	t.Helper()
	var rows []struct{ CitingID, CitedID int64 }
	if err := bdb.NewSelect().Column("citing_id", "cited_id").Table("paper_references").
		Where("cited_id IS NOT NULL AND citing_id <> cited_id").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	cites := map[[2]int64]bool{}
	adj := map[int64][]int64{}
	for _, r := range rows {
		c := [2]int64{r.CitingID, r.CitedID}
		if cites[c] {
			continue
		}
		cites[c] = true
		if !cites[[2]int64{r.CitedID, r.CitingID}] {
			adj[r.CitingID] = append(adj[r.CitingID], r.CitedID)
			adj[r.CitedID] = append(adj[r.CitedID], r.CitingID)
		}
	}
	return adj, cites
}

// inbound returns the papers citing id.
func inbound(cites map[[2]int64]bool, id int64) []int64 {
	var out []int64
	for c := range cites {
		if c[1] == id {
			out = append(out, c[0])
		}
	}
	return out
}
