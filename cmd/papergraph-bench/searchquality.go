package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/embed"
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

// qualityRow is how often one mode finds the papers of one query set: the
// queries whose paper comes first (At1) and among the first ten (At10),
// overall and in each half of the file (the even-numbered queries, from
// 0, and the odd-numbered), so that a ranking tuned on one half is judged
// on the other too.
type qualityRow struct {
	Set      string  `json:"set"`
	Mode     string  `json:"mode"`
	Queries  int     `json:"queries"`
	At1      int     `json:"success1"`
	At10     int     `json:"success10"`
	MRR      float64 `json:"mrr10"`
	EvenAt10 int     `json:"evenSuccess10"`
	OddAt10  int     `json:"oddSuccess10"`
	Even     int     `json:"evenQueries"`
	Misses   []miss  `json:"misses,omitempty"`
}

// miss is a query whose paper did not come in the first ten.
type miss struct {
	ArxivID string   `json:"arxivId"`
	Query   string   `json:"query"`
	Got     []string `json:"got"`
}

func cmdSearchQuality(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("search-quality", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := fs.String("db", os.Getenv("PAPERGRAPH_DB"), "the archive to search, with its embeddings (env PAPERGRAPH_DB)")
	queries := fs.String("queries", strings.Join(defaultQuerySets, ","), "comma-separated TSV `FILES` of arXiv id and query (or arXiv id, a number and query)")
	modes := fs.String("modes", strings.Join(searchModes, ","), "the searchPapers `MODES` to measure")
	misses := fs.Bool("misses", false, "list each mode's misses (paper not in the first ten) in the JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" || fs.NArg() > 0 {
		return errors.New("search-quality needs --db DSN (or PAPERGRAPH_DB) and no other arguments")
	}
	bdb, err := db.Open(*dsn)
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
	var rows []qualityRow
	for _, file := range strings.Split(*queries, ",") {
		qs, err := readQuerySet(file)
		if err != nil {
			return err
		}
		for _, mode := range strings.Split(*modes, ",") {
			row, err := measureSet(c, file, mode, qs)
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

// readQuerySet reads a TSV of queries: an arXiv id and a query, or an
// arXiv id, a number (the known items' citation count) and a query, and
// any further columns; lines starting with # are comments.
func readQuerySet(path string) ([]queryCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []queryCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 2 {
			return nil, fmt.Errorf("%s:%d: want an arXiv id, a tab and a query", path, n)
		}
		q := cols[1]
		if _, err := strconv.Atoi(q); err == nil && len(cols) > 2 {
			q = cols[2]
		}
		qs = append(qs, queryCase{strings.TrimSpace(cols[0]), strings.TrimSpace(q)})
	}
	return qs, sc.Err()
}

// measureSet posts each query of qs as searchPapers(query:, first: 10,
// mode:) and counts where its paper comes.
func measureSet(c *client.Client, set, mode string, qs []queryCase) (qualityRow, error) {
	row := qualityRow{Set: set, Mode: mode, Queries: len(qs)}
	for i, q := range qs {
		var resp struct {
			SearchPapers struct{ Nodes []struct{ ArxivID string } }
		}
		err := c.Post(`query($q: String!, $m: SearchMode!) { searchPapers(query: $q, first: 10, mode: $m) { nodes { arxivId } } }`,
			&resp, client.Var("q", q.Query), client.Var("m", mode))
		if err != nil {
			return row, fmt.Errorf("%s, %s, %q: %w", set, mode, q.Query, err)
		}
		got := make([]string, len(resp.SearchPapers.Nodes))
		for j, n := range resp.SearchPapers.Nodes {
			got[j] = n.ArxivID
		}
		if i%2 == 0 {
			row.Even++
		}
		r := slices.Index(got, q.ArxivID)
		switch {
		case r < 0:
			row.Misses = append(row.Misses, miss{q.ArxivID, q.Query, got[:min(len(got), 3)]})
			continue
		case r == 0:
			row.At1++
		}
		row.At10++
		row.MRR += 1 / float64(r+1)
		if i%2 == 0 {
			row.EvenAt10++
		} else {
			row.OddAt10++
		}
	}
	if row.Queries > 0 {
		row.MRR /= float64(row.Queries)
	}
	return row, nil
}
