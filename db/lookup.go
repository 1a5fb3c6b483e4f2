package db

import (
	"context"
	"fmt"
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

// NamePage is a page of a list ordered by a name key: up to N rows after
// After and before Before (either may be unset), the first N of them, or
// with Last the last N.
type NamePage struct {
	After, Before NameCursor
	N             int
	Last          bool
}

// nameSearch reads a page of the rows of query (a SELECT whose WHERE ends
// open), with cmp the tuple of its order as compared with a cursor's
// values, order the ORDER BY, backward its reverse, and vals a cursor's
// values in the tuple's order. It reads one row more than the page so
// that the caller can tell whether more follow in the direction read.
func nameSearch[T any](ctx context.Context, idb bun.IDB, q string, args []any, cmp, order, backward string, vals func(NameCursor) []any, p NamePage) ([]*T, error) {
	for _, c := range []struct {
		at NameCursor
		op string
	}{{p.After, ">"}, {p.Before, "<"}} {
		if c.at.Set {
			v := vals(c.at)
			q += " AND " + cmp + " " + c.op + " (" + strings.TrimSuffix(strings.Repeat("?, ", len(v)), ", ") + ")"
			args = append(args, v...)
		}
	}
	if p.Last {
		order = backward
	}
	var rows []*T
	err := idb.NewRaw(q+" ORDER BY "+order+" LIMIT ?", append(args, p.N+1)...).Scan(ctx, &rows)
	return rows, err
}

// researcherMatch is the condition that a researcher's name key or family
// key starts with key (a names.Key-folded prefix).
func researcherMatch(idb bun.IDB, key string) (string, []any) {
	nk, args := prefixMatch(idb, "r.name_key", key)
	fk, fargs := prefixMatch(idb, "r.family_key", key)
	return "(" + nk + " OR " + fk + ")", append(args, fargs...)
}

// SearchResearchers reads a page of the researchers whose name key or
// family key starts with key (a names.Key-folded prefix): by name key,
// then most papers first, so that profiles of one name stand side by
// side; one row more than p.N, in the order read (backward with p.Last).
func SearchResearchers(ctx context.Context, idb bun.IDB, key string, p NamePage) ([]*Researcher, error) {
	cond, args := researcherMatch(idb, key)
	nk := collated(idb, "r.name_key")
	return nameSearch[Researcher](ctx, idb, "SELECT r.* FROM researchers AS r WHERE "+cond, args,
		"("+nk+", -r.paper_count, r.id)", nk+", r.paper_count DESC, r.id", nk+" DESC, r.paper_count, r.id DESC",
		func(c NameCursor) []any { return []any{c.Key, -c.Count, c.ID} }, p)
}

// SuggestResearchers reads up to n researchers whose name key or family
// key starts with key, most papers first.
func SuggestResearchers(ctx context.Context, idb bun.IDB, key string, n int) ([]*Researcher, error) {
	cond, args := researcherMatch(idb, key)
	var rows []*Researcher
	err := idb.NewRaw("SELECT r.* FROM researchers AS r WHERE "+cond+" ORDER BY r.paper_count DESC, r.id LIMIT ?", append(args, n)...).Scan(ctx, &rows)
	return rows, err
}

// CountResearchers counts the researchers SearchResearchers lists for
// key: two ranges of the name indexes, at most every researcher.
func CountResearchers(ctx context.Context, idb bun.IDB, key string) (int, error) {
	cond, args := researcherMatch(idb, key)
	var n int
	err := idb.NewRaw("SELECT COUNT(*) FROM researchers AS r WHERE "+cond, args...).Scan(ctx, &n)
	return n, err
}

// institutionMatch is the condition that one of an institution's names,
// labels, aliases or acronyms has a word starting with key (a
// names.Words-folded prefix), or that its ROR id is ror.
func institutionMatch(idb bun.IDB, key, ror string) (string, []any) {
	pm, args := prefixMatch(idb, "n.name_key", key)
	cond := "i.id IN (SELECT n.institution_id FROM institution_names AS n WHERE " + pm + " OR n.name_key LIKE ?)"
	args = append(args, "% "+key+"%") // keys hold letters, digits and spaces only
	if ror != "" {
		cond += " OR i.ror_id = ?"
		args = append(args, ror)
	}
	return "(" + cond + ")", args
}

// SearchInstitutions reads a page of the institutions, by name, that
// institutionMatch finds for key and ror; one row more than p.N, in the
// order read (backward with p.Last).
func SearchInstitutions(ctx context.Context, idb bun.IDB, key, ror string, p NamePage) ([]*Institution, error) {
	cond, args := institutionMatch(idb, key, ror)
	name := collated(idb, "i.name")
	return nameSearch[Institution](ctx, idb, "SELECT i.* FROM institutions AS i WHERE "+cond, args,
		"("+name+", i.id)", name+", i.id", name+" DESC, i.id DESC",
		func(c NameCursor) []any { return []any{c.Key, c.ID} }, p)
}

// CountInstitutions counts the institutions SearchInstitutions lists for
// key and ror. The word match reads every other name (a few per
// institution), as the search does.
func CountInstitutions(ctx context.Context, idb bun.IDB, key, ror string) (int, error) {
	cond, args := institutionMatch(idb, key, ror)
	var n int
	err := idb.NewRaw("SELECT COUNT(*) FROM institutions AS i WHERE "+cond, args...).Scan(ctx, &n)
	return n, err
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
	Researcher
}

// CategoryTopResearchers reads, for each category, the n researchers with
// most papers filed under it: for each category one SELECT … LIMIT n over
// the researcher_categories_rank index (so that the cost is n rows, not
// the category's researchers), joined by UNION ALL, and the researchers
// of those rows.
func CategoryTopResearchers(ctx context.Context, idb bun.IDB, codes []string, n int) (map[string][]*ResearcherCount, error) {
	var rows []*ResearcherCount
	for lo := 0; lo < len(codes); lo += categoryBranches {
		part := codes[lo:min(lo+categoryBranches, len(codes))]
		branches := make([]string, len(part))
		args := make([]any, 0, 2*len(part))
		for i, code := range part {
			branches[i] = fmt.Sprintf(`SELECT * FROM (SELECT rc.category AS parent, rc.paper_count AS n, rc.researcher_id AS rid
				FROM researcher_categories AS rc WHERE rc.category = ?
				ORDER BY rc.paper_count DESC, rc.researcher_id LIMIT ?) AS b%d`, i)
			args = append(args, code, n)
		}
		var got []*ResearcherCount
		err := idb.NewRaw(`SELECT t.parent, t.n, r.* FROM (`+strings.Join(branches, " UNION ALL ")+`) AS t
			JOIN researchers AS r ON r.id = t.rid ORDER BY t.parent, t.n DESC, t.rid`, args...).Scan(ctx, &got)
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	out := map[string][]*ResearcherCount{}
	for _, r := range rows {
		out[r.Parent] = append(out[r.Parent], r)
	}
	return out, nil
}
