package ingest

import (
	"cmp"
	"context"
	"slices"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// deriveCoauthors writes the co-author rows of the derive batch's researchers
// (deriveResearchers has deleted their old ones): every other researcher
// on one of their papers, with the number of papers shared, and their
// co-author counts. Papers of more than db.MaxCoauthorPaperAuthors
// authors tie no one.
//
// The pairs are counted here rather than by a grouped INSERT … SELECT:
// the databases sort and group millions of pairs many times slower than
// Go sorts them in memory; the rows then go in as bound parameters in
// that order.
func deriveCoauthors(ctx context.Context, tx bun.Tx) error {
	queue, err := db.DeriveBatch(ctx, tx)
	if err != nil || len(queue) == 0 {
		return err
	}
	queued := make(map[int64]bool, len(queue))
	for _, id := range queue {
		queued[id] = true
	}
	// Every (researcher, co-author) pair once per shared paper; sorted,
	// equal pairs lie together and their run is the count.
	var pairs [][2]int64
	var authors []int64 // of the current paper, each once
	count := func() {
		for _, a := range authors {
			if !queued[a] {
				continue
			}
			for _, b := range authors {
				if b != a {
					pairs = append(pairs, [2]int64{a, b})
				}
			}
		}
		authors = authors[:0]
	}
	current := int64(-1)
	err = db.EachQueuedCoauthorship(ctx, tx, func(paper, researcher int64) error {
		if paper != current {
			count()
			current = paper
		}
		if !slices.Contains(authors, researcher) {
			authors = append(authors, researcher)
		}
		return nil
	})
	if err != nil {
		return err
	}
	count()
	// In primary-key order, each row lands next to the one before.
	slices.SortFunc(pairs, func(x, y [2]int64) int {
		if c := cmp.Compare(x[0], y[0]); c != 0 {
			return c
		}
		return cmp.Compare(x[1], y[1])
	})
	var as, bs, ns []int64
	for i, p := range pairs {
		if i > 0 && p == pairs[i-1] {
			ns[len(ns)-1]++
			continue
		}
		as, bs, ns = append(as, p[0]), append(bs, p[1]), append(ns, 1)
	}
	if err := db.InsertCoauthors(ctx, tx, as, bs, ns); err != nil {
		return err
	}
	// Every queued researcher's count, those left with none at 0: the
	// rows of a researcher lie together in as.
	counts := make([]int64, len(queue))
	for i, id := range queue {
		lo, _ := slices.BinarySearch(as, id)
		hi, _ := slices.BinarySearch(as, id+1)
		counts[i] = int64(hi - lo)
	}
	return db.SetCoauthorCounts(ctx, tx, queue, counts)
}
