package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/embed"
)

// queryCase is a natural-language query and the paper it looks for.
type queryCase struct {
	ArxivID, Query string
}

// readQueries reads a TSV of arXiv id and query, one a line, # comments.
func readQueries(path string) ([]queryCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []queryCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, q, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want an arXiv id, a tab and a query", path, n)
		}
		qs = append(qs, queryCase{strings.TrimSpace(id), strings.TrimSpace(q)})
	}
	return qs, sc.Err()
}

// queryQuality is how well the active model's vectors alone find each
// query's paper: the share in the top 10 and the mean reciprocal rank.
type queryQuality struct {
	Model   string  `json:"model"`
	Queries int     `json:"queries"`
	Missing int     `json:"papersNotInArchive"`
	Top10   float64 `json:"top10"`
	MRR     float64 `json:"mrr"`
}

// measureQueries ranks every paper by cosine to each query, reading the
// vectors once.
func measureQueries(ctx context.Context, bdb *bun.DB, qs []queryCase) (*queryQuality, error) {
	e, err := embed.Active(ctx, bdb, embed.Config{})
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Query
	}
	qv, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	targets := make([]int64, len(qs))
	for i, q := range qs {
		var id int64
		err := bdb.NewSelect().TableExpr("papers").Column("id").Where("arxiv_id = ?", q.ArxivID).Scan(ctx, &id)
		if err != nil {
			id = -1
		}
		targets[i] = id
	}
	// For each query, the target's score and how many papers beat it.
	best := make([]float64, len(qs))
	above := make([]int, len(qs))
	var ids []int64
	var scores [][]float64
	err = db.EachPaperVector(ctx, bdb, e.Name(), func(id int64, v []float32) error {
		ids = append(ids, id)
		s := make([]float64, len(qs))
		for i := range qs {
			s[i] = cosine(qv[i], v)
			if id == targets[i] {
				best[i] = s[i]
			}
		}
		scores = append(scores, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &queryQuality{Model: e.Name(), Queries: len(qs)}
	for i := range qs {
		if !slices.Contains(ids, targets[i]) {
			out.Missing++
			continue
		}
		for j, s := range scores {
			if ids[j] != targets[i] && s[i] > best[i] {
				above[i]++
			}
		}
		if above[i] < 10 {
			out.Top10++
		}
		out.MRR += 1 / float64(above[i]+1)
	}
	if n := float64(len(qs) - out.Missing); n > 0 {
		out.Top10, out.MRR = out.Top10/n, out.MRR/n
	}
	return out, nil
}

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
