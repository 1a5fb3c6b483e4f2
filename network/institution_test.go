package network_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/network"
)

// workRORs are the ROR ids of the affiliations of the OpenAlex work in
// ../ingest/testdata/openalex.jsonl, with the names the work gives them.
var workRORs = map[string]string{
	"05ppvf150": "Impactstory",
	"0161xgx34": "Université de Montréal",
	"002rjbv21": "Université du Québec à Montréal",
	"0213rcc28": "Simon Fraser University",
	"05ek4tb53": "Public Knowledge Project",
	"00cvxb145": "University of Washington",
	"02jqc0m91": "Seattle University",
	"03c4mmv16": "University of Ottawa",
}

// loadAffiliations imports the real ROR records and the OpenAlex work
// after adding the institutions its affiliations name, which the ROR
// fixture lacks, so that the import links them.
func loadAffiliations(t *testing.T, bdb *bun.DB) {
	t.Helper()
	ctx := context.Background()
	var rows []db.Institution
	for _, ror := range slices.Sorted(maps.Keys(workRORs)) {
		rows = append(rows, db.Institution{RORID: ror, Name: workRORs[ror]})
	}
	if _, err := bdb.NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		format ingest.Format
		path   string
	}{{ingest.ROR, "../ingest/testdata/ror.jsonl"}, {ingest.OpenAlex, "../ingest/testdata/openalex.jsonl"}} {
		if _, err := ingest.Import(ctx, bdb, ingest.Options{Format: f.format, Paths: []string{f.path}}); err != nil {
			t.Fatal(err)
		}
	}
}

// institutionID returns the id of the institution with a ROR id.
func institutionID(t *testing.T, bdb *bun.DB, ror string) int64 {
	t.Helper()
	var id int64
	if err := bdb.NewSelect().Table("institutions").Column("id").Where("ror_id = ?", ror).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestInstitutions(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		loadAffiliations(t, bdb)
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)

		// The ties worked out here from the affiliations themselves.
		var rows []struct{ PaperID, InstitutionID int64 }
		if err := bdb.NewSelect().ColumnExpr("DISTINCT paper_id, institution_id").Table("affiliations").
			Where("institution_id IS NOT NULL").Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		byPaper := map[int64][]int64{}
		papers := map[int64]int{}
		for _, r := range rows {
			byPaper[r.PaperID] = append(byPaper[r.PaperID], r.InstitutionID)
			papers[r.InstitutionID]++
		}
		ties := map[[2]int64]int{}
		adj := map[int64][]int64{}
		for _, insts := range byPaper {
			for i, a := range insts {
				for _, b := range insts[i+1:] {
					if ties[pair(a, b)]++; ties[pair(a, b)] == 1 {
						adj[a], adj[b] = append(adj[a], b), append(adj[b], a)
					}
				}
			}
		}
		if len(papers) != len(workRORs) {
			t.Fatalf("%d institutions have papers, want the work's %d", len(papers), len(workRORs))
		}
		weight := func(a, b int64) int { return ties[pair(a, b)] }
		sfu := institutionID(t, bdb, "0213rcc28")
		lone := institutionID(t, bdb, "000025p04") // from the ROR fixture, on no paper

		t.Run("network", func(t *testing.T) {
			tests := []struct {
				name           string
				id             int64
				o              network.Options
				wantStatements int64
			}{
				{"depth 1", sfu, network.Options{Depth: 1, MaxNodes: 100, MinWeight: 1}, 3},
				{"depth 2", sfu, network.Options{Depth: 2, MaxNodes: 100, MinWeight: 1}, 4},
				{"cut", sfu, network.Options{Depth: 1, MaxNodes: 4, MinWeight: 1}, 3},
				// No tie is that strong: the first layer is empty, and a lone centre has no edges.
				{"minWeight 2", sfu, network.Options{Depth: 2, MaxNodes: 100, MinWeight: 2}, 2},
				{"on no paper", lone, network.Options{Depth: 1, MaxNodes: 100, MinWeight: 1}, 2},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					want := ego(adj, weight, tt.id, tt.o.Depth, tt.o.MinWeight)
					before := counter.Count()
					g, err := network.Institution(ctx, bdb, tt.id, tt.o)
					if err != nil {
						t.Fatal(err)
					}
					if got := counter.Count() - before; got != tt.wantStatements {
						t.Errorf("statements = %d, want %d", got, tt.wantStatements)
					}
					if got, want := ids(g), rankedIDs(want, tt.o.MaxNodes); !slices.Equal(got, want) {
						t.Errorf("nodes = %v, want %v", got, want)
					}
					if got, want := g.Truncated, len(want) > tt.o.MaxNodes; got != want {
						t.Errorf("Truncated = %v, want %v", got, want)
					}
					kept := map[int64]bool{}
					for _, n := range g.Nodes {
						kept[n.ID] = true
						if n.Label == "" || n.PaperCount != papers[n.ID] {
							t.Errorf("node %+v, want a name and %d papers", n, papers[n.ID])
						}
					}
					wantEdges := map[[2]int64]int{}
					for k, w := range ties {
						if kept[k[0]] && kept[k[1]] && w >= tt.o.MinWeight {
							wantEdges[k] = w
						}
					}
					if got := edgeSet(g); !maps.Equal(got, wantEdges) || len(g.Edges) != len(wantEdges) {
						t.Errorf("edges = %v, want %v", got, wantEdges)
					}
				})
			}
			if g, err := network.Institution(ctx, bdb, 1<<40, network.DefaultOptions); g != nil || err != nil {
				t.Errorf("unknown institution: got %+v, %v; want nil, nil", g, err)
			}
		})

		t.Run("collaborators", func(t *testing.T) {
			uw := institutionID(t, bdb, "00cvxb145")
			before := counter.Count()
			got, err := network.Collaborators(ctx, bdb, []int64{sfu, uw, lone, 1 << 40}, 3)
			if err != nil {
				t.Fatal(err)
			}
			if n := counter.Count() - before; n != 1 {
				t.Errorf("statements = %d, want 1", n)
			}
			for _, id := range []int64{sfu, uw} {
				var want []network.Weighted
				for _, r := range ego(adj, weight, id, 1, 1)[1:] {
					want = append(want, network.Weighted{ID: r.id, Weight: r.strength})
				}
				if !slices.Equal(got[id], want[:3]) {
					t.Errorf("institution %d: got %v, want %v", id, got[id], want[:3])
				}
			}
			if _, ok := got[lone]; ok || len(got) != 2 {
				t.Errorf("got %v, want only the two institutions with papers", got)
			}
		})
	})
}
