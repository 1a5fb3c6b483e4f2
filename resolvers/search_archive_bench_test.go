//go:build unix

package resolvers_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/papergraph/papergraph/db"
)

// searchArchive and searchWords are BenchmarkSearchArchive's archive, as
// papergraph's --db takes it, and its comma-separated queries.
var (
	searchArchive = flag.String("search-archive", "", "database (SQLite file or postgres:// URL) BenchmarkSearchArchive searches, read only")
	searchWords   = flag.String("search-words", "accreting,quantum", "comma-separated queries BenchmarkSearchArchive searches for")
)

// BenchmarkSearchArchive serves the bench mix's search (papergraph-bench
// run's search-rare and search-common: a relevance page of 20 with its
// count and both facets) in process over an archive imported beforehand,
// read only, and reports besides ns/op and allocations the process's CPU
// time and the statements of a request:
//
//	go test ./resolvers -run '^$' -bench SearchArchive -benchmem -search-archive c300k.db
//
// With -v it logs each query's answer first. Without -search-archive it
// is skipped: it needs a large archive.
func BenchmarkSearchArchive(b *testing.B) {
	if *searchArchive == "" {
		b.Skip("no -search-archive")
	}
	bdb, err := db.OpenReader(*searchArchive, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bdb.Close() })
	counter := &db.StatementCounter{}
	bdb.AddQueryHook(counter)
	h := newHandler(bdb)
	const query = `query($q: String!) { searchPapers(query: $q, sort: RELEVANCE, first: 20) {
		totalCount facets { categories { category { code } count } years { year count } } nodes { arxivId title citationCount } } }`
	for _, q := range strings.Split(*searchWords, ",") {
		b.Run(q, func(b *testing.B) {
			if testing.Verbose() {
				body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"q": q}})
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				h.ServeHTTP(rec, req)
				b.Log(rec.Body.String())
			}
			var before, after syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			benchQuery(b, h, counter, map[string]any{"query": query, "variables": map[string]any{"q": q}})
			syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
