package ingest

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// figures are one researcher's derived counts.
type figures struct {
	papers, known, sole, first, middle, last, h int64
	top                                         *int64 // most cited paper, nil when none is cited
}

// authoredPaper is one paper of a researcher, as the figures read it.
type authoredPaper struct {
	id, position, authors, citations int64
	complete                         bool
	published                        time.Time // zero when unknown
}

// deriveFigures recomputes the figures of the derive batch: paper
// count, author positions (counted only where the full author list is
// known), the archive h-index and the most cited paper. A profile printed
// twice on one paper ("A. Kumar, A. Kumar") counts the paper once, at its
// first position. They are computed here from one read of the queued
// researchers' authorships, and written in one UPDATE per few thousand
// researchers, rather than by grouped SQL, which sorts every authorship
// of the queued researchers in the database.
func deriveFigures(ctx context.Context, tx bun.Tx) error {
	var ids []int64
	var figs []figures
	var papers []authoredPaper
	current := int64(-1)
	flush := func() {
		if current >= 0 {
			ids = append(ids, current)
			figs = append(figs, figuresOf(papers))
		}
		papers = papers[:0]
	}
	err := db.EachQueuedAuthorship(ctx, tx, func(a db.QueuedAuthorship) error {
		if a.ResearcherID != current {
			flush()
			current = a.ResearcherID
		}
		// Rows come by paper and position: a second row of the same
		// paper is the same researcher printed again, later.
		if n := len(papers); n > 0 && papers[n-1].id == a.PaperID {
			return nil
		}
		papers = append(papers, authoredPaper{id: a.PaperID, position: a.Position, authors: a.AuthorCount,
			citations: a.Citations, complete: a.AuthorsComplete, published: a.Published})
		return nil
	})
	if err != nil {
		return err
	}
	flush()
	// Queued researchers left without papers drop to zero.
	none, err := db.QueuedWithoutPapers(ctx, tx)
	if err != nil {
		return err
	}
	for _, id := range none {
		ids = append(ids, id)
		figs = append(figs, figures{})
	}
	cols := make([][]int64, 7)
	tops := make([]*int64, len(figs))
	for i, f := range figs {
		for j, v := range []int64{f.papers, f.known, f.sole, f.first, f.middle, f.last, f.h} {
			cols[j] = append(cols[j], v)
		}
		tops[i] = f.top
	}
	return db.SetFigures(ctx, tx, ids, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], tops)
}

// figuresOf computes a researcher's figures from their papers, each once.
func figuresOf(ps []authoredPaper) figures {
	var f figures
	f.papers = int64(len(ps))
	for _, p := range ps {
		if !p.complete {
			continue
		}
		f.known++
		switch {
		case p.authors == 1:
			f.sole++
		case p.authors > 1 && p.position == 1:
			f.first++
		case p.authors > 1 && p.position == p.authors:
			f.last++
		case p.position > 1 && p.position < p.authors:
			f.middle++
		}
	}
	// Most cited first; among equals the newest (a paper without a date
	// after those with one, on both databases), then the lowest id.
	slices.SortFunc(ps, func(a, b authoredPaper) int {
		if c := cmp.Compare(b.citations, a.citations); c != 0 {
			return c
		}
		if c := b.published.Compare(a.published); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for i, p := range ps {
		if p.citations >= int64(i+1) {
			f.h = int64(i + 1)
		}
	}
	if len(ps) > 0 && ps[0].citations > 0 {
		id := ps[0].id
		f.top = &id
	}
	return f
}

// deriveFields recomputes the queued researchers' fields: the papers
// they have in each category.
func deriveFields(ctx context.Context, tx bun.Tx) error {
	type field struct {
		category string
		papers   int64
	}
	var rids, counts []int64
	var cats []string
	var fields []field // of the current researcher
	flush := func(rid int64) {
		slices.SortFunc(fields, func(a, b field) int { return cmp.Compare(a.category, b.category) })
		for _, f := range fields {
			rids, cats, counts = append(rids, rid), append(cats, f.category), append(counts, f.papers)
		}
		fields = fields[:0]
	}
	current, paper, first := int64(-1), int64(-1), int64(0)
	err := db.EachQueuedCategory(ctx, tx, func(rid, p, position int64, cat []byte) error {
		if rid != current {
			if current >= 0 {
				flush(current)
			}
			current, paper = rid, -1
		}
		if p != paper {
			paper, first = p, position
		}
		if position != first {
			return nil // the researcher printed again on the paper
		}
		i := slices.IndexFunc(fields, func(f field) bool { return f.category == string(cat) })
		if i < 0 {
			fields = append(fields, field{category: string(cat)})
			i = len(fields) - 1
		}
		fields[i].papers++
		return nil
	})
	if err != nil {
		return err
	}
	if current >= 0 {
		flush(current)
	}
	return db.InsertResearcherCategories(ctx, tx, rids, cats, counts)
}
