package ingest

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
)

// paperKeys are the ids a paper can be matched by, strongest first.
func paperKeys(p *db.Paper) []string {
	return idKeys("arxiv:", p.ArxivID, "doi:", p.DOI, "openalex:", p.OpenAlexID, "s2:", p.S2ID)
}

// pending is one paper of a batch on its way to its row.
type pending struct {
	row   *db.Paper
	isNew bool
	// changed says the row differs from what is stored; dateMoved that
	// its first-version date does.
	changed, dateMoved bool
	// cats are the canonical category codes the sources give (nil if
	// none); writeCats says they replace the stored list.
	cats      []string
	writeCats bool
	// authors is the record whose author list is to be written, nil to
	// keep the stored list.
	authors *Paper
	refs    []string
}

// published is the paper's first-version date as the rows that carry it
// store it (category rows, authorships, references): nil when it has none.
func (p *pending) published() *time.Time {
	if p.row.Published.IsZero() {
		return nil
	}
	return &p.row.Published
}

// writePapers merges the batch's papers into one row each, matches them
// to the stored rows and writes what changed.
func (w *writer) writePapers(ctx context.Context, tx bun.Tx, in []*Paper) (Counts, error) {
	var c Counts
	if len(in) == 0 {
		return c, nil
	}
	todo, skipped := mergeBatch(in)
	c.Skipped = skipped
	todo, err := w.matchExisting(ctx, tx, todo)
	if err != nil {
		return c, err
	}
	inserts, updates, unchanged := sortPending(todo)
	c.Inserted, c.Updated, c.Unchanged = len(inserts), len(updates), unchanged
	return c, w.storePapers(ctx, tx, todo, inserts, updates)
}

// mergeBatch merges the papers of a batch that share a key, so that each
// row is written once, and counts those with no key to place them by.
func mergeBatch(in []*Paper) (todo []*pending, skipped int) {
	byKey := map[string]*pending{}
	for _, p := range in {
		if p.row == nil {
			prepare(p)
		}
		row := p.row
		keys := paperKeys(row)
		if len(keys) == 0 {
			skipped++
			continue
		}
		var hit *pending
		for _, k := range keys {
			if h := byKey[k]; h != nil && !twoArxivPapers(h.row, row) {
				hit = h
				break
			}
		}
		cats := canonicalCategories(p.Categories)
		if hit == nil {
			hit = &pending{row: row, isNew: true, cats: cats, refs: p.References}
			if len(p.Authors) > 0 {
				hit.authors = p
			}
			todo = append(todo, hit)
		} else {
			_, newer, better := mergeRow(hit.row, row)
			if cats != nil && (hit.cats == nil || newer) {
				hit.cats = cats
			}
			if better {
				hit.authors = p
			}
			hit.refs = append(hit.refs, p.References...)
		}
		for _, k := range paperKeys(hit.row) {
			byKey[k] = hit
		}
	}
	return todo, skipped
}

// authorsMoved returns the stored papers of ps whose change moves what
// their authors' derived figures are made of: a new author list (and with
// it the author count and whether it is whole), a new first-version date
// (which breaks ties for the most cited paper), or categories other than
// those stored (fields). A new version that changes its title, abstract
// or comments, as most do, moves none of them; a new citation count is
// derive's to see (db.ResolveReferences).
func authorsMoved(ctx context.Context, tx bun.Tx, ps []*pending) ([]*pending, error) {
	var out, cats []*pending
	for _, p := range ps {
		switch {
		case p.authors != nil || p.dateMoved:
			out = append(out, p)
		case p.writeCats:
			cats = append(cats, p)
		}
	}
	if len(cats) == 0 {
		return out, nil
	}
	ids := make([]int64, len(cats))
	for i, p := range cats {
		ids[i] = p.row.ID
	}
	stored, err := db.CategoriesOf(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	for _, p := range cats {
		if !slices.Equal(stored[p.row.ID], p.cats) {
			out = append(out, p)
		}
	}
	return out, nil
}

// sortPending splits the matched batch into new rows and changed ones,
// and counts the unchanged.
func sortPending(todo []*pending) (inserts, updates []*pending, unchanged int) {
	for _, p := range todo {
		switch {
		case p.isNew:
			p.writeCats = p.cats != nil
			inserts = append(inserts, p)
		case p.changed:
			updates = append(updates, p)
		default:
			unchanged++
		}
		if p.writeCats {
			p.row.PrimaryCategory = p.cats[0]
		}
	}
	return inserts, updates, unchanged
}

// storePapers writes the rows of a batch and what hangs on them:
// categories, authors, references, and the derive queue.
func (w *writer) storePapers(ctx context.Context, tx bun.Tx, todo, inserts, updates []*pending) error {
	if err := w.ensureCategories(ctx, tx, todo); err != nil {
		return err
	}
	if err := insertPapers(ctx, tx, inserts); err != nil {
		return err
	}
	if err := updatePapers(ctx, tx, updates); err != nil {
		return err
	}
	// The authors of a changed paper, before and after, need their
	// derived figures recomputed when what those are made of changed.
	moved, err := authorsMoved(ctx, tx, updates)
	if err != nil {
		return err
	}
	if err := queueAuthors(ctx, tx, moved); err != nil {
		return err
	}
	written := append(inserts, updates...)
	if err := writeCategories(ctx, tx, written); err != nil {
		return err
	}
	// The old authors of updated papers are queued above; the new ones
	// of every updated paper are queued here. A new paper's authors have
	// it added to their figures (db.QueueAddedPapers), unless it is a bulk
	// load; the profiles it creates are queued as they are made.
	queue, recompute, err := w.writeAuthors(ctx, tx, written)
	if err != nil {
		return err
	}
	if err := db.QueueResearchers(ctx, tx, recompute); err != nil {
		return err
	}
	if !w.bulk {
		var added []int64
		for _, p := range inserts {
			if p.authors != nil {
				added = append(added, p.row.ID)
			}
		}
		if err := db.QueueAddedPapers(ctx, tx, added); err != nil {
			return err
		}
	}
	ids := make([]int64, len(written))
	for i, p := range written {
		ids[i] = p.row.ID
	}
	// Their citation counts are checked by derive.
	if err := db.QueuePapers(ctx, tx, ids); err != nil {
		return err
	}
	w.papers = append(w.papers, ids...)
	w.people = append(w.people, queue...)
	return writeReferences(ctx, tx, todo)
}

// twoArxivPapers reports whether a and b are different arXiv papers, which
// a shared DOI (an erratum, a joint journal version) must not join.
func twoArxivPapers(a, b *db.Paper) bool {
	return a.ArxivID != "" && b.ArxivID != "" && a.ArxivID != b.ArxivID
}

// matchExisting finds the stored rows of the batch's papers and merges each
// incoming paper into its row. Papers of the batch that turn out to be one
// stored paper (one known by arXiv id, another by its DOI) are folded into
// one; it returns the batch as it then stands.
func (w *writer) matchExisting(ctx context.Context, tx bun.Tx, todo []*pending) ([]*pending, error) {
	var k db.PaperKeys
	for _, p := range todo {
		r := p.row
		if r.ArxivID != "" {
			k.ArxivIDs = append(k.ArxivIDs, r.ArxivID)
		}
		if r.DOI != "" {
			k.DOIs = append(k.DOIs, r.DOI)
		}
		if r.OpenAlexID != "" {
			k.OpenAlexIDs = append(k.OpenAlexIDs, r.OpenAlexID)
		}
		if r.S2ID != "" {
			k.S2IDs = append(k.S2IDs, r.S2ID)
		}
	}
	rows, err := db.PapersByKeys(ctx, tx, k)
	if err != nil {
		return nil, err
	}
	stored := map[string]*db.Paper{}
	for _, r := range rows {
		for _, k := range paperKeys(r) {
			// A DOI can be shared (errata, conference and journal
			// versions); the first row found keeps it.
			if stored[k] == nil {
				stored[k] = r
			}
		}
	}
	for _, p := range todo {
		for _, k := range paperKeys(p.row) {
			old := stored[k]
			if old == nil {
				continue
			}
			if twoArxivPapers(old, p.row) {
				continue
			}
			hadPrimary := old.PrimaryCategory != ""
			published := old.Published
			changed, newer, better := mergeRow(old, p.row)
			p.row, p.isNew = old, false
			p.dateMoved = !old.Published.Equal(published)
			p.writeCats = p.cats != nil && (!hadPrimary || newer)
			if !better {
				p.authors = nil
			}
			p.changed = changed || p.writeCats
			break
		}
	}
	return foldSameRow(todo), nil
}

// foldSameRow folds pendings that matched the same stored row into the
// first of them. mergeRow has merged each into that row in turn, so a later
// one's authors or categories, when it has any to write, are the better.
func foldSameRow(todo []*pending) []*pending {
	first := map[*db.Paper]*pending{}
	out := todo[:0]
	for _, p := range todo {
		f := first[p.row]
		if p.isNew || f == nil {
			first[p.row] = p
			out = append(out, p)
			continue
		}
		f.changed = f.changed || p.changed
		f.dateMoved = f.dateMoved || p.dateMoved
		if p.authors != nil {
			f.authors = p.authors
		}
		if p.writeCats {
			f.cats, f.writeCats = p.cats, true
		}
		f.refs = append(f.refs, p.refs...)
	}
	return out
}

// newPaperRow turns an incoming paper into the row it would be on its own.
func newPaperRow(p *Paper) *db.Paper {
	r := &db.Paper{
		ArxivID:         p.ArxivID,
		Version:         p.Version,
		Title:           clean(p.Title),
		Abstract:        clean(p.Abstract),
		Comments:        clean(p.Comments),
		JournalRef:      clean(p.JournalRef),
		ReportNo:        clean(p.ReportNo),
		License:         strings.TrimSpace(p.License),
		Published:       day(p.Published),
		Updated:         day(p.Updated),
		Byline:          clean(p.Byline),
		CitedByCount:    p.CitedByCount,
		OpenAlexID:      p.OpenAlexID,
		S2ID:            p.S2ID,
		AuthorCount:     len(p.Authors),
		AuthorsComplete: p.AuthorsComplete && len(p.Authors) > 0,
		AuthorsScore:    authorsScore(p),
	}
	if p.CitedByCount != nil && p.CitedBySource != "" {
		r.CitedBySource, r.CitedByAt = p.CitedBySource, day(time.Now())
	}
	if d, ok := arxivid.NormalizeDOI(p.DOI); ok {
		r.DOI = d
	}
	if r.Byline == "" && len(p.Authors) > 0 {
		r.Byline = bylineOf(p.Authors)
	}
	if r.Published.IsZero() && r.ArxivID != "" {
		r.Published = arxivid.Month(r.ArxivID)
	}
	return r
}

// mergeRow merges in into old following the weaving rules: a newer
// version's values win; otherwise a source only fills what is missing;
// nothing is ever blanked. It reports whether old changed, whether in is
// a newer version, and whether in's author list is the better one.
func mergeRow(old, in *db.Paper) (changed, newer, betterAuthors bool) {
	before := *old
	newer = in.Version > old.Version
	for _, f := range []struct{ dst, src *string }{
		{&old.ArxivID, &in.ArxivID},
		{&old.DOI, &in.DOI},
		{&old.Title, &in.Title},
		{&old.Abstract, &in.Abstract},
		{&old.Comments, &in.Comments},
		{&old.JournalRef, &in.JournalRef},
		{&old.ReportNo, &in.ReportNo},
		{&old.License, &in.License},
		{&old.OpenAlexID, &in.OpenAlexID},
		{&old.S2ID, &in.S2ID},
	} {
		if *f.src != "" && (*f.dst == "" || newer) {
			*f.dst = *f.src
		}
	}
	if newer {
		old.Version = in.Version
	}
	// Published is the first version's date: a real date beats the month
	// an arXiv id implies, and an earlier real date beats a later one.
	switch {
	case in.Published.IsZero() || isMonthOf(in):
	case old.Published.IsZero() || isMonthOf(old) || in.Published.Before(old.Published):
		old.Published = in.Published
	}
	if in.Updated.After(old.Updated) {
		old.Updated = in.Updated
	}
	if in.CitedByCount != nil && (old.CitedByCount == nil || *in.CitedByCount > *old.CitedByCount) {
		v := *in.CitedByCount
		old.CitedByCount = &v
		old.CitedBySource, old.CitedByAt = in.CitedBySource, in.CitedByAt
	} else if in.CitedByCount != nil && *in.CitedByCount == *old.CitedByCount && old.CitedBySource == "" {
		// The same count, from a source now known.
		old.CitedBySource, old.CitedByAt = in.CitedBySource, in.CitedByAt
	}
	if in.AuthorsScore > old.AuthorsScore {
		old.AuthorsScore = in.AuthorsScore
		old.AuthorCount = in.AuthorCount
		old.AuthorsComplete = in.AuthorsComplete
		old.Byline = in.Byline
		betterAuthors = true
	}
	return !samePaper(&before, old), newer, betterAuthors
}

func samePaper(a, b *db.Paper) bool {
	x, y := *a, *b
	x.CitedByCount, y.CitedByCount = nil, nil
	return x == y && (a.CitedByCount == nil) == (b.CitedByCount == nil) &&
		(a.CitedByCount == nil || *a.CitedByCount == *b.CitedByCount)
}

// isMonthOf reports whether r's published date is only the month its
// arXiv id implies, not a real date.
func isMonthOf(r *db.Paper) bool {
	return r.ArxivID != "" && !r.Published.IsZero() && r.Published.Equal(arxivid.Month(r.ArxivID))
}

func insertPapers(ctx context.Context, tx bun.Tx, ps []*pending) error {
	if len(ps) == 0 {
		return nil
	}
	rows := rowsOf(ps)
	got, err := db.InsertPapers(ctx, tx, rows)
	if err != nil {
		return err
	}
	// RETURNING's row order is not promised, so ids are matched back by key.
	ids := map[string]int64{}
	for i := range got {
		ids[paperKeys(&got[i])[0]] = got[i].ID
	}
	for _, r := range rows {
		r.ID = ids[paperKeys(r)[0]]
	}
	return nil
}

// rowsOf returns the rows of ps.
func rowsOf(ps []*pending) []*db.Paper {
	rows := make([]*db.Paper, len(ps))
	for i, p := range ps {
		rows[i] = p.row
	}
	return rows
}

func updatePapers(ctx context.Context, tx bun.Tx, ps []*pending) error {
	if len(ps) == 0 {
		return nil
	}
	return db.UpdatePapers(ctx, tx, rowsOf(ps))
}
