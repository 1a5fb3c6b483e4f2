package resolvers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/99designs/gqlgen/client"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/resolvers"
)

// BenchmarkContractQuery serves the researcher page's query in process
// (handler and middleware, no network, no client-side decoding) on SQLite,
// and on PostgreSQL when the tests run there (dbtest.Kinds), with the
// fixtures imported, with the look-ahead on and, to record what
// it saves, off:
//
//	lookahead=on   11 statements at first=5 and at first=50
//	lookahead=off  14 to 15 at first=5, 20 to 21 at first=50
//
// With the look-ahead off, the loaders' miss wait batches the siblings
// of a list, whose elements gqlgen marshals concurrently, as far as they
// meet within the wait: the count varies from run to run. gqlgen's batch
// resolvers (@goField(batch: true)) hold the siblings of one list only,
// so they cannot give the look-ahead's counts.
//
//	go test ./resolvers -run '^$' -bench ContractQuery -benchmem
func BenchmarkContractQuery(b *testing.B) {
	for _, kind := range dbtest.Kinds() {
		b.Run(kind, func(b *testing.B) {
			bdb := dbtest.Open(b, dbtest.NewSeeded(b, kind, fixtures))
			counter := &db.StatementCounter{}
			bdb.AddQueryHook(counter)
			h := newHandler(bdb)
			id := busiestPaper(b, bdb)
			for _, on := range []bool{true, false} {
				for _, first := range []int{5, 50} {
					b.Run(fmt.Sprintf("lookahead=%s/first=%d", onOff(on), first), func(b *testing.B) {
						defer resolvers.SetLookAhead(resolvers.SetLookAhead(on))
						benchQuery(b, h, counter, map[string]any{"query": contractQuery, "variables": map[string]any{"paper": id, "first": first}})
					})
				}
			}
		})
	}
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// benchQuery posts one GraphQL request per iteration through h, fails on
// any error, and reports the statements each request sent.
func benchQuery(b *testing.B, h http.Handler, counter *db.StatementCounter, request map[string]any) {
	b.Helper()
	body, err := json.Marshal(request)
	if err != nil {
		b.Fatal(err)
	}
	start, cpu := counter.Count(), cpuTime(b)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	b.ReportMetric(float64(counter.Count()-start)/float64(b.N), "statements/op")
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used, user and system, in
// nanoseconds: on a shared machine a steadier measure of a request's
// work than its wall time (the database's own CPU is not counted).
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkContractQueryUnbatched is the canary: it fetches the same data
// object by object, one request per researcher and per paper, the way an
// unbatched API would read it. Its statements/op grows with the page size,
// where BenchmarkContractQuery's stays at contractStatements.
func BenchmarkContractQueryUnbatched(b *testing.B) {
	bdb := dbtest.Open(b, dbtest.NewSeeded(b, "sqlite", fixtures))
	counter := &db.StatementCounter{}
	bdb.AddQueryHook(counter)
	c := newClient(bdb)
	id := busiestPaper(b, bdb)
	for _, first := range []int{5, 50} {
		b.Run(fmt.Sprintf("first=%d", first), func(b *testing.B) {
			start := counter.Count()
			b.ReportAllocs()
			for b.Loop() {
				unbatchedContract(b, c, id, first)
			}
			b.ReportMetric(float64(counter.Count()-start)/float64(b.N), "statements/op")
		})
	}
}

// post sends query and decodes only the fields out names.
func post(b *testing.B, c *client.Client, query string, out any, opts ...client.Option) {
	resp, err := c.RawPost(query, opts...)
	if err != nil || resp.Errors != nil {
		b.Fatalf("%v %s", err, resp.Errors)
	}
	data, err := json.Marshal(resp.Data)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		b.Fatal(err)
	}
}

func unbatchedContract(b *testing.B, c *client.Client, id string, first int) {
	var paper struct {
		Paper struct {
			Authors []struct{ Researcher *struct{ ResearcherID int } }
		}
	}
	post(b, c, `query($id: String!) { paper(id: $id) {
		arxivId slug title published absUrl pdfUrl citedByCount citationCount
		primaryCategory { code name } categories { code name }
		citations(first: 3) { totalCount nodes { arxivId } } references(first: 3) { totalCount }
		authors { position role name researcher { researcherId } } } }`, &paper, client.Var("id", id))
	for _, a := range paper.Paper.Authors {
		if a.Researcher == nil {
			continue
		}
		var r struct {
			Researcher struct {
				Papers struct{ Nodes []struct{ ArxivID string } }
			}
		}
		post(b, c, `query($id: String!, $first: Int!) { researcher(id: $id) {
			id name slug paperCount hIndex archiveHIndex citedByCount worksCount
			authorPositions { role count } positionKnownPaperCount
			fields { category { code } count } sameName { id name paperCount archiveHIndex }
			mostCitedPaper { arxivId title citationCount }
			papers(first: $first, sort: NEWEST) { totalCount pageInfo { hasNextPage endCursor } nodes { arxivId } }
			coauthors(first: 10) { totalCount nodes { researcher { id name } sharedPaperCount } } } }`,
			&r, client.Var("id", fmt.Sprint(a.Researcher.ResearcherID)), client.Var("first", first))
		for _, n := range r.Researcher.Papers.Nodes {
			var p map[string]any
			post(b, c, `query($id: String!) { paper(id: $id) { arxivId title authors { position role researcher { id name archiveHIndex } } } }`,
				&p, client.Var("id", n.ArxivID))
		}
	}
}

// BenchmarkRootAliases serves one query of n aliases of paper(id:), each a
// different paper, with paperBelow under each: the root lookups and the
// levels below them are read together, so statements/op stays at that of
// one alias (see TestRootAliasesBatch).
//
//	go test ./resolvers -run '^$' -bench RootAliases -benchmem
func BenchmarkRootAliases(b *testing.B) {
	bdb := dbtest.Open(b, dbtest.NewSeeded(b, "sqlite", fixtures))
	counter := &db.StatementCounter{}
	bdb.AddQueryHook(counter)
	h := newHandler(bdb)
	var ids []string
	if err := bdb.NewRaw("SELECT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id LIMIT 50").Scan(b.Context(), &ids); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("aliases=%d", n), func(b *testing.B) {
			var q bytes.Buffer
			q.WriteString("{")
			for i, id := range ids[:n] {
				fmt.Fprintf(&q, " a%d: paper(id: %q) { %s }", i, id, paperBelow)
			}
			q.WriteString(" }")
			benchQuery(b, h, counter, map[string]any{"query": q.String()})
		})
	}
}
