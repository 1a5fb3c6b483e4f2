package main_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/internal/searchquality"
	"github.com/papergraph/papergraph/resolvers"
)

// checkSearchFloor holds searchPapers' default mode, searched as `serve`
// searches it (the built-in embeddings behind a vector index), to the
// floor of the repository's query sets: the known items' paper first for
// at least 95% of them, and the paraphrases' paper in the first ten at
// least as often as KEYWORD finds it. Only a client with the index sees
// the default mode's fusion, so search tests without one miss a fall.
func checkSearchFloor(t *testing.T, bdb *bun.DB) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live, done, err := embed.StartIndex(ctx, bdb, embed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	srv := handler.New(resolvers.NewSchema(bdb))
	srv.AddTransport(transport.POST{})
	srv.SetErrorPresenter(resolvers.ErrorPresenter)
	mw := resolvers.Middleware(bdb)(srv)
	c := client.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mw.ServeHTTP(w, r.WithContext(resolvers.WithVectors(r.Context(), live)))
	}))
	measure := func(file, mode string) searchquality.Row {
		qs, err := searchquality.ReadSet(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) == 0 {
			t.Fatalf("%s holds no query", file)
		}
		row, err := searchquality.Measure(c, file, mode, qs)
		if err != nil {
			t.Fatal(err)
		}
		return row
	}

	known := measure("../../resolvers/testdata/known_items.tsv", "")
	if known.At1*100 < known.Queries*95 {
		t.Errorf("default mode: known items first %d/%d, want at least 95%%; not first:\n%s",
			known.At1, known.Queries, listMisses(known.MissesAt1))
	}
	const para = "../../resolvers/testdata/paraphrase_queries.tsv"
	def, kw := measure(para, ""), measure(para, "KEYWORD")
	if def.At10 < kw.At10 {
		t.Errorf("default mode: paraphrases in the first ten %d/%d, KEYWORD %d/%d; not in the first ten:\n%s",
			def.At10, def.Queries, kw.At10, kw.Queries, listMisses(def.Misses))
	}
	t.Logf("default mode: known items @1 %d/%d; paraphrases @10 %d/%d (KEYWORD %d/%d)",
		known.At1, known.Queries, def.At10, def.Queries, kw.At10, kw.Queries)
}

func listMisses(ms []searchquality.Miss) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString("\t" + m.String() + "\n")
	}
	return b.String()
}
