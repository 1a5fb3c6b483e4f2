package network_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph/model"
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

// The archive and the pair of researchers BenchmarkPathAt reads:
// papergraph-bench run writes the pair of its collaboration-path
// operation to standard error.
var (
	pathDB   = flag.String("pathdb", "", "BenchmarkPathAt: the archive, a SQLite file or postgres:// URL, opened read-only")
	pathPair = flag.String("pathpair", "", "BenchmarkPathAt: the researchers' ids, from,to, numbers or as the server gives them")
)

// BenchmarkPathAt finds the collaboration path between the -pathpair
// researchers in the -pathdb archive, as the bench mix asks for it, and
// reports its statements, its length and the CPU time of the process
// and, on PostgreSQL, of the one server backend that answers.
func BenchmarkPathAt(b *testing.B) {
	if *pathDB == "" || *pathPair == "" {
		b.Skip("needs -pathdb and -pathpair")
	}
	ends := strings.Split(*pathPair, ",")
	if len(ends) != 2 {
		b.Fatalf("-pathpair %q: want two ids and a comma", *pathPair)
	}
	var ids [2]int64
	for i, e := range ends {
		// An id as the server gives it, or the number inside.
		_, id, ok := model.ParseGlobalID(e)
		if n, err := strconv.ParseInt(e, 10, 64); err == nil {
			id, ok = n, true
		}
		if !ok {
			b.Fatalf("-pathpair: %q is not a researcher's id", e)
		}
		ids[i] = id
	}
	from, to := ids[0], ids[1]
	ctx := context.Background()
	bdb, err := db.OpenReader(*pathDB, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer bdb.Close()
	bdb.SetMaxOpenConns(1)
	counter := &db.StatementCounter{}
	bdb.AddQueryHook(counter)
	backend := func() time.Duration { return 0 }
	if db.IsPostgres(bdb) {
		var pid int
		if err := bdb.NewRaw("SELECT pg_backend_pid()").Scan(ctx, &pid); err != nil {
			b.Fatal(err)
		}
		backend = func() time.Duration { return procCPU(b, fmt.Sprintf("/proc/%d/stat", pid)) }
	}
	if _, err := network.Path(ctx, bdb, from, to, network.DefaultPathDepth); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	before, self, server := counter.Count(), procCPU(b, "/proc/self/stat"), backend()
	var hops int
	for b.Loop() {
		steps, err := network.Path(ctx, bdb, from, to, network.DefaultPathDepth)
		if err != nil {
			b.Fatal(err)
		}
		hops = len(steps) - 1
	}
	n := float64(b.N)
	b.ReportMetric(float64(counter.Count()-before)/n, "statements/op")
	b.ReportMetric(float64(hops), "hops")
	b.ReportMetric(float64(procCPU(b, "/proc/self/stat")-self)/n, "cpu-ns/op")
	b.ReportMetric(float64(backend()-server)/n, "backend-cpu-ns/op")
}

// procCPU is the user and system time in a /proc stat file.
func procCPU(tb testing.TB, file string) time.Duration {
	raw, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	// Fields after the command's closing parenthesis: utime and stime
	// are the 12th and 13th, in clock ticks of 1/100 s.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	var ticks int64
	for _, s := range f[11:13] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
