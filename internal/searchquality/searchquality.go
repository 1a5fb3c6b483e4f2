// Package searchquality measures how often searchPapers finds the paper
// a query was written for. papergraph-bench search-quality reports it for
// every mode, and the demo test holds the default mode to a floor with it,
// so that both score a ranking the same way.
package searchquality

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/client"
)

// Case is a query and the arXiv id of the paper it looks for.
type Case struct {
	ArxivID, Query string
}

// Row is how often one mode finds the papers of one query set: the
// queries whose paper comes first (At1) and among the first ten (At10),
// overall and in each half of the file (the even-numbered queries, from
// 0, and the odd-numbered), so that a ranking tuned on one half is judged
// on the other too.
type Row struct {
	Set      string  `json:"set"`
	Mode     string  `json:"mode"`
	Queries  int     `json:"queries"`
	At1      int     `json:"success1"`
	At10     int     `json:"success10"`
	MRR      float64 `json:"mrr10"`
	EvenAt10 int     `json:"evenSuccess10"`
	OddAt10  int     `json:"oddSuccess10"`
	Even     int     `json:"evenQueries"`
	Misses   []Miss  `json:"misses,omitempty"`
	// MissesAt1 are the queries whose paper did not come first.
	MissesAt1 []Miss `json:"-"`
}

// Miss is a query whose paper did not come where it was wanted, with the
// first three papers that came instead.
type Miss struct {
	ArxivID string   `json:"arxivId"`
	Query   string   `json:"query"`
	Got     []string `json:"got"`
}

func (m Miss) String() string {
	return fmt.Sprintf("%s %q: got %v", m.ArxivID, m.Query, m.Got)
}

// ReadSet reads a TSV of queries: an arXiv id and a query, or an arXiv
// id, a number (the known items' citation count) and a query, and any
// further columns; lines starting with # are comments.
func ReadSet(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []Case
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
		qs = append(qs, Case{strings.TrimSpace(cols[0]), strings.TrimSpace(q)})
	}
	return qs, sc.Err()
}

// Measure posts each query of qs as searchPapers(query:, first: 10,
// mode:) and counts where its paper comes. An empty mode leaves the
// argument out, so that the default mode is measured as clients get it.
func Measure(c *client.Client, set, mode string, qs []Case) (Row, error) {
	row := Row{Set: set, Mode: mode, Queries: len(qs)}
	if mode == "" {
		row.Mode = "default"
	}
	for i, q := range qs {
		var resp struct {
			SearchPapers struct{ Nodes []struct{ ArxivID string } }
		}
		var err error
		if mode == "" {
			err = c.Post(`query($q: String!) { searchPapers(query: $q, first: 10) { nodes { arxivId } } }`,
				&resp, client.Var("q", q.Query))
		} else {
			err = c.Post(`query($q: String!, $m: SearchMode!) { searchPapers(query: $q, first: 10, mode: $m) { nodes { arxivId } } }`,
				&resp, client.Var("q", q.Query), client.Var("m", mode))
		}
		if err != nil {
			return row, fmt.Errorf("%s, %s, %q: %w", set, row.Mode, q.Query, err)
		}
		got := make([]string, len(resp.SearchPapers.Nodes))
		for j, n := range resp.SearchPapers.Nodes {
			got[j] = n.ArxivID
		}
		if i%2 == 0 {
			row.Even++
		}
		r := slices.Index(got, q.ArxivID)
		if r != 0 {
			row.MissesAt1 = append(row.MissesAt1, Miss{q.ArxivID, q.Query, got[:min(len(got), 3)]})
		}
		switch {
		case r < 0:
			row.Misses = append(row.Misses, Miss{q.ArxivID, q.Query, got[:min(len(got), 3)]})
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
