package resolvers_test

import (
	"testing"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// BenchmarkSearch serves search and typeahead queries in process over the
// demo set on each database dbtest.Kinds lists (the import takes a while
// before the timer starts):
//
//	go test ./resolvers -run '^$' -bench 'Search|Suggest' -benchmem
//
// ns/op is the latency of one request; for suggest, the goal is a p50 of
// 20 ms or less.
func BenchmarkSearch(b *testing.B) {
	for _, kind := range dbtest.Kinds() {
		b.Run(kind, func(b *testing.B) { benchmarkSearch(b, kind) })
	}
}

func benchmarkSearch(b *testing.B, kind string) {
	bdb := demoDB(b, kind)
	counter := &db.StatementCounter{}
	bdb.AddQueryHook(counter)
	h := newHandler(bdb)
	for _, bc := range []struct{ name, query string }{
		{"searchPapers/relevance", `{ searchPapers(query: "black hole entropy", first: 20) { totalCount nodes { arxivId title published authors { name } } } }`},
		{"searchPapers/phrase+prefix", `{ searchPapers(query: "\"string theory\" dual*", first: 20) { nodes { arxivId title } } }`},
		{"searchPapers/filter+facets", `{ searchPapers(query: "gauge", filter: {categories: ["hep-th"]}, sort: MOST_CITED) {
			totalCount facets { categories { category { code } count } years { year count } } nodes { arxivId } } }`},
		{"suggest/all", `{ suggest(prefix: "wit") { type label target { ... on Node { id } } } }`},
		{"suggest/two-words", `{ suggest(prefix: "quantum gra") { type label target { ... on Node { id } } } }`},
		{"searchResearchers", `{ searchResearchers(query: "li") { nodes { name paperCount } } }`},
	} {
		b.Run(bc.name, func(b *testing.B) { benchQuery(b, h, counter, map[string]any{"query": bc.query}) })
	}
}
