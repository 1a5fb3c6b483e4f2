package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/names"
)

// Counts tallies what a write did to the records it was given.
type Counts struct {
	Inserted  int
	Updated   int
	Unchanged int
	Skipped   int // records with nothing to place them by
}

func (c *Counts) add(o Counts) {
	c.Inserted += o.Inserted
	c.Updated += o.Updated
	c.Unchanged += o.Unchanged
	c.Skipped += o.Skipped
}

// writer upserts batches of records, one transaction per batch. It keeps
// the researcher lookups of the current import in memory, so that a name
// seen in many papers costs one query in all.
type writer struct {
	db          *bun.DB
	researchers *researcherIndex
	categories  map[string]bool // codes known to be in the categories table
}

func newWriter(bdb *bun.DB) *writer {
	return &writer{db: bdb, researchers: newResearcherIndex(), categories: map[string]bool{}}
}

// write stores one batch in one transaction. On error nothing of the batch
// is kept and the in-memory indexes are reset, since they may hold rows
// the rolled-back transaction created.
func (w *writer) write(ctx context.Context, batch []Record) (Counts, error) {
	var papers []*Paper
	var people []*Researcher
	var insts []*Institution
	for _, r := range batch {
		switch r := r.(type) {
		case *Paper:
			papers = append(papers, r)
		case *Researcher:
			people = append(people, r)
		case *Institution:
			insts = append(insts, r)
		}
	}
	var c Counts
	err := w.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ic, err := writeInstitutions(ctx, tx, insts)
		if err != nil {
			return fmt.Errorf("institutions: %w", err)
		}
		rc, err := w.writeResearchers(ctx, tx, people)
		if err != nil {
			return fmt.Errorf("researchers: %w", err)
		}
		pc, err := w.writePapers(ctx, tx, papers)
		if err != nil {
			return fmt.Errorf("papers: %w", err)
		}
		c.add(ic)
		c.add(rc)
		c.add(pc)
		return nil
	})
	if err != nil {
		w.researchers = newResearcherIndex()
		w.categories = map[string]bool{}
		return Counts{}, err
	}
	return c, nil
}

// paperKeys are the ids a paper can be matched by, strongest first.
func paperKeys(p *db.Paper) []string {
	var ks []string
	if p.ArxivID != "" {
		ks = append(ks, "arxiv:"+p.ArxivID)
	}
	if p.DOI != "" {
		ks = append(ks, "doi:"+p.DOI)
	}
	if p.OpenAlexID != "" {
		ks = append(ks, "openalex:"+p.OpenAlexID)
	}
	if p.S2ID != "" {
		ks = append(ks, "s2:"+p.S2ID)
	}
	return ks
}

// pending is one paper of a batch on its way to its row.
type pending struct {
	row   *db.Paper
	isNew bool
	// changed says the row differs from what is stored.
	changed bool
	// cats are the canonical category codes the sources give (nil if
	// none); writeCats says they replace the stored list.
	cats      []string
	writeCats bool
	// authors is the record whose author list is to be written, nil to
	// keep the stored list.
	authors *Paper
	refs    []string
}

func (w *writer) writePapers(ctx context.Context, tx bun.Tx, in []*Paper) (Counts, error) {
	var c Counts
	if len(in) == 0 {
		return c, nil
	}
	// Merge duplicates inside the batch first, so each row is written once.
	var todo []*pending
	byKey := map[string]*pending{}
	for _, p := range in {
		if p.row == nil {
			prepare(p)
		}
		row := p.row
		keys := paperKeys(row)
		if len(keys) == 0 {
			c.Skipped++
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
	todo, err := w.matchExisting(ctx, tx, todo)
	if err != nil {
		return c, err
	}
	var inserts, updates []*pending
	for _, p := range todo {
		switch {
		case p.isNew:
			p.writeCats = p.cats != nil
			inserts = append(inserts, p)
		case p.changed:
			updates = append(updates, p)
		default:
			c.Unchanged++
		}
		if p.writeCats {
			p.row.PrimaryCategory = p.cats[0]
		}
	}
	c.Inserted = len(inserts)
	c.Updated = len(updates)
	if err := w.ensureCategories(ctx, tx, todo); err != nil {
		return c, err
	}
	if err := insertPapers(ctx, tx, inserts); err != nil {
		return c, err
	}
	if err := updatePapers(ctx, tx, updates); err != nil {
		return c, err
	}
	// The authors of every changed paper, before and after, need their
	// derived figures recomputed.
	if err := queueAuthors(ctx, tx, updates); err != nil {
		return c, err
	}
	written := append(inserts, updates...)
	if err := writeCategories(ctx, tx, written); err != nil {
		return c, err
	}
	// The old authors of updated papers are queued above; the new ones
	// of every paper are queued here.
	queue, err := w.writeAuthors(ctx, tx, written)
	if err != nil {
		return c, err
	}
	if err := queueResearchers(ctx, tx, queue); err != nil {
		return c, err
	}
	return c, writeReferences(ctx, tx, todo)
}

// queueResearchers puts researchers on the derive queue.
func queueResearchers(ctx context.Context, tx bun.Tx, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	rows := make([]deriveQueueRow, len(ids))
	for i, id := range ids {
		rows[i].ResearcherID = id
	}
	_, err := tx.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx)
	return err
}

// deriveQueueRow is one entry of the derive queue.
type deriveQueueRow struct {
	bun.BaseModel `bun:"table:derive_queue"`
	ResearcherID  int64 `bun:"researcher_id,pk"`
}

// queueAuthors puts the researchers of the given papers on the derive
// queue.
func queueAuthors(ctx context.Context, tx bun.Tx, ps []*pending) error {
	if len(ps) == 0 {
		return nil
	}
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.row.ID
	}
	_, err := tx.NewRaw(`INSERT INTO derive_queue (researcher_id)
		SELECT DISTINCT researcher_id FROM authorships WHERE paper_id IN (?) AND researcher_id IS NOT NULL
		ON CONFLICT DO NOTHING`, bun.In(ids)).Exec(ctx)
	return err
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
	var arxiv, doi, oa, s2 []string
	for _, p := range todo {
		r := p.row
		if r.ArxivID != "" {
			arxiv = append(arxiv, r.ArxivID)
		}
		if r.DOI != "" {
			doi = append(doi, r.DOI)
		}
		if r.OpenAlexID != "" {
			oa = append(oa, r.OpenAlexID)
		}
		if r.S2ID != "" {
			s2 = append(s2, r.S2ID)
		}
	}
	var rows []*db.Paper
	q := tx.NewSelect().Model(&rows).Order("id")
	orIn(q, "arxiv_id", arxiv)
	orIn(q, "doi", doi)
	orIn(q, "openalex_id", oa)
	orIn(q, "s2_id", s2)
	if err := q.Scan(ctx); err != nil {
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
			changed, newer, better := mergeRow(old, p.row)
			p.row, p.isNew = old, false
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

func orIn(q *bun.SelectQuery, col string, vals []string) {
	if len(vals) > 0 {
		q.WhereOr("? IN (?)", bun.Ident(col), bun.In(vals))
	}
}

// canonicalCategories maps a source's category list to canonical codes in
// order without repeats, dropping strings that are not categories; nil
// when none is left.
func canonicalCategories(in []string) []string {
	var out []string
	for _, c := range in {
		if code, _, ok := db.CanonicalCategory(c); ok && !slices.Contains(out, code) {
			out = append(out, code)
		}
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

// authorsScore ranks how much an author list tells: a complete list beats
// a truncated one, full given names beat initials, external ids and
// affiliations add. A source replaces the stored list only with a better one.
func authorsScore(p *Paper) int {
	if len(p.Authors) == 0 {
		return 0
	}
	s := 0
	if p.AuthorsComplete {
		s += 1 << 20
	}
	if p.Byline != "" {
		s++ // the source printed the byline itself, rather than a list of names
	}
	for _, a := range p.Authors {
		s++
		if !names.InitialsOnly(a.Name) {
			s++
		}
		if a.ORCID != "" || a.OpenAlexID != "" || a.S2ID != "" {
			s += 2
		}
		if len(a.Affiliations) > 0 {
			s++
		}
	}
	return s
}

func bylineOf(as []Author) string {
	ns := make([]string, len(as))
	for i, a := range as {
		ns[i] = a.Name
	}
	return strings.Join(ns, ", ")
}

// clean collapses the line wrapping of metadata text.
// Most fields come clean from their reader; those are returned as they are.
func clean(s string) string {
	if isClean(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// isClean reports whether s has no leading, trailing or repeated space and
// no space other than ' '.
func isClean(s string) bool {
	prevSpace := true // a leading space is not clean
	for _, r := range s {
		space := unicode.IsSpace(r)
		if space && (prevSpace || r != ' ') {
			return false
		}
		prevSpace = space
	}
	return !prevSpace || s == ""
}

// day keeps times in UTC at second precision, which is what both databases
// store and compare alike.
func day(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Second)
}

// paperColumns are the columns a merge can change.
var paperColumns = []string{
	"arxiv_id", "version", "doi", "title", "abstract", "comments", "journal_ref", "report_no", "license",
	"published", "updated", "primary_category", "byline", "cited_by_count", "openalex_id", "s2_id",
	"author_count", "authors_complete", "authors_score",
}

func insertPapers(ctx context.Context, tx bun.Tx, ps []*pending) error {
	if len(ps) == 0 {
		return nil
	}
	rows := make([]*db.Paper, len(ps))
	for i, p := range ps {
		rows[i] = p.row
	}
	got, err := db.InsertColumnsReturning[db.Paper](ctx, tx, "papers", paperColumns, "id, arxiv_id, doi, openalex_id, s2_id",
		paperValues(rows)...)
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

// paperValues returns the rows' values of paperColumns, column by column,
// with NULL for what bun's model leaves NULL.
func paperValues(rows []*db.Paper) []any {
	n := len(rows)
	text := func() []*string { return make([]*string, n) }
	arxiv, doi, abstract, comments, journal, report, license := text(), text(), text(), text(), text(), text(), text()
	primary, byline, oa, s2 := text(), text(), text(), text()
	title := make([]string, n)
	version, authors, score := make([]int64, n), make([]int64, n), make([]int64, n)
	published, updated := make([]*time.Time, n), make([]*time.Time, n)
	cited := make([]*int64, n)
	complete := make([]bool, n)
	for i, r := range rows {
		arxiv[i], doi[i], abstract[i], comments[i] = nullText(r.ArxivID), nullText(r.DOI), nullText(r.Abstract), nullText(r.Comments)
		journal[i], report[i], license[i] = nullText(r.JournalRef), nullText(r.ReportNo), nullText(r.License)
		primary[i], byline[i], oa[i], s2[i] = nullText(r.PrimaryCategory), nullText(r.Byline), nullText(r.OpenAlexID), nullText(r.S2ID)
		title[i] = r.Title
		version[i], authors[i], score[i] = int64(r.Version), int64(r.AuthorCount), int64(r.AuthorsScore)
		published[i], updated[i] = nullTime(r.Published), nullTime(r.Updated)
		cited[i] = nullInt(r.CitedByCount)
		complete[i] = r.AuthorsComplete
	}
	return []any{arxiv, version, doi, title, abstract, comments, journal, report, license,
		published, updated, primary, byline, cited, oa, s2, authors, complete, score}
}

func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func nullInt(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

func updatePapers(ctx context.Context, tx bun.Tx, ps []*pending) error {
	if len(ps) == 0 {
		return nil
	}
	rows := make([]*db.Paper, len(ps))
	for i, p := range ps {
		rows[i] = p.row
	}
	q := tx.NewInsert().Model(&rows).On("CONFLICT (id) DO UPDATE")
	for _, c := range paperColumns {
		q.Set("? = EXCLUDED.?", bun.Ident(c), bun.Ident(c))
	}
	_, err := q.Exec(ctx)
	return err
}

// ensureCategories adds the codes the taxonomy lacks as flagged
// categories, so that papers keep them.
func (w *writer) ensureCategories(ctx context.Context, tx bun.Tx, ps []*pending) error {
	var unknown []db.Category
	for _, p := range ps {
		for _, code := range p.cats {
			if _, known, _ := db.CanonicalCategory(code); !known && !w.categories[code] {
				w.categories[code] = true
				unknown = append(unknown, db.UnknownCategory(code))
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	_, err := tx.NewInsert().Model(&unknown).On("CONFLICT (code) DO NOTHING").Exec(ctx)
	return err
}

// writeCategories replaces the category lists of papers whose list changed.
func writeCategories(ctx context.Context, tx bun.Tx, ps []*pending) error {
	var ids []int64 // stored papers whose old list goes
	var paper, position []int64
	var code []string
	for _, p := range ps {
		if !p.writeCats {
			continue
		}
		if !p.isNew {
			ids = append(ids, p.row.ID)
		}
		for i, c := range p.cats {
			paper = append(paper, p.row.ID)
			position = append(position, int64(i))
			code = append(code, c)
		}
	}
	if len(ids) > 0 {
		if _, err := tx.NewDelete().Model((*db.PaperCategory)(nil)).Where("paper_id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
			return err
		}
	}
	return db.InsertColumns(ctx, tx, "paper_categories", []string{"paper_id", "position", "category"}, paper, position, code)
}

// writeReferences adds reference targets; derive resolves them to papers.
func writeReferences(ctx context.Context, tx bun.Tx, ps []*pending) error {
	var rows []db.Reference
	for _, p := range ps {
		seen := map[string]bool{}
		for _, t := range p.refs {
			if t == "" || seen[t] || t == p.row.ArxivID {
				continue
			}
			seen[t] = true
			rows = append(rows, db.Reference{CitingID: p.row.ID, Target: t})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.NewInsert().Model(&rows).On("CONFLICT (citing_id, target) DO NOTHING").Exec(ctx)
	return err
}

// writeAuthors replaces the author lists that are to be rewritten,
// matching each author to a researcher, and returns the researchers it
// wrote authorships of.
func (w *writer) writeAuthors(ctx context.Context, tx bun.Tx, ps []*pending) (queue []int64, err error) {
	var ids []int64 // stored papers whose old list goes
	var refs []*authorRef
	n := 0
	for _, p := range ps {
		if p.authors == nil {
			continue
		}
		n++
		if !p.isNew {
			ids = append(ids, p.row.ID)
		}
		for i := range p.authors.Authors {
			refs = append(refs, newAuthorRef(&p.authors.Authors[i]))
		}
	}
	if n == 0 {
		return nil, nil
	}
	if err := w.researchers.resolve(ctx, tx, refs); err != nil {
		return nil, err
	}
	var affs []db.Affiliation
	var ships struct {
		paper, position []int64
		name            []string
		researcher      []*int64
	}
	k := 0
	for _, p := range ps {
		if p.authors == nil {
			continue
		}
		for i, a := range p.authors.Authors {
			ships.paper = append(ships.paper, p.row.ID)
			ships.position = append(ships.position, int64(i+1))
			ships.name = append(ships.name, a.Name)
			var rid *int64
			if id := refs[k].id; id != 0 {
				rid = &refs[k].id
				queue = append(queue, id)
			}
			ships.researcher = append(ships.researcher, rid)
			k++
			for j, af := range a.Affiliations {
				affs = append(affs, db.Affiliation{PaperID: p.row.ID, Position: i + 1, Seq: j + 1, Raw: clean(af.Raw), RORID: af.ROR})
			}
		}
	}
	for _, m := range []any{(*db.Affiliation)(nil), (*db.Authorship)(nil)} {
		if len(ids) == 0 {
			break
		}
		if _, err := tx.NewDelete().Model(m).Where("paper_id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
			return nil, err
		}
	}
	if err := db.InsertColumns(ctx, tx, "authorships", []string{"paper_id", "position", "name", "researcher_id"},
		ships.paper, ships.position, ships.name, ships.researcher); err != nil {
		return nil, err
	}
	if len(affs) > 0 {
		if _, err := tx.NewInsert().Model(&affs).Exec(ctx); err != nil {
			return nil, err
		}
	}
	return queue, nil
}

// writeResearchers stores external author profiles (OpenAlex, S2),
// attaching them to the researcher they match.
func (w *writer) writeResearchers(ctx context.Context, tx bun.Tx, in []*Researcher) (Counts, error) {
	var c Counts
	if len(in) == 0 {
		return c, nil
	}
	refs := make([]*authorRef, 0, len(in))
	for _, r := range in {
		if r.ORCID == "" && r.OpenAlexID == "" && r.S2ID == "" {
			c.Skipped++
			continue
		}
		refs = append(refs, newProfileRef(r))
	}
	if err := w.researchers.resolve(ctx, tx, refs); err != nil {
		return c, err
	}
	var rows []*db.Researcher
	seen := map[int64]bool{}
	for _, ref := range refs {
		e := ref.entry
		if ref.created {
			c.Inserted++
		}
		before := e.row
		e.fill(ref)
		fillInt(&e.row.HIndex, ref.profile.HIndex)
		fillInt(&e.row.CitationCount, ref.profile.CitationCount)
		fillInt(&e.row.WorksCount, ref.profile.WorksCount)
		if sameResearcher(before, e.row) {
			if !ref.created {
				c.Unchanged++
			}
			continue
		}
		if !ref.created {
			c.Updated++
		}
		if !seen[e.row.ID] {
			seen[e.row.ID] = true
			rows = append(rows, &e.row)
		}
	}
	if err := upsertResearchers(ctx, tx, rows); err != nil {
		return c, err
	}
	// A new or changed profile can make or break same-name links.
	ids := make([]int64, 0, len(refs))
	for _, ref := range refs {
		if ref.created || seen[ref.entry.row.ID] {
			ids = append(ids, ref.entry.row.ID)
		}
	}
	return c, queueResearchers(ctx, tx, ids)
}

func fillInt(dst **int, src *int) {
	if src != nil {
		v := *src
		*dst = &v
	}
}

func sameResearcher(a, b db.Researcher) bool {
	eq := func(x, y *int) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return a.ORCID == b.ORCID && a.OpenAlexID == b.OpenAlexID && a.S2ID == b.S2ID &&
		eq(a.HIndex, b.HIndex) && eq(a.CitationCount, b.CitationCount) && eq(a.WorksCount, b.WorksCount)
}

var researcherColumns = []string{"orcid", "openalex_id", "s2_id", "h_index", "citation_count", "works_count"}

func upsertResearchers(ctx context.Context, tx bun.Tx, rows []*db.Researcher) error {
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, func(a, b *db.Researcher) int { return int(a.ID - b.ID) })
	q := tx.NewInsert().Model(&rows).On("CONFLICT (id) DO UPDATE")
	for _, c := range researcherColumns {
		q.Set("? = EXCLUDED.?", bun.Ident(c), bun.Ident(c))
	}
	_, err := q.Exec(ctx)
	return err
}

// writeInstitutions upserts institutions by ROR id (or OpenAlex id when
// there is none) and replaces their alternative names.
func writeInstitutions(ctx context.Context, tx bun.Tx, in []*Institution) (Counts, error) {
	var c Counts
	byKey := map[string]*Institution{}
	var keys []string
	for _, r := range in {
		k := r.ROR
		if k == "" {
			k = "openalex:" + r.OpenAlexID
		}
		if r.ROR == "" && r.OpenAlexID == "" || r.Name == "" {
			c.Skipped++
			continue
		}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = r
	}
	if len(keys) == 0 {
		return c, nil
	}
	var rors, oas []string
	for _, k := range keys {
		r := byKey[k]
		if r.ROR != "" {
			rors = append(rors, r.ROR)
		}
		if r.OpenAlexID != "" {
			oas = append(oas, r.OpenAlexID)
		}
	}
	var existing []*db.Institution
	q := tx.NewSelect().Model(&existing)
	orIn(q, "ror_id", rors)
	orIn(q, "openalex_id", oas)
	if err := q.Scan(ctx); err != nil {
		return c, err
	}
	stored := map[string]*db.Institution{}
	storedIDs := make([]int64, 0, len(existing))
	for _, e := range existing {
		if e.RORID != "" {
			stored[e.RORID] = e
		}
		if e.OpenAlexID != "" {
			stored["openalex:"+e.OpenAlexID] = e
		}
		storedIDs = append(storedIDs, e.ID)
	}
	storedNames, err := institutionNames(ctx, tx, storedIDs)
	if err != nil {
		return c, err
	}
	var rows []*db.Institution
	var nameRows []db.InstitutionName
	var inserts []*db.Institution
	for _, k := range keys {
		r := byKey[k]
		old := stored[k]
		if old == nil && r.OpenAlexID != "" {
			old = stored["openalex:"+r.OpenAlexID]
		}
		row := &db.Institution{RORID: r.ROR, OpenAlexID: r.OpenAlexID, Name: clean(r.Name), Country: strings.ToUpper(r.Country),
			Types: strings.Join(r.Types, ","), Status: r.Status, Established: r.Established}
		if old != nil {
			before := *old
			fillInstitution(old, row)
			if *old == before && namesSignature(nameRowsOf(old.ID, r)) == storedNames[old.ID] {
				c.Unchanged++
				continue
			}
			c.Updated++
			row = old
		} else {
			c.Inserted++
			inserts = append(inserts, row)
		}
		rows = append(rows, row)
	}
	if len(inserts) > 0 {
		var got []db.Institution
		if err := tx.NewInsert().Model(&inserts).Returning("id, ror_id, openalex_id").Scan(ctx, &got); err != nil {
			return c, err
		}
		ids := map[string]int64{}
		for _, g := range got {
			ids[g.RORID+"|"+g.OpenAlexID] = g.ID
		}
		for _, r := range inserts {
			r.ID = ids[r.RORID+"|"+r.OpenAlexID]
		}
	}
	var ids []int64
	for _, row := range rows {
		ids = append(ids, row.ID)
		r := byKey[row.RORID]
		if r == nil {
			r = byKey["openalex:"+row.OpenAlexID]
		}
		nameRows = append(nameRows, nameRowsOf(row.ID, r)...)
	}
	if len(rows) == 0 {
		return c, nil
	}
	q2 := tx.NewInsert().Model(&rows).On("CONFLICT (id) DO UPDATE")
	for _, col := range []string{"ror_id", "openalex_id", "name", "country", "types", "status", "established"} {
		q2.Set("? = EXCLUDED.?", bun.Ident(col), bun.Ident(col))
	}
	if _, err := q2.Exec(ctx); err != nil {
		return c, err
	}
	if _, err := tx.NewDelete().Model((*db.InstitutionName)(nil)).Where("institution_id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
		return c, err
	}
	_, err = tx.NewInsert().Model(&nameRows).Exec(ctx)
	return c, err
}

// nameRowsOf lists the names an institution record gives, its display
// name first, each once.
func nameRowsOf(id int64, r *Institution) []db.InstitutionName {
	var out []db.InstitutionName
	seen := map[string]bool{}
	for _, n := range append([]InstitutionName{{Value: r.Name, Kind: "name"}}, r.Names...) {
		v := clean(n.Value)
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, db.InstitutionName{InstitutionID: id, Name: v, Kind: n.Kind, NameKey: foldKey(v)})
	}
	return out
}

// namesSignature is a list of names as one comparable string.
func namesSignature(ns []db.InstitutionName) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.Kind + "\x00" + n.Name
	}
	slices.Sort(parts)
	return strings.Join(parts, "\x01")
}

// institutionNames returns the signature of each stored institution's names.
func institutionNames(ctx context.Context, tx bun.Tx, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []db.InstitutionName
	if err := tx.NewSelect().Model(&rows).Where("institution_id IN (?)", bun.In(ids)).Scan(ctx); err != nil {
		return nil, err
	}
	by := map[int64][]db.InstitutionName{}
	for _, r := range rows {
		by[r.InstitutionID] = append(by[r.InstitutionID], r)
	}
	for id, ns := range by {
		out[id] = namesSignature(ns)
	}
	return out, nil
}

// fillInstitution takes every value the new record has; institution
// records are whole descriptions, so the newer one wins field by field.
func fillInstitution(old, in *db.Institution) {
	for _, f := range []struct{ dst, src *string }{
		{&old.RORID, &in.RORID}, {&old.OpenAlexID, &in.OpenAlexID}, {&old.Name, &in.Name},
		{&old.Country, &in.Country}, {&old.Types, &in.Types}, {&old.Status, &in.Status},
	} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	if in.Established != 0 {
		old.Established = in.Established
	}
}

// foldKey is the matching key of an institution name: folded lowercase
// words joined by single spaces.
func foldKey(s string) string { return strings.Join(names.Words(s), " ") }
