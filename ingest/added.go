package ingest

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// addedChunk is how many paper ids of derive_added one transaction of
// deriveAdded covers (a variable for its test).
var addedChunk int64 = 20_000

// addChunk adds the papers on derive_added with the lowest ids,
// addedChunk ids of them, to their authors' figures, fields and
// co-authors, and takes them off the queue in the same transaction, so
// that a derive stopped and run again adds each paper once; errDrained
// when the queue is empty. Authors on derive_queue are recomputed whole
// instead, and those on derive_cited, or on a paper already cited, have
// their figures recomputed (the h-index and most cited paper need all
// their papers): only their fields and co-authors are added to. A new
// paper uncited moves neither of those two.
func addChunk(ctx context.Context, tx bun.Tx) error {
	from, to, ok, err := db.AddedRange(ctx, tx, addedChunk)
	if err != nil {
		return err
	}
	if !ok {
		return errDrained
	}
	if err := addPapers(ctx, tx, from, to); err != nil {
		return err
	}
	return db.DropAdded(ctx, tx, from, to)
}

// addPapers adds the papers on derive_added with ids in [from, to) to
// their authors, as deriveAdded says.
func addPapers(ctx context.Context, tx bun.Tx, from, to int64) error {
	rows, err := db.AddedAuthorships(ctx, tx, from, to)
	if err != nil || len(rows) == 0 {
		return err
	}
	var papers []int64
	for _, r := range rows {
		if n := len(papers); n == 0 || papers[n-1] != r.PaperID {
			papers = append(papers, r.PaperID)
		}
	}
	cats, err := db.CategoriesOf(ctx, tx, papers)
	if err != nil {
		return err
	}
	return countAdded(rows, cats).write(ctx, tx)
}

// researcherField is a researcher and one of the categories of their
// papers.
type researcherField struct {
	researcher int64
	category   string
}

// addedCounts is what added papers add to their authors: figures, papers
// by category and papers with each coauthor, and the authors to queue
// on derive_cited.
type addedCounts struct {
	figures map[int64]figures // by researcher
	fields  map[researcherField]int64
	pairs   map[[2]int64]int64
	cite    []int64
}

// countAdded counts what the papers of rows, in paper order, add to their
// authors; cats are the papers' categories.
func countAdded(rows []db.AddedAuthorship, cats map[int64][]string) addedCounts {
	c := addedCounts{figures: map[int64]figures{}, fields: map[researcherField]int64{}, pairs: map[[2]int64]int64{}}
	var authors []db.AddedAuthorship // of the current paper, each once, at their first position
	onPaper := map[int64]bool{}      // (a map: collaborations have thousands of authors)
	for i := 0; i < len(rows); {
		j := i
		authors = authors[:0]
		clear(onPaper)
		for ; j < len(rows) && rows[j].PaperID == rows[i].PaperID; j++ {
			if !onPaper[rows[j].ResearcherID] {
				onPaper[rows[j].ResearcherID] = true
				authors = append(authors, rows[j])
			}
		}
		i = j
		for _, a := range authors {
			if !a.Queued {
				c.addAuthor(a, authors, cats[a.PaperID])
			}
		}
	}
	return c
}

// addAuthor counts what a's paper, by authors, in categories cats, adds
// to a.
func (c *addedCounts) addAuthor(a db.AddedAuthorship, authors []db.AddedAuthorship, cats []string) {
	for _, cat := range cats {
		c.fields[researcherField{a.ResearcherID, cat}]++
	}
	if a.AuthorCount <= db.MaxCoauthorPaperAuthors {
		for _, b := range authors {
			if b.ResearcherID != a.ResearcherID {
				c.pairs[[2]int64{a.ResearcherID, b.ResearcherID}]++
			}
		}
	}
	// The citations step has put the authors of a paper cited
	// already on derive_cited; in case it has not, they go there.
	if a.Cited || a.Citations > 0 {
		if !a.Cited {
			c.cite = append(c.cite, a.ResearcherID)
		}
		return
	}
	c.figures[a.ResearcherID] = c.figures[a.ResearcherID].plus(
		figuresOf([]authoredPaper{{id: a.PaperID, position: a.Position, authors: a.AuthorCount, complete: a.AuthorsComplete}}))
}

// write adds the counts to the stored figures, categories and coauthors,
// in key order, and queues the cited.
func (c addedCounts) write(ctx context.Context, tx bun.Tx) error {
	if err := addFigures(ctx, tx, c.figures); err != nil {
		return err
	}
	if err := db.QueueCited(ctx, tx, c.cite); err != nil {
		return err
	}
	fks := slices.SortedFunc(maps.Keys(c.fields), func(a, b researcherField) int {
		return cmp.Or(cmp.Compare(a.researcher, b.researcher), cmp.Compare(a.category, b.category))
	})
	rids, codes, ns := make([]int64, len(fks)), make([]string, len(fks)), make([]int64, len(fks))
	for i, k := range fks {
		rids[i], codes[i], ns[i] = k.researcher, k.category, c.fields[k]
	}
	if err := db.AddResearcherCategories(ctx, tx, rids, codes, ns); err != nil {
		return err
	}
	pks := slices.SortedFunc(maps.Keys(c.pairs), func(a, b [2]int64) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	as, bs, ps := make([]int64, len(pks)), make([]int64, len(pks)), make([]int64, len(pks))
	for i, k := range pks {
		as[i], bs[i], ps[i] = k[0], k[1], c.pairs[k]
	}
	if err := db.AddCoauthors(ctx, tx, as, bs, ps); err != nil {
		return err
	}
	// A pair may be new: the researchers on its left are counted again.
	return db.RecountCoauthors(ctx, tx, slices.Compact(as))
}

// addFigures adds counts to researchers' stored figures; their h-index
// and most cited paper stay.
func addFigures(ctx context.Context, tx bun.Tx, added map[int64]figures) error {
	if len(added) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(added))
	for id := range added {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	stored, err := db.FiguresOf(ctx, tx, ids)
	if err != nil {
		return err
	}
	ids = ids[:0]
	cols := make([][]int64, 7)
	var tops []*int64
	for _, s := range stored {
		f := added[s.ID].plus(figures{papers: s.Papers, known: s.Known, sole: s.Sole, first: s.First, middle: s.Middle, last: s.Last})
		ids = append(ids, s.ID)
		for j, v := range []int64{f.papers, f.known, f.sole, f.first, f.middle, f.last, s.H} {
			cols[j] = append(cols[j], v)
		}
		tops = append(tops, s.Top)
	}
	return db.SetFigures(ctx, tx, ids, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], tops)
}

// plus is f with g's counts added (not the h-index or most cited paper,
// which do not add up).
func (f figures) plus(g figures) figures {
	f.papers += g.papers
	f.known += g.known
	f.sole += g.sole
	f.first += g.first
	f.middle += g.middle
	f.last += g.last
	return f
}
