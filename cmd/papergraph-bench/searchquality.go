package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/internal/searchquality"
	"github.com/papergraph/papergraph/resolvers"
)

// defaultQuerySets are the query files of the repository, written for the
// demo set: known items (three title words, measured at 1), paraphrases
// (no title word) and natural-language questions (measured at 10).
var defaultQuerySets = []string{
	"resolvers/testdata/known_items.tsv",
	"resolvers/testdata/paraphrase_queries.tsv",
	"cmd/papergraph-bench/testdata/demo-queries.tsv",
}

// searchModes are searchPapers' modes, in the order they are reported.
var searchModes = []string{"KEYWORD", "SEMANTIC", "HYBRID"}

func cmdSearchQuality(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("search-quality", stderr)
	dsn := fs.String("db", os.Getenv("PAPERGRAPH_DB"), "the archive to search, with its embeddings (env PAPERGRAPH_DB)")
	queries := fs.String("queries", strings.Join(defaultQuerySets, ","), "comma-separated TSV `FILES` of arXiv id and query (or arXiv id, a number and query)")
	modes := fs.String("modes", strings.Join(searchModes, ","), "the searchPapers `MODES` to measure")
	misses := fs.Bool("misses", false, "list each mode's misses (paper not in the first ten) in the JSON")
	bdb, err := openArchive(fs, args, dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	live, done, err := embed.StartIndex(ctx, bdb, embed.Config{})
	if err != nil {
		return fmt.Errorf("the archive has no complete embeddings (run papergraph embed): %w", err)
	}
	<-done
	srv := handler.New(resolvers.NewSchema(bdb))
	srv.AddTransport(transport.POST{})
	srv.SetErrorPresenter(resolvers.ErrorPresenter)
	mw := resolvers.Middleware(bdb)(srv)
	c := client.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mw.ServeHTTP(w, r.WithContext(resolvers.WithVectors(r.Context(), live)))
	}))
	var rows []searchquality.Row
	for _, file := range strings.Split(*queries, ",") {
		qs, err := searchquality.ReadSet(file)
		if err != nil {
			return err
		}
		for _, mode := range strings.Split(*modes, ",") {
			row, err := searchquality.Measure(c, file, mode, qs)
			if err != nil {
				return err
			}
			if !*misses {
				row.Misses = nil
			}
			rows = append(rows, row)
		}
	}
	fmt.Fprintf(stderr, "%-50s %-8s %7s %7s %5s %9s %9s\n", "set", "mode", "@1", "@10", "mrr", "even @10", "odd @10")
	for _, r := range rows {
		fmt.Fprintf(stderr, "%-50s %-8s %3d/%-3d %3d/%-3d %.3f %4d/%-4d %4d/%-4d\n", r.Set, r.Mode, r.At1, r.Queries,
			r.At10, r.Queries, r.MRR, r.EvenAt10, r.Even, r.OddAt10, r.Queries-r.Even)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"database": bdb.Dialect().Name().String(), "sets": rows})
}
