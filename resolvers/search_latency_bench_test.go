package resolvers_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db/dbtest"
)

// searchLatencyQueries is the fixed list BenchmarkSearchLatency serves:
// every kind of words a search box gets, each as searchPapers with its
// count, both facets and a first page, and typeahead prefixes as suggest.
// A one-letter prefix ("a*") is refused before any SQL (db.MinPrefix), so
// the shortest prefixes here have two letters.
var searchLatencyQueries = []struct{ name, query string }{
	{"stop/the", "the"},
	{"stop/of-the", "of the"},
	{"letter/a", "a"},
	{"letter/x", "x"},
	{"letters/a-b", "a b"},
	{"prefix/th*", "th*"},
	{"prefix/co*", "co*"},
	{"prefix/chromo*", "chromo*"},
	{"common/theory", "theory"},
	{"common/field-theory", "field theory"},
	{"common/quantum-gravity", "quantum gravity"},
	{"phrase/black-hole", `"black hole" entropy`},
	{"known/monopole", "monopole condensation confinement"},
	{"rare/fivebrane", "fivebrane"},
	{"rare/slash", "string/fivebrane"},
	{"none/xyzzy", "xyzzyplugh"},
}

// searchLatencyPrefixes are suggest's prefixes: one letter, a stop word,
// a short prefix, two words.
var searchLatencyPrefixes = []string{"a", "t", "the", "wit", "quantum gra", "monopole con"}

const searchLatencyPaper = `query($q: String!) { searchPapers(query: $q, first: 20) {
	totalCount totalCountIsExact facets { categories { category { code } count } years { year count } }
	nodes { arxivId title citationCount authors { name } } } }`

const searchLatencyFiltered = `query($q: String!) { searchPapers(query: $q, filter: {categories: ["hep-th"]}, sort: MOST_CITED, first: 20) {
	totalCount facets { categories { category { code } count } years { year count } } nodes { arxivId } } }`

const searchLatencySuggest = `query($q: String!) { suggest(prefix: $q) { type label } }`

// BenchmarkSearchLatency serves searchLatencyQueries (plain, and filtered
// to hep-th sorted by citations) and searchLatencyPrefixes over the demo
// set on each database dbtest.Kinds lists, and reports each request's
// median and slowest time besides ns/op (the import takes a minute or two
// per database before the timers start):
//
//	PAPERGRAPH_TEST_POSTGRES=… go test ./resolvers -run '^$' -bench SearchLatency -benchtime 20x
//
// The goals: on PostgreSQL a median under 20 ms, no request
// over 200 ms, and within twice SQLite's time.
func BenchmarkSearchLatency(b *testing.B) {
	for _, kind := range dbtest.Kinds() {
		b.Run(kind, func(b *testing.B) {
			h := newHandler(demoDB(b, kind))
			for _, q := range searchLatencyQueries {
				b.Run("search/"+q.name, func(b *testing.B) { benchLatency(b, h, searchLatencyPaper, q.query) })
				b.Run("filtered/"+q.name, func(b *testing.B) { benchLatency(b, h, searchLatencyFiltered, q.query) })
			}
			for _, p := range searchLatencyPrefixes {
				b.Run("suggest/"+p, func(b *testing.B) { benchLatency(b, h, searchLatencySuggest, p) })
			}
		})
	}
}

// benchLatency posts query with $q = q once per iteration through h,
// fails on any error, and reports the median and the slowest request in
// milliseconds.
func benchLatency(b *testing.B, h http.Handler, query, q string) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"q": q}})
	if err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		took = append(took, time.Since(start))
		if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(took[len(took)-1])/1e6, "max-ms")
}
