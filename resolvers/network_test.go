package resolvers_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/network"
)

// networkResp is a network as a response holds it; each node has the
// global id of one of researcher, institution or paper.
type networkResp struct {
	Nodes []struct {
		Researcher, Institution, Paper *struct{ ID string }
		Depth                          int
	}
	Edges []struct {
		Source, Target string
		Weight         int
	}
	Truncated bool
}

// sameGraph reports how got differs from want, "" if it does not: the
// same nodes in the same order with the same depths, the same edges, the
// same truncation.
func sameGraph(got networkResp, want *network.Graph, kind string) string {
	if len(got.Nodes) != len(want.Nodes) || len(got.Edges) != len(want.Edges) || got.Truncated != want.Truncated {
		return fmt.Sprintf("%d nodes, %d edges, truncated %t; want %d, %d, %t",
			len(got.Nodes), len(got.Edges), got.Truncated, len(want.Nodes), len(want.Edges), want.Truncated)
	}
	for i, n := range want.Nodes {
		node := got.Nodes[i]
		id := cmp.Or(node.Researcher, node.Institution, node.Paper).ID
		if id != model.GlobalID(kind, n.ID) || got.Nodes[i].Depth != n.Depth {
			return fmt.Sprintf("node %d is %s at depth %d, want %s at %d", i, id, got.Nodes[i].Depth, model.GlobalID(kind, n.ID), n.Depth)
		}
	}
	for i, e := range want.Edges {
		g := got.Edges[i]
		if g.Source != model.GlobalID(kind, e.Source) || g.Target != model.GlobalID(kind, e.Target) || g.Weight != e.Weight {
			return fmt.Sprintf("edge %d is %+v, want %+v", i, g, e)
		}
	}
	return ""
}

func TestResearcherNetwork(t *testing.T) {
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		hub := scalar[int64](t, bdb, "SELECT researcher_id FROM coauthors GROUP BY researcher_id ORDER BY COUNT(*) DESC, researcher_id LIMIT 1")
		c := newClient(bdb)
		for _, o := range []network.Options{
			{Depth: 1, MaxNodes: 100, MinWeight: 1},
			{Depth: 2, MaxNodes: 100, MinWeight: 1},
			{Depth: 2, MaxNodes: 5, MinWeight: 1},
			{Depth: 3, MaxNodes: 2000, MinWeight: 2},
		} {
			want, err := network.Researcher(context.Background(), bdb, hub, o)
			if err != nil {
				t.Fatal(err)
			}
			var resp struct{ Researcher struct{ Network networkResp } }
			c.MustPost(`query($id: String!, $d: Int, $n: Int, $w: Int) { researcher(id: $id) { network(depth: $d, maxNodes: $n, minWeight: $w) {
				nodes { researcher { id } depth } edges { source target weight } truncated } } }`, &resp,
				client.Var("id", strconv.FormatInt(hub, 10)), client.Var("d", o.Depth), client.Var("n", o.MaxNodes), client.Var("w", o.MinWeight))
			got := resp.Researcher.Network
			if diff := sameGraph(got, want, model.KindResearcher); diff != "" {
				t.Errorf("%+v: %s", o, diff)
			}
		}
	})
}

func TestCitationNetwork(t *testing.T) {
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		id := scalar[int64](t, bdb, "SELECT id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY archive_citation_count DESC, id LIMIT 1")
		arxivID := scalar[string](t, bdb, "SELECT arxiv_id FROM papers WHERE id = ?", id)
		c := newClient(bdb)
		for _, o := range []network.Options{{Depth: 1, MaxNodes: 100, MinWeight: 1}, {Depth: 2, MaxNodes: 300, MinWeight: 1}} {
			want, err := network.Citations(context.Background(), bdb, id, o)
			if err != nil {
				t.Fatal(err)
			}
			var resp struct {
				Paper struct{ CitationNetwork networkResp }
			}
			c.MustPost(`query($id: String!, $d: Int, $n: Int) { paper(id: $id) { citationNetwork(depth: $d, maxNodes: $n) {
				nodes { paper { id } depth } edges { source target weight } truncated } } }`, &resp,
				client.Var("id", arxivID), client.Var("d", o.Depth), client.Var("n", o.MaxNodes))
			got := resp.Paper.CitationNetwork
			if diff := sameGraph(got, want, model.KindPaper); diff != "" {
				t.Errorf("%+v: %s", o, diff)
			}
		}
	})
}

// networkStatements is the number of SQL statements of networkQuery over
// a researcher whose depth-2 network is not cut by maxNodes:
//
//  1. the researcher by id
//  2. co-authors of the researcher (network layer 1)
//  3. co-authors of layer 1 (network layer 2)
//  4. names and paper counts of the nodes
//  5. the edges among the nodes
//  6. the nodes' researchers not yet read, in one batch
//  7. researcher_categories of the nodes' researchers (fields)
const networkStatements = 7

const networkQuery = `query($id: String!) { researcher(id: $id) { network(depth: 2, maxNodes: 2000) {
	truncated nodes { depth paperCount researcher { id name fields { category { code } count } } } edges { source target weight } } } }`

func TestNetworkStatements(t *testing.T) {
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		hub := scalar[int64](t, bdb, "SELECT researcher_id FROM coauthors GROUP BY researcher_id ORDER BY COUNT(*) DESC, researcher_id LIMIT 1")
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		var resp struct {
			Researcher struct {
				Network struct {
					Truncated bool
					Nodes     []struct{ Depth int }
				}
			}
		}
		data, errs := rawPost(t, newClient(bdb), networkQuery, client.Var("id", strconv.FormatInt(hub, 10)))
		if len(errs) != 0 {
			t.Fatal(errs)
		}
		if err := json.Unmarshal([]byte(data), &resp); err != nil {
			t.Fatal(err)
		}
		n := resp.Researcher.Network
		if n.Truncated || len(n.Nodes) < 10 || n.Nodes[len(n.Nodes)-1].Depth != 2 {
			t.Fatalf("got %d nodes, truncated %t: want an uncut network reaching depth 2", len(n.Nodes), n.Truncated)
		}
		if got := counter.Count(); got != networkStatements {
			t.Errorf("got %d statements, want %d", got, networkStatements)
		}
	})
}

func TestCollaborationPath(t *testing.T) {
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		hub := scalar[int64](t, bdb, "SELECT researcher_id FROM coauthors GROUP BY researcher_id ORDER BY COUNT(*) DESC, researcher_id LIMIT 1")
		g, err := network.Researcher(context.Background(), bdb, hub, network.Options{Depth: 3, MaxNodes: 2000, MinWeight: 1})
		if err != nil {
			t.Fatal(err)
		}
		// The first node at each depth is that far from the hub; the
		// network is cut (by maxNodes) within depth 3, so whole layers
		// end at 2.
		far := map[int]int64{}
		for _, n := range g.Nodes {
			if _, ok := far[n.Depth]; !ok && n.Depth <= 2 {
				far[n.Depth] = n.ID
			}
		}
		if len(far) != 3 {
			t.Fatalf("got researchers at depths %v from %d, want 0 to 2", far, hub)
		}
		c := newClient(bdb)
		for depth := 1; depth <= 2; depth++ {
			to := far[depth]
			var resp struct {
				CollaborationPath *struct {
					Length int
					Steps  []struct {
						Researcher struct{ ResearcherID int64 }
						Papers     []struct {
							Authors []struct{ Researcher *struct{ ResearcherID int64 } }
						}
					}
				}
			}
			// from as a global id, to as a URL slug form.
			c.MustPost(`query($from: String!, $to: String!) { collaborationPath(from: $from, to: $to) {
				length steps { researcher { researcherId } papers { authors { researcher { researcherId } } } } } }`, &resp,
				client.Var("from", model.GlobalID(model.KindResearcher, hub)), client.Var("to", strconv.FormatInt(to, 10)+"-someone"))
			p := resp.CollaborationPath
			if p == nil {
				t.Fatalf("%d to %d: got no path, want one of %d hops", hub, to, depth)
			}
			if p.Length != depth || len(p.Steps) != depth+1 || p.Steps[0].Researcher.ResearcherID != hub || p.Steps[depth].Researcher.ResearcherID != to {
				t.Fatalf("%d to %d: got %+v, want %d hops from %d to %d", hub, to, p, depth, hub, to)
			}
			for i, s := range p.Steps[1:] {
				prev := p.Steps[i].Researcher.ResearcherID
				if len(s.Papers) == 0 {
					t.Errorf("step %d: no shared papers", i+1)
				}
				for _, paper := range s.Papers {
					var ids []int64
					for _, a := range paper.Authors {
						if a.Researcher != nil {
							ids = append(ids, a.Researcher.ResearcherID)
						}
					}
					if !slices.Contains(ids, prev) || !slices.Contains(ids, s.Researcher.ResearcherID) {
						t.Errorf("step %d: paper with authors %v is not shared by %d and %d", i+1, ids, prev, s.Researcher.ResearcherID)
					}
				}
			}
		}
		for _, tt := range []struct{ from, to string }{
			{"999999999", strconv.FormatInt(hub, 10)},
			{"999999999", "999999999"},
			{"s2:1", strconv.FormatInt(hub, 10)},
		} {
			data, errs := rawPost(t, c, `query($from: String!, $to: String!) { collaborationPath(from: $from, to: $to) { length } }`,
				client.Var("from", tt.from), client.Var("to", tt.to))
			if len(errs) != 0 || data != `{"collaborationPath":null}` {
				t.Errorf("%s to %s: got %s %+v, want null", tt.from, tt.to, data, errs)
			}
		}
	})
}

func TestNetworkArguments(t *testing.T) {
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		rid := scalar[int64](t, bdb, "SELECT MIN(researcher_id) FROM coauthors")
		arxivID := scalar[string](t, bdb, "SELECT MIN(arxiv_id) FROM papers")
		r := fmt.Sprintf(`researcher(id: "%d")`, rid)
		p := fmt.Sprintf(`paper(id: "%s")`, arxivID)
		c := newClient(bdb)
		for _, tt := range []struct{ query, arg string }{
			{`{ ` + r + ` { network(depth: 0) { truncated } } }`, "depth"},
			{`{ ` + r + ` { network(depth: 4) { truncated } } }`, "depth"},
			{`{ ` + r + ` { network(maxNodes: 0) { truncated } } }`, "maxNodes"},
			{`{ ` + r + ` { network(maxNodes: 2001) { truncated } } }`, "maxNodes"},
			{`{ ` + r + ` { network(minWeight: 0) { truncated } } }`, "minWeight"},
			{`{ ` + p + ` { citationNetwork(depth: 9) { truncated } } }`, "depth"},
			{`{ ` + p + ` { citationNetwork(maxNodes: -1) { truncated } } }`, "maxNodes"},
			{`{ collaborationPath(from: "1", to: "2", maxDepth: 0) { length } }`, "maxDepth"},
			{`{ collaborationPath(from: "1", to: "2", maxDepth: 9) { length } }`, "maxDepth"},
			{`{ collaborationPath(from: "nobody?", to: "2") { length } }`, "from"},
			{`{ collaborationPath(from: "1", to: "nobody?") { length } }`, "to"},
		} {
			_, errs := rawPost(t, c, tt.query)
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Message, tt.arg+": ") || errs[0].Extensions.Code != "BAD_USER_INPUT" {
				t.Errorf("%s: got %+v, want one BAD_USER_INPUT naming %s", tt.query, errs, tt.arg)
			}
		}
	})
}

// affiliatedWork are the ROR ids and names of the affiliations of the
// OpenAlex work in ../ingest/testdata/openalex.jsonl.
var affiliatedWork = map[string]string{
	"05ppvf150": "Impactstory",
	"0161xgx34": "Université de Montréal",
	"002rjbv21": "Université du Québec à Montréal",
	"0213rcc28": "Simon Fraser University",
	"05ek4tb53": "Public Knowledge Project",
	"00cvxb145": "University of Washington",
	"02jqc0m91": "Seattle University",
	"03c4mmv16": "University of Ottawa",
}

// importAffiliatedWork adds the institutions of affiliatedWork, then
// imports the work, whose import matches its affiliations to them.
func importAffiliatedWork(t *testing.T, bdb *bun.DB) []int64 {
	t.Helper()
	ctx := context.Background()
	var rows []db.Institution
	for ror, name := range affiliatedWork {
		rows = append(rows, db.Institution{RORID: ror, Name: name})
	}
	if _, err := bdb.NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Import(ctx, bdb, ingest.Options{Format: ingest.OpenAlex, Paths: []string{"../ingest/testdata/openalex.jsonl"}}); err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	slices.Sort(ids)
	return ids
}

// collaboratorStatements is the number of SQL statements of
// collaboratorQuery, however many institutions it asks for:
//
//  1. the institutions by id
//  2. the collaborators of all of them
//  3. the names of all of them (the collaborators are among them)
const collaboratorStatements = 3

const collaboratorQuery = `query($ids: [ID!]!, $first: Int) { nodes(ids: $ids) { ... on Institution {
	institutionId collaborators(first: $first) { sharedPaperCount institution { institutionId acronyms } } } } }`

func TestInstitutionCollaborators(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ids := importAffiliatedWork(t, bdb)
		gids := make([]string, len(ids))
		for i, id := range ids {
			gids[i] = model.GlobalID(model.KindInstitution, id)
		}
		want, err := network.Collaborators(context.Background(), bdb, ids, 3)
		if err != nil {
			t.Fatal(err)
		}
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		c := newClient(bdb)
		var resp struct {
			Nodes []struct {
				InstitutionID int64
				Collaborators []struct {
					SharedPaperCount int
					Institution      struct {
						InstitutionID int64
						Acronyms      []string
					}
				}
			}
		}
		c.MustPost(collaboratorQuery, &resp, client.Var("ids", gids), client.Var("first", 3))
		if got := counter.Count(); got != collaboratorStatements {
			t.Errorf("got %d statements, want %d", got, collaboratorStatements)
		}
		for _, n := range resp.Nodes {
			var got []network.Weighted
			for _, x := range n.Collaborators {
				got = append(got, network.Weighted{ID: x.Institution.InstitutionID, Weight: x.SharedPaperCount})
			}
			if !slices.Equal(got, want[n.InstitutionID]) || len(got) != 3 {
				t.Errorf("institution %d: got collaborators %v, want %v", n.InstitutionID, got, want[n.InstitutionID])
			}
		}

		g, err := network.Institution(context.Background(), bdb, ids[0], network.DefaultOptions)
		if err != nil {
			t.Fatal(err)
		}
		var nresp struct{ Institution struct{ Network networkResp } }
		c.MustPost(`query($ref: String!) { institution(id: $ref) { network { nodes { institution { id } depth } edges { source target weight } truncated } } }`,
			&nresp, client.Var("ref", gids[0]))
		if diff := sameGraph(nresp.Institution.Network, g, model.KindInstitution); diff != "" || len(g.Nodes) != len(ids) {
			t.Errorf("network of %d: %s (%d nodes)", ids[0], diff, len(g.Nodes))
		}

		// first: 0 is an empty list, as for every other list.
		if data, errs := rawPost(t, c, `{ institution(id: "`+gids[0]+`") { collaborators(first: 0) { sharedPaperCount } } }`); len(errs) != 0 || data != `{"institution":{"collaborators":[]}}` {
			t.Errorf("collaborators(first: 0): got %s %+v, want an empty list", data, errs)
		}
		for _, tt := range []struct{ query, arg string }{
			{`{ institution(id: "` + gids[0] + `") { collaborators(first: -1) { sharedPaperCount } } }`, "first"},
			{`{ institution(id: "` + gids[0] + `") { collaborators(first: 101) { sharedPaperCount } } }`, "first"},
			{`{ institution(id: "` + gids[0] + `") { network(depth: 0) { truncated } } }`, "depth"},
			{`{ institution(id: "` + gids[0] + `") { network(minWeight: -2) { truncated } } }`, "minWeight"},
		} {
			_, errs := rawPost(t, c, tt.query)
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Message, tt.arg+": ") || errs[0].Extensions.Code != "BAD_USER_INPUT" {
				t.Errorf("%s: got %+v, want one BAD_USER_INPUT naming %s", tt.query, errs, tt.arg)
			}
		}
	})
}
