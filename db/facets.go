package db

import (
	"cmp"
	"context"
	"slices"

	"github.com/uptrace/bun"
)

// PaperSet is the papers of a list for each of its parents, or those of a
// search (as parent 0): SQL selecting (parent, id) rows, one per paper
// and parent. Facets count over it.
type PaperSet struct {
	sql  string
	args []any
	b    *bound // the keys it binds; the statement that reads it binds them
}

// ctx is the context of the one statement that reads the set.
func (s PaperSet) ctx(ctx context.Context) context.Context {
	if s.b == nil {
		return ctx
	}
	return s.b.ctx(ctx)
}

// ListSet is the papers of list for each parent, only those filed under
// category when it is not empty.
func ListSet[P PaperParent](idb bun.IDB, list PaperList, parents []P, category string) PaperSet {
	// The set is SQL for facets' statements, which bind no keys of
	// their own.
	b := binding(idb)
	q, args := pairs(b, list, parents)
	q = "SELECT s.parent, s.child AS id FROM (" + q + ") AS s"
	if category != "" {
		q += " JOIN papers AS p ON p.id = s.child WHERE 1 = 1" + categoryFilter(idb)
		args = append(args, category)
	}
	return PaperSet{sql: q, args: args, b: b}
}

// Set is the papers s, which has no query, selects, as the papers of
// parent 0 (a query's facets count its candidates: candidateFacets).
func (s PaperSearch) Set(idb bun.IDB) PaperSet {
	b := binding(idb)
	_, from, args := s.filtered(b, idb)
	return PaperSet{sql: "SELECT 0 AS parent, p.id " + from, args: args, b: b}
}

// CategoryCount is how many papers of a set are filed under a category.
type CategoryCount struct {
	Count int
	Category
}

// CategoryFacets counts the papers of each parent's set per category,
// most papers first; a paper counts once in each of its categories.
func CategoryFacets[P PaperParent](ctx context.Context, idb bun.IDB, set PaperSet) (map[P][]CategoryCount, error) {
	var rows []struct {
		Parent P   `bun:"parent"`
		N      int `bun:"n"`
		Category
	}
	err := idb.NewRaw(`SELECT t.parent, t.n, c.* FROM (
		  SELECT f.parent, pc.category, COUNT(DISTINCT f.id) AS n
		  FROM (`+set.sql+`) AS f JOIN paper_categories AS pc ON pc.paper_id = f.id
		  GROUP BY f.parent, pc.category) AS t
		JOIN categories AS c ON c.code = t.category
		ORDER BY t.parent, t.n DESC, c.code`, set.args...).Scan(set.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	out := map[P][]CategoryCount{}
	for _, r := range rows {
		out[r.Parent] = append(out[r.Parent], CategoryCount{Count: r.N, Category: r.Category})
	}
	return out, nil
}

// yearSQL is the SQL of the year (in UTC) of the date in column col,
// NULL for NULL, on PostgreSQL when pg is set, else on SQLite.
func yearSQL(pg bool, col string) string {
	if pg {
		return "CAST(EXTRACT(YEAR FROM " + col + " AT TIME ZONE 'UTC') AS INTEGER)"
	}
	return "CAST(strftime('%Y', " + col + ") AS INTEGER)"
}

// YearCount is how many papers of a set were first published in a year;
// Year is nil for the papers with no date.
type YearCount struct {
	Year  *int `bun:"year"`
	Count int  `bun:"n"`
}

// YearFacets counts the papers of each parent's set per year of first
// publication, oldest first, the papers with no date last. The counts of
// a parent add up to the size of its set.
func YearFacets[P PaperParent](ctx context.Context, idb bun.IDB, set PaperSet) (map[P][]YearCount, error) {
	year := yearSQL(IsPostgres(idb), "p.published")
	var rows []struct {
		Parent P `bun:"parent"`
		YearCount
	}
	err := idb.NewRaw(`SELECT t.parent, t.year, COUNT(*) AS n FROM (
		  SELECT f.parent, `+year+` AS year FROM (`+set.sql+`) AS f JOIN papers AS p ON p.id = f.id) AS t
		GROUP BY t.parent, t.year
		ORDER BY t.parent, t.year IS NULL, t.year`, set.args...).Scan(set.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	out := map[P][]YearCount{}
	for _, r := range rows {
		out[r.Parent] = append(out[r.Parent], r.YearCount)
	}
	return out, nil
}

// SearchFacets counts the papers s selects per category and per year: a
// query's candidates (see SearchCandidates and candidateFacets), or,
// without a query, its Set in one statement, which reads the set once for
// both. The orders are CategoryFacets' and YearFacets'.
func SearchFacets(ctx context.Context, idb bun.IDB, s PaperSearch) ([]CategoryCount, []YearCount, error) {
	if !s.Query.IsZero() {
		c, err := s.candidatesOf(ctx, idb, false)
		if err != nil {
			return nil, nil, err
		}
		return candidateFacets(ctx, idb, c)
	}
	set := s.Set(idb)
	year := yearSQL(IsPostgres(idb), "p.published")
	var rows []struct {
		Kind int  `bun:"kind"`
		N    int  `bun:"n"`
		Year *int `bun:"year"`
		Category
	}
	err := idb.NewRaw(`WITH f AS MATERIALIZED (`+set.sql+`)
		SELECT 0 AS kind, t.n, NULL AS year, c.code, c.name, c.archive, c.group_name, c.active, c.in_taxonomy FROM (
		  SELECT pc.category, COUNT(DISTINCT f.id) AS n FROM f JOIN paper_categories AS pc ON pc.paper_id = f.id
		  GROUP BY pc.category) AS t
		JOIN categories AS c ON c.code = t.category
		UNION ALL
		SELECT 1, COUNT(*), t.year, NULL, NULL, NULL, NULL, NULL, NULL FROM (
		  SELECT `+year+` AS year FROM f JOIN papers AS p ON p.id = f.id) AS t
		GROUP BY t.year`, set.args...).Scan(set.ctx(ctx), &rows)
	if err != nil {
		return nil, nil, err
	}
	var cats []CategoryCount
	var years []YearCount
	for _, r := range rows {
		if r.Kind == 0 {
			cats = append(cats, CategoryCount{Count: r.N, Category: r.Category})
		} else {
			years = append(years, YearCount{Year: r.Year, Count: r.N})
		}
	}
	sortFacets(cats, years)
	return cats, years, nil
}

// sortFacets puts facets in their orders: categories most papers first
// (then by code), years oldest first with the undated last.
func sortFacets(cats []CategoryCount, years []YearCount) {
	slices.SortFunc(cats, func(a, b CategoryCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Code, b.Code))
	})
	slices.SortFunc(years, func(a, b YearCount) int {
		if a.Year == nil || b.Year == nil {
			return cmp.Compare(boolRank(a.Year == nil), boolRank(b.Year == nil))
		}
		return cmp.Compare(*a.Year, *b.Year)
	})
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// candidateFacets is SearchFacets over a search's candidates: the years
// from c itself, the categories in one statement over c's ids (none when
// there are no candidates), which reads the categories' index and no
// paper.
func candidateFacets(ctx context.Context, idb bun.IDB, c *Candidates) ([]CategoryCount, []YearCount, error) {
	if len(c.IDs) == 0 {
		return nil, nil, nil
	}
	var cats []CategoryCount
	b := binding(idb)
	cond, args := in(b, "pc.paper_id", c.IDs)
	err := idb.NewRaw(`SELECT t.n AS count, c.* FROM (
		  SELECT pc.category, COUNT(*) AS n FROM paper_categories AS pc WHERE `+cond+` GROUP BY pc.category) AS t
		JOIN categories AS c ON c.code = t.category`, args...).Scan(b.ctx(ctx), &cats)
	if err != nil {
		return nil, nil, err
	}
	perYear := map[int]int{}
	undated := 0
	for _, r := range c.rows {
		if r.Year == 0 {
			undated++
		} else {
			perYear[r.Year]++
		}
	}
	years := make([]YearCount, 0, len(perYear)+1)
	for y, n := range perYear {
		years = append(years, YearCount{Year: &y, Count: n})
	}
	if undated > 0 {
		years = append(years, YearCount{Count: undated})
	}
	sortFacets(cats, years)
	return cats, years, nil
}
