package db

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/uptrace/bun"
)

// The batch reads below take many keys and send one statement. They return
// rows keyed by what was asked for; a key with no row is simply absent, so
// callers answer it as not found and never shift a neighbour's result into
// its place.

// PapersByIDs reads papers by primary key.
func PapersByIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64]*Paper, error) {
	var rows []*Paper
	b := binding(idb)
	cond, args := in(b, "id", ids)
	if err := idb.NewSelect().Model(&rows).Where(cond, args...).Scan(b.ctx(ctx)); err != nil {
		return nil, err
	}
	return keyBy(rows, func(p *Paper) int64 { return p.ID }), nil
}

// PapersByRefs reads papers by canonical arXiv id and by bare lowercase
// DOI. A DOI shared by several papers names the one with the lowest id.
func PapersByRefs(ctx context.Context, idb bun.IDB, arxivIDs, dois []string) (byArxiv, byDOI map[string]*Paper, err error) {
	var rows []*Paper
	q := idb.NewSelect().Model(&rows).Order("id")
	b := binding(idb)
	var conds []string
	var args []any
	for _, c := range []struct {
		col  string
		keys []string
	}{{"arxiv_id", arxivIDs}, {"doi", dois}} {
		if len(c.keys) > 0 {
			cond, a := in(b, c.col, c.keys)
			conds, args = append(conds, cond), append(args, a...)
		}
	}
	if len(conds) == 0 {
		return map[string]*Paper{}, map[string]*Paper{}, nil
	}
	q.Where(strings.Join(conds, " OR "), args...)
	if err := q.Scan(b.ctx(ctx)); err != nil {
		return nil, nil, err
	}
	byArxiv, byDOI = map[string]*Paper{}, map[string]*Paper{}
	for _, p := range rows {
		if p.ArxivID != "" {
			byArxiv[p.ArxivID] = p
		}
		if _, seen := byDOI[p.DOI]; p.DOI != "" && !seen {
			byDOI[p.DOI] = p
		}
	}
	return byArxiv, byDOI, nil
}

// Window is a stretch of bylines: the entries after position After, at
// most First of them. Positions run from 1 without gaps (the writer numbers
// them so), so a window is a range of positions and reads only its rows,
// however long the byline.
type Window struct{ After, First int }

// AuthorshipsByPaperIDs reads a window of the bylines of papers, in byline
// order.
func AuthorshipsByPaperIDs(ctx context.Context, idb bun.IDB, paperIDs []int64, w Window) (map[int64][]Authorship, error) {
	var rows []Authorship
	b := binding(idb)
	cond, args := in(b, "paper_id", paperIDs)
	err := idb.NewSelect().Model(&rows).
		Where(cond, args...).
		Where("position > ? AND position <= ?", w.After, int64(w.After)+int64(w.First)).
		Order("paper_id", "position").Scan(b.ctx(ctx))
	if err != nil {
		return nil, err
	}
	return groupBy(rows, func(a *Authorship) int64 { return a.PaperID }, row[Authorship]), nil
}

// AuthorshipsWithResearchers is AuthorshipsByPaperIDs that also reads, in
// the same statement, the researchers the authorships name, keyed by id.
func AuthorshipsWithResearchers(ctx context.Context, idb bun.IDB, paperIDs []int64, w Window) (map[int64][]Authorship, map[int64]*Researcher, error) {
	type joined struct {
		Authorship
		R Researcher `bun:"embed:r_"`
	}
	var rows []joined
	b := binding(idb)
	cond, args := in(b, "a.paper_id", paperIDs)
	err := idb.NewSelect().
		ColumnExpr("a.paper_id, a.position, a.name, a.researcher_id").
		ColumnExpr(researcherColumns(idb, "r", "r_")).
		TableExpr("authorships AS a").
		Join("LEFT JOIN researchers AS r ON r.id = a.researcher_id").
		Where(cond, args...).
		Where("a.position > ? AND a.position <= ?", w.After, int64(w.After)+int64(w.First)).
		Order("a.paper_id", "a.position").
		Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, nil, err
	}
	researchers := map[int64]*Researcher{}
	bylines := groupBy(rows, func(r *joined) int64 { return r.PaperID }, func(r *joined) Authorship {
		if r.R.ID != 0 && researchers[r.R.ID] == nil {
			researchers[r.R.ID] = &r.R
		}
		return r.Authorship
	})
	return bylines, researchers, nil
}

// researcherColumns selects every column of the researchers table under
// alias, each named with prefix (for a `bun:"embed:prefix"` field).
func researcherColumns(idb bun.IDB, alias, prefix string) string {
	t := idb.Dialect().Tables().Get(reflect.TypeFor[Researcher]())
	cols := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		cols[i] = alias + "." + f.Name + " AS " + prefix + f.Name
	}
	return strings.Join(cols, ", ")
}

// PaperCategoryRow is a category of a paper, with the category's names.
type PaperCategoryRow struct {
	PaperID int64 `bun:"paper_id"`
	Category
}

// CategoriesByPaperIDs reads the categories of papers, primary first.
func CategoriesByPaperIDs(ctx context.Context, idb bun.IDB, paperIDs []int64) (map[int64][]Category, error) {
	var rows []PaperCategoryRow
	b := binding(idb)
	cond, args := in(b, "pc.paper_id", paperIDs)
	err := idb.NewSelect().
		ColumnExpr("pc.paper_id, c.*").
		TableExpr("paper_categories AS pc").
		Join("JOIN categories AS c ON c.code = pc.category").
		Where(cond, args...).
		Order("pc.paper_id", "pc.position").
		Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupBy(rows, func(r *PaperCategoryRow) int64 { return r.PaperID },
		func(r *PaperCategoryRow) Category { return r.Category }), nil
}

// CategoriesByCodes reads categories by code.
func CategoriesByCodes(ctx context.Context, idb bun.IDB, codes []string) (map[string]*Category, error) {
	var rows []*Category
	b := binding(idb)
	cond, args := in(b, "code", codes)
	if err := idb.NewSelect().Model(&rows).Where(cond, args...).Scan(b.ctx(ctx)); err != nil {
		return nil, err
	}
	return keyBy(rows, func(c *Category) string { return c.Code }), nil
}

// AffiliationRow is an affiliation with the institution it was matched to,
// if any.
type AffiliationRow struct {
	Affiliation
	Institution *Institution
}

// AffiliationsByPaperIDs reads the affiliations of every author of papers,
// in byline order, with their matched institutions.
func AffiliationsByPaperIDs(ctx context.Context, idb bun.IDB, paperIDs []int64, w Window) (map[int64][]AffiliationRow, error) {
	type joined struct {
		Affiliation
		I Institution `bun:"embed:i_"`
	}
	var rows []joined
	b := binding(idb)
	cond, args := in(b, "af.paper_id", paperIDs)
	err := idb.NewSelect().
		ColumnExpr("af.*").
		ColumnExpr("i.id AS i_id, i.ror_id AS i_ror_id, i.openalex_id AS i_openalex_id, i.name AS i_name, i.country AS i_country, i.types AS i_types, i.status AS i_status, i.established AS i_established").
		TableExpr("affiliations AS af").
		Join("LEFT JOIN institutions AS i ON i.id = af.institution_id").
		Where(cond, args...).
		Where("af.position > ? AND af.position <= ?", w.After, int64(w.After)+int64(w.First)).
		Order("af.paper_id", "af.position", "af.seq").
		Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupBy(rows, func(r *joined) int64 { return r.PaperID }, func(r *joined) AffiliationRow {
		row := AffiliationRow{Affiliation: r.Affiliation}
		if r.I.ID != 0 {
			row.Institution = &r.I
		}
		return row
	}), nil
}

// ResearchersByIDs reads researchers by primary key.
func ResearchersByIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64]*Researcher, error) {
	var rows []*Researcher
	b := binding(idb)
	cond, args := in(b, "id", ids)
	if err := idb.NewSelect().Model(&rows).Where(cond, args...).Scan(b.ctx(ctx)); err != nil {
		return nil, err
	}
	return keyBy(rows, func(r *Researcher) int64 { return r.ID }), nil
}

// ResearcherIDColumn names a researchers column that identifies a person.
type ResearcherIDColumn string

// The external ids a researcher can be looked up by.
const (
	ByORCID    ResearcherIDColumn = "orcid"
	ByOpenAlex ResearcherIDColumn = "openalex_id"
	ByS2       ResearcherIDColumn = "s2_id"
)

// ResearcherByExternalID reads the researcher with the given external id;
// it returns nil, nil when there is none.
func ResearcherByExternalID(ctx context.Context, idb bun.IDB, col ResearcherIDColumn, id string) (*Researcher, error) {
	m, err := ResearchersByExternalIDs(ctx, idb, col, []string{id})
	return m[id], err
}

// ResearchersByExternalIDs reads the researchers with the given external
// ids in column col, keyed by id; an id that several researchers share
// gives the one with the lowest primary key.
func ResearchersByExternalIDs(ctx context.Context, idb bun.IDB, col ResearcherIDColumn, ids []string) (map[string]*Researcher, error) {
	switch col {
	case ByORCID, ByOpenAlex, ByS2:
	default:
		return nil, fmt.Errorf("researchers: no external id column %q", string(col))
	}
	var rows []*Researcher
	b := binding(idb)
	cond, args := in(b, string(col), ids)
	if err := idb.NewSelect().Model(&rows).Where(cond, args...).Order("id").Scan(b.ctx(ctx)); err != nil {
		return nil, err
	}
	out := make(map[string]*Researcher, len(rows))
	for _, r := range rows {
		k := col.of(r)
		if _, ok := out[k]; !ok {
			out[k] = r
		}
	}
	return out, nil
}

// of is r's value in the column.
func (col ResearcherIDColumn) of(r *Researcher) string {
	switch col {
	case ByORCID:
		return r.ORCID
	case ByOpenAlex:
		return r.OpenAlexID
	}
	return r.S2ID
}

// ResearcherFieldRow counts a researcher's papers in a category, with the
// category's names.
type ResearcherFieldRow struct {
	ResearcherID int64 `bun:"researcher_id"`
	// PaperCount is the researcher's papers in the category, not the
	// category's (Category.PaperCount).
	PaperCount int `bun:"field_paper_count"`
	Category
}

// ResearcherCategoriesByResearcherIDs reads the fields of researchers, most
// papers first.
func ResearcherCategoriesByResearcherIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64][]ResearcherFieldRow, error) {
	var rows []ResearcherFieldRow
	b := binding(idb)
	cond, args := in(b, "rc.researcher_id", ids)
	err := idb.NewSelect().
		ColumnExpr("rc.researcher_id, rc.paper_count AS field_paper_count, c.*").
		TableExpr("researcher_categories AS rc").
		Join("JOIN categories AS c ON c.code = rc.category").
		Where(cond, args...).
		Order("rc.researcher_id").OrderExpr("rc.paper_count DESC").Order("rc.category").
		Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupBy(rows, func(r *ResearcherFieldRow) int64 { return r.ResearcherID }, row[ResearcherFieldRow]), nil
}

// SameNameByResearcherIDs reads, for each researcher, the other profiles
// that share their name, most papers first: at most n of each.
func SameNameByResearcherIDs(ctx context.Context, idb bun.IDB, ids []int64, n int) (map[int64][]*Researcher, error) {
	var rows []withParent[Researcher]
	b := binding(idb)
	cond, args := in(b, "s.researcher_id", ids)
	// A common name has hundreds of profiles; the window reads n of each.
	ranked := idb.NewSelect().
		ColumnExpr("s.researcher_id AS parent, s.other_id").
		ColumnExpr("ROW_NUMBER() OVER (PARTITION BY s.researcher_id ORDER BY o.paper_count DESC, o.id) AS rank").
		TableExpr("same_name AS s").
		Join("JOIN researchers AS o ON o.id = s.other_id").
		Where(cond, args...)
	err := idb.NewSelect().
		ColumnExpr("x.parent, r.*").
		TableExpr("(?) AS x", ranked).
		Join("JOIN researchers AS r ON r.id = x.other_id").
		Where("x.rank <= ?", n).
		Order("x.parent").OrderExpr("r.paper_count DESC").Order("r.id").
		Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupByParent(rows), nil
}

// InstitutionsByResearcherIDs reads the institutions researchers'
// affiliations were matched to, the one on most of their papers first.
func InstitutionsByResearcherIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64][]*Institution, error) {
	var rows []withParent[Institution]
	b := binding(idb)
	cond, args := in(b, "a.researcher_id", ids)
	err := idb.NewRaw(`SELECT t.parent, i.* FROM (
		  SELECT a.researcher_id AS parent, af.institution_id AS iid, COUNT(DISTINCT af.paper_id) AS n
		  FROM authorships AS a
		  JOIN affiliations AS af ON af.paper_id = a.paper_id AND af.position = a.position
		  WHERE `+cond+` AND af.institution_id IS NOT NULL
		  GROUP BY a.researcher_id, af.institution_id) AS t
		JOIN institutions AS i ON i.id = t.iid
		ORDER BY t.parent, t.n DESC, i.id`, args...).Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupByParent(rows), nil
}

// BylineNamesByResearcherIDs reads the names researchers are printed under
// in bylines, the name on the most of a researcher's papers first.
func BylineNamesByResearcherIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64][]string, error) {
	var rows []struct {
		Parent int64  `bun:"parent"`
		Name   string `bun:"name"`
	}
	b := binding(idb)
	cond, args := in(b, "researcher_id", ids)
	err := idb.NewRaw(`SELECT researcher_id AS parent, name FROM authorships
		WHERE `+cond+`
		GROUP BY researcher_id, name
		ORDER BY researcher_id, COUNT(*) DESC, name`, args...).Scan(b.ctx(ctx), &rows)
	out := map[int64][]string{}
	for _, r := range rows {
		out[r.Parent] = append(out[r.Parent], r.Name)
	}
	return out, err
}

// InstitutionsByPaperIDs reads the institutions papers' affiliations were
// matched to, the one most of a paper's authors share first.
func InstitutionsByPaperIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64][]*Institution, error) {
	var rows []withParent[Institution]
	b := binding(idb)
	cond, args := in(b, "paper_id", ids)
	err := idb.NewRaw(`SELECT t.parent, i.* FROM (
		  SELECT paper_id AS parent, institution_id AS iid, COUNT(DISTINCT position) AS n
		  FROM affiliations
		  WHERE `+cond+` AND institution_id IS NOT NULL
		  GROUP BY paper_id, institution_id) AS t
		JOIN institutions AS i ON i.id = t.iid
		ORDER BY t.parent, t.n DESC, i.id`, args...).Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupByParent(rows), nil
}

// InstitutionsByIDs reads institutions by primary key.
func InstitutionsByIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64]*Institution, error) {
	var rows []*Institution
	b := binding(idb)
	cond, args := in(b, "id", ids)
	if err := idb.NewSelect().Model(&rows).Where(cond, args...).Scan(b.ctx(ctx)); err != nil {
		return nil, err
	}
	return keyBy(rows, func(r *Institution) int64 { return r.ID }), nil
}

// InstitutionNamesByInstitutionIDs reads the other names of institutions.
func InstitutionNamesByInstitutionIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64][]InstitutionName, error) {
	var rows []InstitutionName
	b := binding(idb)
	cond, args := in(b, "institution_id", ids)
	if err := idb.NewSelect().Model(&rows).Where(cond+" AND kind <> 'name'", args...).Order("institution_id", "kind", "name").Scan(b.ctx(ctx)); err != nil {
		return nil, err
	}
	return groupBy(rows, func(n *InstitutionName) int64 { return n.InstitutionID }, row[InstitutionName]), nil
}

// InstitutionRef names an institution by ROR id, by name key (matched
// against the names, labels and aliases of institution_names.name_key) or
// by acronym (matched against the acronym itself, case-sensitively); any
// of them may be empty.
type InstitutionRef struct{ ROR, NameKey, Acronym string }

// InstitutionByRef reads the institution ref names (the one with the
// lowest id when several do); nil, nil when there is none.
func InstitutionByRef(ctx context.Context, idb bun.IDB, ref InstitutionRef) (*Institution, error) {
	m, err := InstitutionsByRefs(ctx, idb, []InstitutionRef{ref})
	return m[ref], err
}

// InstitutionsByRefs reads, in one statement, the institution each ref
// names: the one with the lowest id among those with its ROR id, name key
// or acronym. A ref that names none has no entry.
func InstitutionsByRefs(ctx context.Context, idb bun.IDB, refs []InstitutionRef) (map[InstitutionRef]*Institution, error) {
	var rors, keys, acronyms []string
	seen := map[string]bool{}
	add := func(set []string, kind, s string) []string {
		if s == "" || seen[kind+s] {
			return set
		}
		seen[kind+s] = true
		return append(set, s)
	}
	for _, r := range refs {
		rors, keys, acronyms = add(rors, "r", r.ROR), add(keys, "k", r.NameKey), add(acronyms, "a", r.Acronym)
	}
	// One row per institution and name that matches, and one with no
	// name per institution its ROR id names; lowest id first. Both parts
	// start from an index: an acronym's name key is the key of its words
	// too, so names and acronyms are found by name_key alike.
	var parts []string
	var args []any
	b := binding(idb)
	if len(keys) > 0 {
		key, a := in(b, "n.name_key", keys)
		acronym, a2 := in(b, "n.name", append(acronyms, ""))
		parts = append(parts, `SELECT n.name_key AS match_key, n.name AS match_name, n.kind AS match_kind, i.*
			FROM institution_names AS n JOIN institutions AS i ON i.id = n.institution_id
			WHERE `+key+` AND (n.kind <> 'acronym' OR `+acronym+`)`)
		args = append(append(args, a...), a2...)
	}
	if len(rors) > 0 {
		ror, a := in(b, "i.ror_id", rors)
		parts = append(parts, `SELECT '' AS match_key, '' AS match_name, '' AS match_kind, i.* FROM institutions AS i WHERE `+ror)
		args = append(args, a...)
	}
	out := map[InstitutionRef]*Institution{}
	if len(parts) == 0 {
		return out, nil
	}
	var rows []struct {
		MatchKey  string `bun:"match_key"`
		MatchName string `bun:"match_name"`
		MatchKind string `bun:"match_kind"`
		Institution
	}
	if err := idb.NewRaw(strings.Join(parts, " UNION ALL ")+" ORDER BY id", args...).Scan(b.ctx(ctx), &rows); err != nil {
		return nil, err
	}
	byROR, byKey, byAcronym := map[string]*Institution{}, map[string]*Institution{}, map[string]*Institution{}
	first := func(m map[string]*Institution, k string, x *Institution) {
		if _, ok := m[k]; k != "" && !ok {
			m[k] = x
		}
	}
	for i := range rows {
		x := &rows[i].Institution
		first(byROR, x.RORID, x)
		if rows[i].MatchKind == "acronym" {
			first(byAcronym, rows[i].MatchName, x)
		} else {
			first(byKey, rows[i].MatchKey, x)
		}
	}
	for _, r := range refs {
		var best *Institution
		for _, x := range []*Institution{byROR[r.ROR], byKey[r.NameKey], byAcronym[r.Acronym]} {
			if x != nil && (best == nil || x.ID < best.ID) {
				best = x
			}
		}
		if best != nil {
			out[r] = best
		}
	}
	return out, nil
}

// keyBy maps rows by key; of rows that share a key the last is kept.
func keyBy[K comparable, T any](rows []T, key func(T) K) map[K]T {
	out := make(map[K]T, len(rows))
	for _, r := range rows {
		out[key(r)] = r
	}
	return out
}

// groupBy gathers what val makes of each row under the row's key, in the
// order of the rows.
func groupBy[K comparable, R, V any](rows []R, key func(*R) K, val func(*R) V) map[K][]V {
	out := map[K][]V{}
	for i := range rows {
		k := key(&rows[i])
		out[k] = append(out[k], val(&rows[i]))
	}
	return out
}

// row is the val of groupBy that keeps rows as they are.
func row[T any](r *T) T { return *r }

// withParent is a row read for the key it was asked by, Parent.
type withParent[T any] struct {
	Parent int64 `bun:"parent"`
	Row    T     `bun:"embed:"`
}

// groupByParent gathers rows under their parent, pointing into rows.
func groupByParent[T any](rows []withParent[T]) map[int64][]*T {
	return groupBy(rows, func(r *withParent[T]) int64 { return r.Parent }, func(r *withParent[T]) *T { return &r.Row })
}
