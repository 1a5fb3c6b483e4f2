package db

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
)

// prefixMatch is the condition that col starts with prefix, as a range
// over the column's index. PostgreSQL compares in byte order (COLLATE
// "C", over the indexes of 0003_search), where a locale's collation would
// put "c balazs x" outside ["c balazs", "c balazs\U0010FFFF").
func prefixMatch(idb bun.IDB, col, prefix string) (string, []any) {
	if IsPostgres(idb) {
		col += ` COLLATE "C"`
	}
	return "(" + col + " >= ? AND " + col + " < ?)", []any{prefix, prefix + "\U0010FFFF"}
}

// collated is col in the byte order prefixMatch compares in.
func collated(idb bun.IDB, col string) string {
	if IsPostgres(idb) {
		return col + ` COLLATE "C"`
	}
	return col
}

// NameCursor is the place of a row in a list ordered by a name key, then
// by a count (most first), then by id.
type NameCursor struct {
	Set   bool
	Key   string
	Count int
	ID    int64
}

// SearchResearchers reads up to n+1 researchers whose name key or family
// key starts with key (a names.Key-folded prefix): by name key, then most
// papers first, so that profiles of one name stand side by side. With
// byPapers, the ones with most papers come first instead, and after is
// ignored.
func SearchResearchers(ctx context.Context, idb bun.IDB, key string, byPapers bool, after NameCursor, n int) ([]*Researcher, error) {
	nk, args := prefixMatch(idb, "r.name_key", key)
	fk, fargs := prefixMatch(idb, "r.family_key", key)
	q := "SELECT r.* FROM researchers AS r WHERE (" + nk + " OR " + fk + ")"
	args = append(args, fargs...)
	switch {
	case byPapers:
		q += " ORDER BY r.paper_count DESC, r.id"
	case after.Set:
		q += " AND (" + collated(idb, "r.name_key") + ", -r.paper_count, r.id) > (?, ?, ?)"
		args = append(args, after.Key, -after.Count, after.ID)
		fallthrough
	default:
		q += " ORDER BY " + collated(idb, "r.name_key") + ", r.paper_count DESC, r.id"
	}
	var rows []*Researcher
	err := idb.NewRaw(q+" LIMIT ?", append(args, n+1)...).Scan(ctx, &rows)
	return rows, err
}

// SearchInstitutions reads up to n+1 institutions, by name, one of whose
// names, labels, aliases or acronyms has a word starting with key (a
// names.Words-folded prefix), or whose ROR id is ror.
func SearchInstitutions(ctx context.Context, idb bun.IDB, key, ror string, after NameCursor, n int) ([]*Institution, error) {
	pm, args := prefixMatch(idb, "n.name_key", key)
	cond := "i.id IN (SELECT n.institution_id FROM institution_names AS n WHERE " + pm + " OR n.name_key LIKE ?)"
	args = append(args, "% "+key+"%") // keys hold letters, digits and spaces only
	if ror != "" {
		cond += " OR i.ror_id = ?"
		args = append(args, ror)
	}
	q := "SELECT i.* FROM institutions AS i WHERE (" + cond + ")"
	if after.Set {
		q += " AND (" + collated(idb, "i.name") + ", i.id) > (?, ?)"
		args = append(args, after.Key, after.ID)
	}
	var rows []*Institution
	err := idb.NewRaw(q+" ORDER BY "+collated(idb, "i.name")+", i.id LIMIT ?", append(args, n+1)...).Scan(ctx, &rows)
	return rows, err
}

// SuggestCategories reads up to n categories whose code starts with
// prefix or whose name has a word starting with it, case ignored; those
// of arXiv's taxonomy first, then by code.
func SuggestCategories(ctx context.Context, idb bun.IDB, prefix string, n int) ([]*Category, error) {
	p := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(strings.ToLower(prefix))
	var rows []*Category
	err := idb.NewSelect().Model(&rows).
		Where(`lower(code) LIKE ? ESCAPE '\' OR lower(name) LIKE ? ESCAPE '\' OR lower(name) LIKE ? ESCAPE '\'`, p+"%", p+"%", "% "+p+"%").
		OrderExpr("in_taxonomy DESC, code").Limit(int64(n)).Scan(ctx)
	return rows, err
}

// ResearcherCount is a researcher with their number of papers in some
// list.
type ResearcherCount struct {
	Parent string `bun:"parent"`
	Count  int    `bun:"n"`
	RN     int64  `bun:"rn"`
	Researcher
}

// CategoryTopResearchers reads, for each category, the n researchers with
// most papers filed under it.
func CategoryTopResearchers(ctx context.Context, idb bun.IDB, codes []string, n int) (map[string][]*ResearcherCount, error) {
	var rows []*ResearcherCount
	err := idb.NewRaw(`SELECT t.* FROM (
		  SELECT rc.category AS parent, rc.paper_count AS n, r.*,
		    ROW_NUMBER() OVER (PARTITION BY rc.category ORDER BY rc.paper_count DESC, rc.researcher_id) AS rn
		  FROM researcher_categories AS rc JOIN researchers AS r ON r.id = rc.researcher_id
		  WHERE rc.category IN (?)) AS t
		WHERE t.rn <= ? ORDER BY t.parent, t.rn`, bun.List(codes), n).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	out := map[string][]*ResearcherCount{}
	for _, r := range rows {
		out[r.Parent] = append(out[r.Parent], r)
	}
	return out, nil
}
