package network_test

import (
	"context"
	"testing"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/network"
)

// BenchmarkResearcherNetworkDepth2 reads the depth-2 network of the 1992
// researcher with the most co-authors, on each database available.
func BenchmarkResearcherNetworkDepth2(b *testing.B) {
	ctx := context.Background()
	for _, kind := range dbtest.Kinds() {
		b.Run(kind, func(b *testing.B) {
			bdb := dbtest.Open(b, dbtest.NewMigrated(b, kind))
			counter := load(b, bdb)
			var hub int64
			if err := bdb.NewRaw(`SELECT researcher_id FROM coauthors GROUP BY researcher_id
				ORDER BY COUNT(*) DESC, researcher_id LIMIT 1`).Scan(ctx, &hub); err != nil {
				b.Fatal(err)
			}
			o := network.Options{Depth: 2, MaxNodes: network.DefaultOptions.MaxNodes, MinWeight: 1}
			b.ReportAllocs()
			before := counter.Count()
			var nodes, edges int
			for b.Loop() {
				g, err := network.Researcher(ctx, bdb, hub, o)
				if err != nil {
					b.Fatal(err)
				}
				nodes, edges = len(g.Nodes), len(g.Edges)
			}
			b.ReportMetric(float64(counter.Count()-before)/float64(b.N), "statements/op")
			b.ReportMetric(float64(nodes), "nodes")
			b.ReportMetric(float64(edges), "edges")
		})
	}
}
