package db

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// The statements of the importer's writer (package ingest), which merges
// records into rows and writes them a batch per transaction.

// upsertByID writes rows, a pointer to a slice of models: a row whose id
// is stored gets the values of cols, any other is inserted.
func upsertByID(ctx context.Context, idb bun.IDB, rows any, cols []string) error {
	q := idb.NewInsert().Model(rows).On("CONFLICT (id) DO UPDATE")
	for _, c := range cols {
		q.Set("? = EXCLUDED.?", bun.Ident(c), bun.Ident(c))
	}
	_, err := q.Exec(ctx)
	return err
}

// anyOf is a column and the values a lookup matches in it.
type anyOf struct {
	col  string
	vals []string
}

// rowsWithAny reads the rows of model T in which any column holds one of
// its values, ordered by order (in no promised order when it is empty).
// At least one column must have values.
func rowsWithAny[T any](ctx context.Context, idb bun.IDB, order string, cols ...anyOf) ([]T, error) {
	var rows []T
	q := idb.NewSelect().Model(&rows)
	if order != "" {
		q.Order(order)
	}
	b := binding(idb)
	for _, c := range cols {
		if len(c.vals) > 0 {
			cond, args := in(b, c.col, c.vals)
			q.WhereOr(cond, args...)
		}
	}
	return rows, q.Scan(b.ctx(ctx))
}

// PaperKeys are the ids papers are looked up by when records are merged.
type PaperKeys struct{ ArxivIDs, DOIs, OpenAlexIDs, S2IDs []string }

// PapersByKeys reads, by id, the papers with any of the keys; at least
// one list must hold a key.
func PapersByKeys(ctx context.Context, idb bun.IDB, k PaperKeys) ([]*Paper, error) {
	return rowsWithAny[*Paper](ctx, idb, "id", anyOf{"arxiv_id", k.ArxivIDs}, anyOf{"doi", k.DOIs},
		anyOf{"openalex_id", k.OpenAlexIDs}, anyOf{"s2_id", k.S2IDs})
}

// paperColumns are the columns a merge can change.
var paperColumns = []string{
	"arxiv_id", "version", "doi", "title", "abstract", "comments", "journal_ref", "report_no", "license",
	"published", "updated", "primary_category", "byline", "cited_by_count", "openalex_id", "s2_id",
	"author_count", "authors_complete", "authors_score", "cited_by_source", "cited_by_at",
}

// InsertPapers inserts new papers and returns the id, arXiv id, DOI,
// OpenAlex id and S2 id of each, in no promised order.
//
// On PostgreSQL the rows carry their search documents where
// searchVectors can build them (see searchvector.go); the trigger builds
// the others.
func InsertPapers(ctx context.Context, tx bun.Tx, rows []*Paper) ([]Paper, error) {
	names, values := paperColumns, paperValues(rows)
	if IsPostgres(tx) && len(rows) > 0 {
		agree, err := searchVectorsAgree(ctx, tx)
		if err != nil {
			return nil, err
		}
		if agree {
			docs, titleDocs := searchDocuments(rows)
			names = append(slices.Clip(names), "search_doc", "title_doc")
			values = append(values, docs, titleDocs)
		}
	}
	return InsertColumnsReturning[Paper](ctx, tx, "papers", names, "id, arxiv_id, doi, openalex_id, s2_id", values...)
}

// paperValues returns the rows' values of paperColumns, column by column,
// with NULL for what bun's model leaves NULL.
func paperValues(rows []*Paper) []any {
	n := len(rows)
	text := func() []*string { return make([]*string, n) }
	arxiv, doi, abstract, comments, journal, report, license := text(), text(), text(), text(), text(), text(), text()
	primary, byline, oa, s2, citedBy := text(), text(), text(), text(), text()
	title := make([]string, n)
	version, authors, score := make([]int64, n), make([]int64, n), make([]int64, n)
	published, updated, citedAt := make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
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
		citedBy[i], citedAt[i] = nullText(r.CitedBySource), nullTime(r.CitedByAt)
		complete[i] = r.AuthorsComplete
	}
	return []any{arxiv, version, doi, title, abstract, comments, journal, report, license,
		published, updated, primary, byline, cited, oa, s2, authors, complete, score, citedBy, citedAt}
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

// UpdatePapers writes the columns a merge can change of stored papers.
func UpdatePapers(ctx context.Context, idb bun.IDB, rows []*Paper) error {
	return upsertByID(ctx, idb, &rows, paperColumns)
}

// AddCategories inserts categories whose code is not stored yet.
func AddCategories(ctx context.Context, idb bun.IDB, cats []Category) error {
	_, err := idb.NewInsert().Model(&cats).On("CONFLICT (code) DO NOTHING").Exec(ctx)
	return err
}

// CategoriesOf reads the stored category lists of papers, in order.
func CategoriesOf(ctx context.Context, idb bun.IDB, papers []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	for chunk := range slices.Chunk(papers, 5000) {
		b := binding(idb)
		cond, args := in(b, "paper_id", chunk)
		err := scan(b.ctx(ctx), idb, func(rows *sql.Rows) error {
			var p int64
			var c string
			if err := rows.Scan(&p, &c); err != nil {
				return err
			}
			out[p] = append(out[p], c)
			return nil
		}, `SELECT paper_id, category FROM paper_categories WHERE `+cond+` ORDER BY paper_id, position`, args...)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReplacePaperCategories deletes the category lists of the stored papers
// and inserts the rows given column by column, each with its paper's
// first-version date (nil when unknown), and moves the categories' paper
// counts by the rows deleted and inserted.
func ReplacePaperCategories(ctx context.Context, tx bun.Tx, stored []int64, paper, position []int64, code []string, published []*time.Time) error {
	moved := map[string]int64{}
	for _, c := range code {
		moved[c]++
	}
	if len(stored) > 0 {
		var old []struct {
			Category string `bun:"category"`
			N        int64  `bun:"n"`
		}
		b := binding(tx)
		cond, args := in(b, "paper_id", stored)
		if err := tx.NewRaw("SELECT category, COUNT(*) AS n FROM paper_categories WHERE "+cond+" GROUP BY category",
			args...).Scan(b.ctx(ctx), &old); err != nil {
			return err
		}
		for _, o := range old {
			moved[o.Category] -= o.N
		}
		if _, err := tx.NewDelete().Model((*PaperCategory)(nil)).Where(cond, args...).Exec(b.ctx(ctx)); err != nil {
			return err
		}
	}
	if err := InsertColumns(ctx, tx, "paper_categories", []string{"paper_id", "position", "category", "published"}, paper, position, code, published); err != nil {
		return err
	}
	return moveCategoryCounts(ctx, tx, moved)
}

// moveCategoryCounts adds each category's number to its paper count, in
// one statement per few hundred categories (a batch of papers touches the
// categories it files them under, of which arXiv has about 150).
func moveCategoryCounts(ctx context.Context, idb bun.IDB, moved map[string]int64) error {
	codes := make([]string, 0, len(moved))
	for c, n := range moved {
		if n != 0 {
			codes = append(codes, c)
		}
	}
	slices.Sort(codes)
	for lo := 0; lo < len(codes); lo += categoryBranches {
		part := codes[lo:min(lo+categoryBranches, len(codes))]
		var cases strings.Builder
		args := make([]any, 0, 3*len(part))
		for _, c := range part {
			cases.WriteString(" WHEN ? THEN ?")
			args = append(args, c, moved[c])
		}
		for _, c := range part {
			args = append(args, c)
		}
		// The codes are written out, not bound (see in): each comes with
		// its number in the CASE, whose arms the statement's text holds
		// anyway, and the IN list names the same codes.
		q := "UPDATE categories SET paper_count = paper_count + CASE code" + cases.String() + " END WHERE code IN (?" + strings.Repeat(", ?", len(part)-1) + ")"
		if _, err := idb.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// SyncCategoryDates copies the first-version date of the given stored
// papers to their category rows where it differs (a merge can move it
// without changing the list).
func SyncCategoryDates(ctx context.Context, idb bun.IDB, papers []int64) error {
	return syncDates(ctx, idb, "paper_categories", "published", "paper_id", papers)
}

// SyncCitingDates copies the first-version date of the given stored
// papers to the references they make, where it differs.
func SyncCitingDates(ctx context.Context, idb bun.IDB, papers []int64) error {
	return syncDates(ctx, idb, "paper_references", "citing_published", "citing_id", papers)
}

// SyncAuthorshipDates copies the first-version date of the given stored
// papers to their authorships, where it differs.
func SyncAuthorshipDates(ctx context.Context, idb bun.IDB, papers []int64) error {
	return syncDates(ctx, idb, "authorships", "published", "paper_id", papers)
}

// syncDates sets table's date column to the first-version date of the
// paper its paper column names, on the rows of the given papers where it
// differs.
func syncDates(ctx context.Context, idb bun.IDB, table, date, paper string, papers []int64) error {
	if len(papers) == 0 {
		return nil
	}
	published := "(SELECT p.published FROM papers AS p WHERE p.id = " + table + "." + paper + ")"
	b := binding(idb)
	cond, args := in(b, paper, papers)
	_, err := idb.NewRaw("UPDATE "+table+" SET "+date+" = "+published+
		" WHERE "+cond+" AND "+date+" IS DISTINCT FROM "+published, args...).Exec(b.ctx(ctx))
	return err
}

// AddReferences inserts the references not stored yet, each resolved to
// its target's paper when the archive holds it, and queues the papers
// the new ones cite for ResolveReferences to count. Resolved later, by
// an UPDATE in the derive, every reference of a bulk load was written
// twice, with each of the table's three indexes. A reference already
// stored is left as it is (derive resolves it if its target has come
// since). It sorts rows by target.
func AddReferences(ctx context.Context, tx bun.Tx, rows []Reference) error {
	if len(rows) == 0 {
		return nil
	}
	// By target, the papers looked up come in the order of their index,
	// and on PostgreSQL mostly in the order of their pages too (ids
	// follow arXiv ids in an import). rows is sorted in place.
	slices.SortFunc(rows, func(a, b Reference) int { return strings.Compare(a.Target, b.Target) })
	citing := make([]int64, len(rows))
	target := make([]string, len(rows))
	published := make([]*time.Time, len(rows))
	for i, r := range rows {
		citing[i], target[i], published[i] = r.CitingID, r.Target, r.CitingPublished
	}
	cols, n, err := columnsOf("paper_references", []string{"citing_id", "target", "citing_published"}, []any{citing, target, published})
	if err != nil {
		return err
	}
	// Each new reference returns the paper it cites, 0 for none (ids
	// start at 1).
	const head = `INSERT INTO paper_references (citing_id, target, citing_published, cited_id) `
	const tail = ` ON CONFLICT (citing_id, target) DO NOTHING RETURNING COALESCE(cited_id, 0)`
	returned, err := queryChunks[int64](ctx, tx, n, cols,
		head+`SELECT v.citing_id, v.target, v.citing_published, `+citedOf("v.target")+`
			FROM unnest(`+unnestArgs(cols)+`) AS v (citing_id, target, citing_published)`+tail,
		// WHERE true tells SQLite's parser that ON CONFLICT is the
		// upsert's.
		func(values string) string {
			return head + `SELECT v.column1, v.column2, v.column3, ` + citedOf("v.column2") + `
				FROM (` + values + `) AS v WHERE true` + tail
		})
	if err != nil {
		return err
	}
	cited := slices.DeleteFunc(returned, func(id int64) bool { return id == 0 })
	return QueuePapers(ctx, tx, cited)
}

// citedOf is the id of the paper whose arXiv id is target, NULL if none:
// one probe of the arXiv id index per reference, whatever the size of
// the statement.
func citedOf(target string) string {
	return "(SELECT p.id FROM papers p WHERE p.arxiv_id = " + target + ")"
}

// DeleteBylines deletes the affiliations and authorships of papers.
func DeleteBylines(ctx context.Context, idb bun.IDB, paperIDs []int64) error {
	b := binding(idb)
	cond, args := in(b, "paper_id", paperIDs)
	for _, m := range []any{(*Affiliation)(nil), (*Authorship)(nil)} {
		if _, err := idb.NewDelete().Model(m).Where(cond, args...).Exec(b.ctx(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// Bylines are authorships given column by column, and the affiliations of
// their authors.
type Bylines struct {
	Paper, Position []int64
	Name            []string
	Researcher      []*int64     // nil for an author matched to no one
	Published       []*time.Time // the paper's first-version date, nil if it has none
	Affiliations    []Affiliation
}

// InsertBylines inserts authorships and affiliations.
func InsertBylines(ctx context.Context, tx bun.Tx, b Bylines) error {
	if err := InsertColumns(ctx, tx, "authorships", []string{"paper_id", "position", "name", "researcher_id", "published"},
		b.Paper, b.Position, b.Name, b.Researcher, b.Published); err != nil {
		return err
	}
	if len(b.Affiliations) == 0 {
		return nil
	}
	_, err := tx.NewInsert().Model(&b.Affiliations).Exec(ctx)
	return err
}

// ResearcherKeys are what researchers are looked up by when authors are
// matched: name keys and external ids.
type ResearcherKeys struct{ NameKeys, ORCIDs, OpenAlexIDs, S2IDs []string }

// ResearchersByKeys reads, by id, the researchers with any of the keys;
// at least one list must hold a key.
func ResearchersByKeys(ctx context.Context, idb bun.IDB, k ResearcherKeys) ([]Researcher, error) {
	return rowsWithAny[Researcher](ctx, idb, "id", anyOf{"name_key", k.NameKeys}, anyOf{"orcid", k.ORCIDs},
		anyOf{"openalex_id", k.OpenAlexIDs}, anyOf{"s2_id", k.S2IDs})
}

// InsertResearchers inserts new researchers and returns the id, name
// key, ORCID, OpenAlex id and S2 id of each, in no promised order.
func InsertResearchers(ctx context.Context, tx bun.Tx, rows []*Researcher) ([]Researcher, error) {
	n := len(rows)
	name, nameKey, familyKey, slug := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	orcid, oa, s2 := make([]*string, n), make([]*string, n), make([]*string, n)
	h, cites, works := make([]*int64, n), make([]*int64, n), make([]*int64, n)
	for i, r := range rows {
		name[i], nameKey[i], familyKey[i], slug[i] = r.Name, r.NameKey, r.FamilyKey, r.Slug
		orcid[i], oa[i], s2[i] = nullText(r.ORCID), nullText(r.OpenAlexID), nullText(r.S2ID)
		h[i], cites[i], works[i] = nullInt(r.HIndex), nullInt(r.CitationCount), nullInt(r.WorksCount)
	}
	return InsertColumnsReturning[Researcher](ctx, tx, "researchers",
		[]string{"name", "name_key", "family_key", "slug", "orcid", "openalex_id", "s2_id", "h_index", "citation_count", "works_count"},
		"id, name_key, orcid, openalex_id, s2_id",
		name, nameKey, familyKey, slug, orcid, oa, s2, h, cites, works)
}

// UpdateResearcherProfiles writes the external ids and profile figures
// of stored researchers, in id order.
func UpdateResearcherProfiles(ctx context.Context, idb bun.IDB, rows []*Researcher) error {
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, func(a, b *Researcher) int { return cmp.Compare(a.ID, b.ID) })
	return upsertByID(ctx, idb, &rows, []string{"orcid", "openalex_id", "s2_id", "h_index", "citation_count", "works_count",
		"figures_source", "figures_at"})
}

// InstitutionsByKeys reads the institutions with any of the ROR ids or
// OpenAlex ids; at least one list must hold an id.
func InstitutionsByKeys(ctx context.Context, idb bun.IDB, rors, openalexIDs []string) ([]*Institution, error) {
	return rowsWithAny[*Institution](ctx, idb, "", anyOf{"ror_id", rors}, anyOf{"openalex_id", openalexIDs})
}

// AllInstitutionNames reads every name of institutions, display names
// included, in no promised order.
func AllInstitutionNames(ctx context.Context, idb bun.IDB, ids []int64) ([]InstitutionName, error) {
	var rows []InstitutionName
	b := binding(idb)
	cond, args := in(b, "institution_id", ids)
	err := idb.NewSelect().Model(&rows).Where(cond, args...).Scan(b.ctx(ctx))
	return rows, err
}

// InsertInstitutions inserts new institutions and returns the id, ROR id
// and OpenAlex id of each, in no promised order.
func InsertInstitutions(ctx context.Context, idb bun.IDB, rows []*Institution) ([]Institution, error) {
	var got []Institution
	err := idb.NewInsert().Model(&rows).Returning("id, ror_id, openalex_id").Scan(ctx, &got)
	return got, err
}

// UpdateInstitutions writes institutions, stored or new, and replaces
// their names with names.
func UpdateInstitutions(ctx context.Context, idb bun.IDB, rows []*Institution, names []InstitutionName) error {
	cols := []string{"ror_id", "openalex_id", "name", "country", "types", "status", "established"}
	if err := upsertByID(ctx, idb, &rows, cols); err != nil {
		return err
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	b := binding(idb)
	cond, args := in(b, "institution_id", ids)
	if _, err := idb.NewDelete().Model((*InstitutionName)(nil)).Where(cond, args...).Exec(b.ctx(ctx)); err != nil {
		return err
	}
	_, err := idb.NewInsert().Model(&names).Exec(ctx)
	return err
}
