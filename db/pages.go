package db

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Lists that can grow (a researcher's papers, a paper's citations, a
// researcher's co-authors) are read a page at a time, for many parents in
// one statement: each parent's rows after the cursor in the list's order,
// n+1 of them (the extra row tells whether another page follows), by an
// ORDER BY … LIMIT per parent (limitPages), or as a range of an index
// (rangePages); past limitBranches parents on SQLite, ROW_NUMBER() OVER
// (PARTITION BY parent ORDER BY …) numbers every parent's rows and the
// outer query keeps the first n+1 of each (pageSQL). Cursors are keysets
// (sort key, id), so rows added meanwhile do not shift a page.

// PaperOrder is the order of a list of papers.
type PaperOrder uint8

// The orders of paper lists. Papers with no date come last in both date
// orders.
const (
	Newest PaperOrder = iota
	Oldest
	MostCited
	// Relevance orders search results by their Score, best first; only
	// SearchPapers takes it.
	Relevance
)

// Cursor is the place of an item in a list: its sort key and its id. The
// zero Cursor is no cursor.
type Cursor struct {
	Set  bool
	Null bool  // the sort key is NULL
	Key  int64 // the sort key; a time as Unix nanoseconds
	ID   int64
}

// PageArgs selects a page: the first First items after After, or the last
// Last items before Before (First wins when both are set). Order and
// Category apply to paper lists. PageArgs is comparable, so that it can be
// part of a loader key.
type PageArgs struct {
	First, Last   int
	After, Before Cursor
	Order         PaperOrder
	Category      string
}

// Page is one page of a parent's list. A page read without a cursor also
// knows the length of the whole list: Total, when Counted.
type Page[T any] struct {
	Items            []T
	HasNext, HasPrev bool
	Total            int
	Counted          bool
}

// Counted tells whether a page read with a's arguments counts its whole
// list as well (see pageSQL): one read without a cursor.
func (a PageArgs) Counted() bool { return !a.After.Set && !a.Before.Set }

// keyset describes a list order: a sort key and a unique id breaking ties.
type keyset struct {
	key, id         string
	keyDesc, idDesc bool
	nullable        bool // the key may be NULL; NULLs come last
	isTime          bool // the key is a timestamp
	isScore         bool // the key is a float64 (see scoreKey)
}

var paperKeysets = map[PaperOrder]keyset{
	Newest:    {key: "p.published", id: "p.id", keyDesc: true, idDesc: true, nullable: true, isTime: true},
	Oldest:    {key: "p.published", id: "p.id", nullable: true, isTime: true},
	MostCited: {key: "p.citation_count", id: "p.id", keyDesc: true, idDesc: true},
}

var coauthorKeyset = keyset{key: "c.paper_count", id: "c.coauthor_id", keyDesc: true}

func dir(desc, flip bool) string {
	if desc != flip {
		return "DESC"
	}
	return "ASC"
}

// compareOp is the comparison that moves past a cursor along a key sorted
// desc, read backward when flip.
func compareOp(desc, flip bool) string {
	if desc != flip {
		return "<"
	}
	return ">"
}

// orderBy is the ORDER BY list, reversed when backward.
func (k keyset) orderBy(backward bool) string {
	s := k.key + " " + dir(k.keyDesc, backward)
	if k.nullable {
		if backward {
			s += " NULLS FIRST"
		} else {
			s += " NULLS LAST"
		}
	}
	return s + ", " + k.id + " " + dir(k.idDesc, backward)
}

// beyond is the condition for rows that come after c in the order,
// reversed when backward.
func (k keyset) beyond(c Cursor, backward bool) (string, []any) {
	var key any = c.Key
	switch {
	case k.isTime:
		key = time.Unix(0, c.Key).UTC()
	case k.isScore:
		key = keyScore(c.Key)
	}
	kc, ic := k.key+" "+compareOp(k.keyDesc, backward)+" ?", k.id+" "+compareOp(k.idDesc, backward)+" ?"
	after := "(" + kc + " OR (" + k.key + " = ? AND " + ic + ")"
	switch {
	case !k.nullable:
		return after + ")", []any{key, key, c.ID}
	case !c.Null && !backward: // NULLs follow every key
		return after + " OR " + k.key + " IS NULL)", []any{key, key, c.ID}
	case !c.Null:
		return after + ")", []any{key, key, c.ID}
	case !backward:
		return "(" + k.key + " IS NULL AND " + ic + ")", []any{c.ID}
	default: // reversed, NULLs come first: every keyed row follows
		return "((" + k.key + " IS NULL AND " + ic + ") OR " + k.key + " IS NOT NULL)", []any{c.ID}
	}
}

// pageSQL wraps the rows of from (a FROM … WHERE …) in the window that
// keeps the page of each parent; cols must name the parent "parent". With
// count and no cursor (a.Counted), each row also carries the number of
// rows of its parent, "total", so that the page's statement answers the
// list's totalCount too.
func (k keyset) pageSQL(cols, parent, from string, args []any, a PageArgs, count bool) (string, []any) {
	backward := a.backward()
	var where []string
	if a.After.Set {
		c, ca := k.beyond(a.After, false)
		where = append(where, c)
		args = append(args, ca...)
	}
	if a.Before.Set {
		c, ca := k.beyond(a.Before, true)
		where = append(where, c)
		args = append(args, ca...)
	}
	cond := ""
	if len(where) > 0 {
		cond = " AND " + strings.Join(where, " AND ")
	}
	if count && a.Counted() {
		cols += ", COUNT(*) OVER (PARTITION BY " + parent + ") AS total"
	}
	q := fmt.Sprintf(`SELECT t.* FROM (SELECT %s, ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s) AS rn %s%s) AS t
		WHERE t.rn <= ? ORDER BY t.parent, t.rn`, cols, parent, k.orderBy(backward), from, cond)
	return q, append(args, a.size()+1)
}

// limitSQL is pageSQL for a list of one parent (a search): a plain
// ORDER BY … LIMIT, which PostgreSQL and SQLite can stop early, along an
// index or with a top-n sort, where the window numbers every row first.
func (k keyset) limitSQL(cols, from string, args []any, a PageArgs) (string, []any) {
	backward := a.backward()
	for _, c := range []struct {
		c    Cursor
		back bool
	}{{a.After, false}, {a.Before, true}} {
		if c.c.Set {
			cond, ca := k.beyond(c.c, c.back)
			from += " AND " + cond
			args = append(args, ca...)
		}
	}
	return "SELECT " + cols + " " + from + " ORDER BY " + k.orderBy(backward) + " LIMIT ?", append(args, a.size()+1)
}

func (a PageArgs) size() int {
	if a.First > 0 || a.Last == 0 {
		return a.First
	}
	return a.Last
}

// split cuts rows (ordered by parent, then rank) into a page per parent;
// total, when not nil, reads the list's length off a row (see pageSQL).
func split[T any, P comparable](rows []T, parent func(T) P, total func(T) int, a PageArgs) map[P]Page[T] {
	out := map[P]Page[T]{}
	n, backward := a.size(), a.backward()
	for i := 0; i < len(rows); {
		p := parent(rows[i])
		j := i
		for j < len(rows) && parent(rows[j]) == p {
			j++
		}
		items := rows[i:j:j]
		more := len(items) > n
		if more {
			items = items[:n]
		}
		pg := Page[T]{Items: items, HasNext: more || a.Before.Set, HasPrev: a.After.Set}
		if total != nil && a.Counted() {
			pg.Total, pg.Counted = total(rows[i]), true
		}
		if backward {
			slices.Reverse(items)
			pg.HasNext, pg.HasPrev = a.Before.Set, more || a.After.Set
		}
		out[p] = pg
		i = j
	}
	return out
}

// PaperList names a list of papers that belongs to a parent.
type PaperList uint8

// The paper lists.
const (
	// ResearcherPapers are a researcher's papers.
	ResearcherPapers PaperList = iota
	// Citations are the papers of the archive citing a paper.
	Citations
	// References are the papers of the archive a paper cites.
	References
	// InstitutionPapers are the papers with an author affiliation matched
	// to an institution.
	InstitutionPapers
	// CategoryPapers are the papers filed under a category; their parents
	// are category codes.
	CategoryPapers
	// FeedPapers are the papers of the researchers and categories an API
	// key follows; their parents are api_keys ids.
	FeedPapers
	// TopicPapers are the papers filed under a topic (see package topics).
	TopicPapers
)

// PaperParent is the key of the parent of a paper list: a row id, or a
// category code for CategoryPapers.
type PaperParent interface{ ~int64 | ~string }

// listPairs selects (parent, child) paper pairs of a list, without
// duplicates (one person twice on a byline, one paper cited by arXiv id and
// by DOI).
var listPairs = map[PaperList]string{
	ResearcherPapers:  "SELECT DISTINCT researcher_id AS parent, paper_id AS child FROM authorships WHERE researcher_id IN (?)",
	Citations:         "SELECT DISTINCT cited_id AS parent, citing_id AS child FROM paper_references WHERE cited_id IN (?)",
	References:        "SELECT DISTINCT citing_id AS parent, cited_id AS child FROM paper_references WHERE citing_id IN (?) AND cited_id IS NOT NULL",
	InstitutionPapers: "SELECT DISTINCT institution_id AS parent, paper_id AS child FROM affiliations WHERE institution_id IN (?)",
	// The writer files a paper under a category once.
	CategoryPapers: "SELECT category AS parent, paper_id AS child FROM paper_categories WHERE category IN (?)",
	FeedPapers: `SELECT f.api_key_id AS parent, a.paper_id AS child FROM followed_researchers AS f
		  JOIN authorships AS a ON a.researcher_id = f.researcher_id WHERE f.api_key_id IN (?)
		UNION SELECT f.api_key_id, pc.paper_id FROM followed_categories AS f
		  JOIN paper_categories AS pc ON pc.category = f.category WHERE f.api_key_id IN (?)`,
	TopicPapers: "SELECT topic_id AS parent, paper_id AS child FROM paper_topics WHERE topic_id IN (?)",
}

// pairs is the SQL of list's pairs for parents and its arguments: the
// parents for each IN (?) of the list (bound once where b binds).
func pairs[P PaperParent](b *bound, list PaperList, parents []P) (string, []any) {
	parts := strings.Split(listPairs[list], " IN (?)")
	var args []any
	for i := 1; i < len(parts); i++ {
		col := parts[i-1][strings.LastIndexByte(parts[i-1], ' ')+1:]
		cond, a := in(b, col, parents)
		parts[i-1] = parts[i-1][:len(parts[i-1])-len(col)] + cond
		args = append(args, a...)
	}
	return strings.Join(parts, ""), args
}

// categoryFilter keeps the papers "p" filed under a category (one
// argument), probing each paper's own categories. On SQLite the unary plus
// keeps the planner from the category index: since migration 0013 it is
// (category, published, paper_id), so a probe by category and paper id
// walks the category's whole range for each paper: `the` in hep-th would
// read the category once per matching paper, where a probe by paper id
// reads the paper's few categories.
// PostgreSQL plans the probe by its statistics (and has no unary plus on
// text).
func categoryFilter(idb bun.IDB) string {
	return " AND EXISTS (SELECT 1 FROM paper_categories AS pc WHERE pc.paper_id = p.id AND " + probeColumn(idb, "pc.category") + " = ?)"
}

// probeColumn is col in a probe of a paper's rows by its id: "+col" on
// SQLite, which keeps the planner on the table's primary key (see
// categoryFilter; a researcher filter likewise, since the authorships'
// researcher index is (researcher, date, paper)).
func probeColumn(idb bun.IDB, col string) string {
	if IsPostgres(idb) {
		return col
	}
	return "+" + col
}

// paperListColumns are the columns of the papers of a list page: all but
// the long text (abstract, byline, comments, journal reference, report
// number, licence) and the external ids, which pages rarely show and which
// would cost most of the page's reading.
const paperListColumns = "p.id, p.arxiv_id, p.version, p.doi, p.title, p.published, p.updated, p.primary_category, " +
	"p.cited_by_count, p.cited_by_source, p.cited_by_at, p.author_count, p.authors_complete, p.archive_citation_count, p.citation_count"

// PaperPages reads one page of the list of each parent. The papers are
// Partial. Read without a cursor, each page is Counted; a parent with no
// papers is absent.
func PaperPages[P PaperParent](ctx context.Context, idb bun.IDB, list PaperList, parents []P, a PageArgs) (map[P]Page[*Paper], error) {
	if len(parents) == 0 {
		return map[P]Page[*Paper]{}, nil
	}
	b := binding(idb)
	if inRange(list, a) {
		if u := uniqueParents(parents); b.pg || list != ResearcherPapers || len(u) <= rangeBranches {
			return rangePages(ctx, idb, b, list, u, a)
		}
	}
	k := paperKeysets[a.Order]
	var q string
	var args []any
	if lp, ok := limitPagesFor(b, len(parents)); ok {
		pairsOf := func(parent string) string { return strings.ReplaceAll(listPairs[list], " IN (?)", " = "+parent) }
		var count func(string) string
		if a.Category == "" { // every pair is a paper's: count the pairs alone
			count = func(parent string) string { return "FROM (" + pairsOf(parent) + ") AS s" }
		}
		q, args = limitPagesSQL(lp, perParent[P]{
			cols: "s.parent, " + paperListColumns,
			from: func(parent string) string {
				from := "FROM (" + pairsOf(parent) + ") AS s JOIN papers AS p ON p.id = s.child WHERE 1 = 1"
				if a.Category != "" {
					from += categoryFilter(idb)
				}
				return from
			},
			count: count,
			args: func(parent *P) []any {
				var args []any
				if parent != nil {
					for range strings.Count(listPairs[list], " IN (?)") {
						args = append(args, *parent)
					}
				}
				if a.Category != "" {
					args = append(args, a.Category)
				}
				return args
			},
		}, parents, a, k)
		outer := keyset{key: "k." + strings.TrimPrefix(k.key, "p."), id: "k." + strings.TrimPrefix(k.id, "p."),
			keyDesc: k.keyDesc, idDesc: k.idDesc, nullable: k.nullable}
		q = "SELECT k.* FROM " + q + " ORDER BY k.parent, " + outer.orderBy(a.backward())
	} else {
		q, args = pairs(b, list, parents)
		from := "FROM (" + q + ") AS s JOIN papers AS p ON p.id = s.child WHERE 1 = 1"
		if a.Category != "" {
			from += categoryFilter(idb)
			args = append(args, a.Category)
		}
		q, args = k.pageSQL("s.parent, "+paperListColumns, "s.parent", from, args, a, true)
	}
	var rows []*pageRow[P]
	if err := idb.NewRaw(q, args...).Scan(b.ctx(ctx), &rows); err != nil {
		return nil, err
	}
	out := map[P]Page[*Paper]{}
	paperPages(out, rows, a)
	return out, nil
}

// paperPages cuts rows read for a's pages (see split) into a page of
// Partial papers for each parent, into out.
func paperPages[P PaperParent](out map[P]Page[*Paper], rows []*pageRow[P], a PageArgs) {
	for parent, pg := range split(rows, func(r *pageRow[P]) P { return r.Parent }, func(r *pageRow[P]) int { return r.Total }, a) {
		papers := make([]*Paper, len(pg.Items))
		for i, r := range pg.Items {
			r.Partial = true
			papers[i] = &r.Paper
		}
		out[parent] = Page[*Paper]{Items: papers, HasNext: pg.HasNext, HasPrev: pg.HasPrev, Total: pg.Total, Counted: pg.Counted}
	}
}

type pageRow[P PaperParent] struct {
	Parent P     `bun:"parent"`
	RN     int64 `bun:"rn"`
	Total  int   `bun:"total"`
	Paper
}

// PaperTotals counts the papers of each parent's list, only those filed
// under category when it is not empty. Parents with none are absent.
func PaperTotals[P PaperParent](ctx context.Context, idb bun.IDB, list PaperList, parents []P, category string) (map[P]int, error) {
	b := binding(idb)
	// stored reads the counts kept in column n of table, by key.
	stored := func(key, n, table string) (map[P]int, error) {
		cond, args := in(b, key, parents)
		return totals[P](b.ctx(ctx), idb, "SELECT "+key+" AS parent, "+n+" AS n FROM "+table+" WHERE "+cond+" AND "+n+" > 0", args)
	}
	switch {
	case list == CategoryPapers && category == "":
		return stored("code", "paper_count", "categories")
	case list == TopicPapers && category == "":
		return stored("id", "paper_count", "topics")
	case list == Citations && category == "":
		return stored("id", "archive_citation_count", "papers")
	}
	q, args := pairs(b, list, parents)
	q = "SELECT s.parent, COUNT(*) AS n FROM (" + q + ") AS s"
	if category != "" {
		q += " JOIN papers AS p ON p.id = s.child WHERE 1 = 1" + categoryFilter(idb)
		args = append(args, category)
	}
	return totals[P](b.ctx(ctx), idb, q+" GROUP BY s.parent", args)
}

func totals[P PaperParent](ctx context.Context, idb bun.IDB, q string, args []any) (map[P]int, error) {
	var rows []struct {
		Parent P   `bun:"parent"`
		N      int `bun:"n"`
	}
	if err := idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	out := make(map[P]int, len(rows))
	for _, r := range rows {
		out[r.Parent] = r.N
	}
	return out, nil
}

// PaperCursor is the cursor of p in a list in order o.
func PaperCursor(p *Paper, o PaperOrder) Cursor {
	switch o {
	case MostCited:
		return Cursor{Set: true, Key: int64(p.CitationCount), ID: p.ID}
	case Relevance:
		return Cursor{Set: true, Key: scoreKey(p.Score), ID: p.ID}
	}
	if p.Published.IsZero() {
		return Cursor{Set: true, Null: true, ID: p.ID}
	}
	return Cursor{Set: true, Key: p.Published.UnixNano(), ID: p.ID}
}

// CoauthorRow is a co-author with the number of papers shared.
type CoauthorRow struct {
	Parent     int64 `bun:"parent"`
	Shared     int   `bun:"shared"`
	CoauthorID int64 `bun:"coauthor_id"` // Researcher.ID
	RN         int64 `bun:"rn"`
	// Total is the number of co-authors of Parent when the page was read
	// without a cursor (see Page.Counted).
	Total int `bun:"total"`
	Researcher
}

// CoauthorPages reads one page of the co-authors of each researcher, most
// shared papers first; read without a cursor, each page is Counted. Each
// researcher's page is an ORDER BY … LIMIT of its own (see limitPages);
// the rows kept are joined to their researchers.
func CoauthorPages(ctx context.Context, idb bun.IDB, researchers []int64, a PageArgs) (map[int64]Page[*CoauthorRow], error) {
	if len(researchers) == 0 {
		return map[int64]Page[*CoauthorRow]{}, nil
	}
	b := binding(idb)
	var q string
	var args []any
	if lp, ok := limitPagesFor(b, len(researchers)); ok {
		q, args = limitPagesSQL(lp, perParent[int64]{
			cols: "c.researcher_id AS parent, c.paper_count AS shared, c.coauthor_id",
			from: func(parent string) string { return "FROM coauthors AS c WHERE c.researcher_id = " + parent },
			args: func(parent *int64) []any {
				if parent == nil {
					return nil
				}
				return []any{*parent}
			},
		}, researchers, a, coauthorKeyset)
		q = "SELECT k.*, r.* FROM " + q + " JOIN researchers AS r ON r.id = k.coauthor_id ORDER BY k.parent, " +
			keyset{key: "k.shared", id: "k.coauthor_id", keyDesc: true}.orderBy(a.backward())
	} else {
		var cond string
		cond, args = in(b, "c.researcher_id", researchers)
		// The window numbers the co-author pairs alone, and only the rows it
		// keeps are joined to their researchers: joining first would read the
		// row of every co-author, where a page needs ten.
		q, args = coauthorKeyset.pageSQL("c.researcher_id AS parent, c.paper_count AS shared, c.coauthor_id", "c.researcher_id",
			"FROM coauthors AS c WHERE "+cond, args, a, true)
		q = "SELECT k.*, r.* FROM (" + q + ") AS k JOIN researchers AS r ON r.id = k.coauthor_id ORDER BY k.parent, k.rn"
	}
	var rows []*CoauthorRow
	if err := idb.NewRaw(q, args...).Scan(b.ctx(ctx), &rows); err != nil {
		return nil, err
	}
	return split(rows, func(r *CoauthorRow) int64 { return r.Parent }, func(r *CoauthorRow) int { return r.Total }, a), nil
}

// limitPages reads a page of each parent's list with an ORDER BY … LIMIT
// per parent, which stops along an index or keeps a top-n sort, where the
// window of pageSQL numbers and counts every row of every parent first,
// so that a few parents with long lists (a prolific researcher's
// co-authors) cost their pages, not their lists. PostgreSQL runs the
// LIMIT for each parent of a bound array in a LATERAL join, one SQL text
// for any number of parents (see bound); SQLite, which has no LATERAL, a
// SELECT per parent joined by UNION ALL, for at most limitBranches
// parents (more take the window, one statement still).
type limitPages struct {
	b       *bound
	lateral bool
}

// limitPagesFor reports how n parents' pages are read by limitPages, if
// they are.
func limitPagesFor(b *bound, n int) (limitPages, bool) {
	return limitPages{b: b, lateral: b.pg}, b.pg || n <= limitBranches
}

// limitBranches is the most parents SQLite reads with a SELECT each
// (limitPages): each SELECT is prepared apart, so that past a few dozen
// parents with short lists the preparing costs more than the window's
// one pass, while a few parents with long lists (the README query's
// researchers) are read far faster a LIMIT each.
const limitBranches = 32

// uniqueParents is parents without repeats, in their order: a parent
// named twice would get two SELECTs, and its page twice over.
func uniqueParents[P PaperParent](parents []P) []P {
	seen := make(map[P]bool, len(parents))
	out := make([]P, 0, len(parents))
	for _, p := range parents {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func (a PageArgs) backward() bool { return a.First == 0 && a.Last > 0 }

// perParent is a list as limitPages reads it: from is its FROM … WHERE …
// for the parent that the SQL expression parent names, and args the
// arguments of that text, given the parent's value (nil when parent is
// not a placeholder). cols name the parent "parent".
type perParent[P PaperParent] struct {
	cols string
	from func(parent string) string
	args func(parent *P) []any
	// count, when not nil, is the FROM … WHERE … that counts the list
	// (with from's arguments), when from holds more than the count needs.
	count func(parent string) string
}

// countFrom is the FROM … WHERE … whose rows are the list's length.
func (l perParent[P]) countFrom(parent string) string {
	if l.count != nil {
		return l.count(parent)
	}
	return l.from(parent)
}

// limitPagesSQL is the FROM item "k" of the rows of the parents' pages of
// l in order a, ordered within each parent, with each row's "total" when
// a.Counted (the rows of the parent's from, counted).
func limitPagesSQL[P PaperParent](lp limitPages, l perParent[P], parents []P, a PageArgs, k keyset) (string, []any) {
	parents = uniqueParents(parents)
	backward := a.backward()
	var cond string
	var condArgs []any
	for _, c := range []struct {
		cur  Cursor
		back bool
	}{{a.After, false}, {a.Before, true}} {
		if c.cur.Set {
			w, wa := k.beyond(c.cur, c.back)
			cond += " AND " + w
			condArgs = append(condArgs, wa...)
		}
	}
	page := func(parent string) string {
		return "SELECT " + l.cols + " " + l.from(parent) + cond + " ORDER BY " + k.orderBy(backward) + " LIMIT ?"
	}
	if lp.lateral {
		arr, typ := pgArray(parents)
		q := "unnest(" + lp.b.add(arr) + "::" + typ + ") AS v(parent) CROSS JOIN LATERAL (" + page("v.parent") + ") AS k0"
		args := append(append(l.args(nil), condArgs...), a.size()+1)
		if a.Counted() {
			q += " CROSS JOIN LATERAL (SELECT COUNT(*) " + l.countFrom("v.parent") + ") AS n(total)"
			return "(SELECT k0.*, n.total FROM " + q + ") AS k", append(args, l.args(nil)...)
		}
		return "(SELECT k0.* FROM " + q + ") AS k", args
	}
	var branches []string
	var args []any
	for i := range parents {
		// The parent is a parameter of its own where the pool binds (see
		// bound), the statement's text then the same for any parents.
		parent, parentArgs := "?", l.args(&parents[i])
		if lp.b.lite {
			parent, parentArgs = lp.b.add(parentValue(parents[i])), l.args(nil)
		}
		total := ""
		if a.Counted() {
			total = ", (SELECT COUNT(*) " + l.countFrom(parent) + ") AS total"
			args = append(args, parentArgs...)
		}
		branches = append(branches, fmt.Sprintf("SELECT * FROM (SELECT b%d.*%s FROM (%s) AS b%d) AS u%d", i, total, page(parent), i, i))
		args = append(append(append(args, parentArgs...), condArgs...), a.size()+1)
	}
	return "(" + strings.Join(branches, " UNION ALL ") + ") AS k", args
}

// CoauthorTotals counts the co-authors of each researcher. Researchers
// with none are absent.
func CoauthorTotals(ctx context.Context, idb bun.IDB, researchers []int64) (map[int64]int, error) {
	b := binding(idb)
	cond, args := in(b, "researcher_id", researchers)
	return totals[int64](b.ctx(ctx), idb, "SELECT researcher_id AS parent, COUNT(*) AS n FROM coauthors WHERE "+cond+" GROUP BY researcher_id", args)
}

// CoauthorCursor is the cursor of a co-author in the list.
func CoauthorCursor(r *CoauthorRow) Cursor {
	return Cursor{Set: true, Key: int64(r.Shared), ID: r.ID}
}

// InstitutionResearcherRow is a researcher of an institution with the
// number of their papers on which an affiliation of theirs is matched to
// it.
type InstitutionResearcherRow struct {
	Parent     int64 `bun:"parent"`
	PaperCount int   `bun:"institution_paper_count"`
	RN         int64 `bun:"rn"`
	Researcher
}

var institutionResearcherKeyset = keyset{key: "c.institution_paper_count", id: "c.researcher_id", keyDesc: true}

// institutionResearchers counts, for each institution, the papers of each
// researcher with an affiliation matched to it, for the institutions
// bound in b, and returns its arguments.
func institutionResearchers(b *bound, institutions []int64) (string, []any) {
	cond, args := in(b, "af.institution_id", institutions)
	return `SELECT af.institution_id AS parent, a.researcher_id, COUNT(DISTINCT a.paper_id) AS institution_paper_count
	FROM affiliations AS af JOIN authorships AS a ON a.paper_id = af.paper_id AND a.position = af.position
	WHERE ` + cond + ` AND a.researcher_id IS NOT NULL
	GROUP BY af.institution_id, a.researcher_id`, args
}

// InstitutionResearcherPages reads one page of the researchers of each
// institution, those with most papers there first.
func InstitutionResearcherPages(ctx context.Context, idb bun.IDB, institutions []int64, a PageArgs) (map[int64]Page[*InstitutionResearcherRow], error) {
	b := binding(idb)
	counts, args := institutionResearchers(b, institutions)
	q, args := institutionResearcherKeyset.pageSQL("c.parent, c.institution_paper_count, r.*", "c.parent",
		"FROM ("+counts+") AS c JOIN researchers AS r ON r.id = c.researcher_id WHERE 1 = 1", args, a, false)
	var rows []*InstitutionResearcherRow
	if err := idb.NewRaw(q, args...).Scan(b.ctx(ctx), &rows); err != nil {
		return nil, err
	}
	return split(rows, func(r *InstitutionResearcherRow) int64 { return r.Parent }, nil, a), nil
}

// InstitutionResearcherTotals counts the researchers of each institution.
// Institutions with none are absent.
func InstitutionResearcherTotals(ctx context.Context, idb bun.IDB, institutions []int64) (map[int64]int, error) {
	b := binding(idb)
	counts, args := institutionResearchers(b, institutions)
	return totals[int64](b.ctx(ctx), idb, "SELECT c.parent, COUNT(*) AS n FROM ("+counts+") AS c GROUP BY c.parent", args)
}

// InstitutionResearcherCursor is the cursor of a researcher in the list of
// an institution's researchers.
func InstitutionResearcherCursor(r *InstitutionResearcherRow) Cursor {
	return Cursor{Set: true, Key: int64(r.PaperCount), ID: r.ID}
}

// rangeList is a paper list kept in a table that carries each paper's
// first-version date beside its parent, under an index on (parent, date,
// paper): a page of it in a date order is a range of that index, as many
// rows read as the page shows, whatever the list's length.
type rangeList struct {
	table               string // the table and its alias
	parent, date, paper string // its columns
	count               string // a statement reading a parent's list's length (one argument)
	// distinct is set when a paper can be on a parent's list twice in
	// the table (a researcher printed twice on one byline): the range
	// reads distinct (parent, date, paper) rows, which come in index
	// order, so that telling them apart stops with the LIMIT too.
	distinct bool
}

// rangeLists are the lists that are ranges of an index in date order:
// a category's papers (paper_categories' category index, since migration
// 0013), a paper's citations (paper_references' cited index, since 0015)
// and a researcher's papers (the authorships' researcher index, since
// 0018). A paper cites another at most once: references resolve by arXiv
// id, which is unique, and a paper's targets are its key. The first two
// lengths are kept, not counted: categories.paper_count, which the writer
// moves, and papers.archive_citation_count, which derive counts (the most
// cited synthetic paper of 750,000 has 159,881 citations, too many to
// count per request). A researcher's are counted from the index: the most
// prolific of 2.7 million synthetic papers has 1,201, and a count of the
// range is as current as the list, which researchers.paper_count is only
// once derive has run.
var rangeLists = map[PaperList]rangeList{
	CategoryPapers: {table: "paper_categories AS pc", parent: "pc.category", date: "pc.published", paper: "pc.paper_id",
		count: categoryCount},
	Citations: {table: "paper_references AS pc", parent: "pc.cited_id", date: "pc.citing_published", paper: "pc.citing_id",
		count: citationCount},
	ResearcherPapers: {table: "authorships AS pc", parent: "pc.researcher_id", date: "pc.published", paper: "pc.paper_id",
		count: researcherPaperCount, distinct: true},
}

// researcherPaperCount counts a researcher's papers (one argument), a
// paper once however often the byline prints them: the distinct rows of
// the range come in index order (COUNT(DISTINCT paper_id) sorted them in
// a temporary tree on SQLite).
const researcherPaperCount = "SELECT COUNT(*) AS n FROM (SELECT DISTINCT published, paper_id FROM authorships WHERE researcher_id = ?) AS d"

// citationCount reads a paper's count of the papers citing it, which
// derive keeps (see ResolveReferences).
const citationCount = "SELECT COALESCE((SELECT archive_citation_count FROM papers WHERE id = ?), 0) AS n"

// categoryCount reads the paper count the writer keeps for a category
// (see ReplacePaperCategories).
const categoryCount = "SELECT COALESCE((SELECT paper_count FROM categories WHERE code = ?), 0) AS n"

// keyset is the date order o of the list, if o is one.
func (l rangeList) keyset(o PaperOrder) (keyset, bool) {
	switch o {
	case Newest:
		return keyset{key: l.date, id: l.paper, keyDesc: true, idDesc: true, nullable: true, isTime: true}, true
	case Oldest:
		return keyset{key: l.date, id: l.paper, nullable: true, isTime: true}, true
	}
	return keyset{}, false
}

// inRange reports whether a page of list is a range of its index: a list
// of rangeLists in a date order, read forward, with no category filter.
func inRange(list PaperList, a PageArgs) bool {
	l, ok := rangeLists[list]
	if !ok {
		return false
	}
	_, dated := l.keyset(a.Order)
	return dated && a.Category == "" && (a.First > 0 || a.Last == 0)
}

// categoryBranches is the most parents read in one statement of
// rangePages: each takes two SELECTs of a UNION ALL, and SQLite allows
// 500.
const categoryBranches = 200

// rangeBranches is the most parents of a statement of rangePages on
// SQLite: with their counts (a CTE each) about 90 made SQLite refuse the
// statement ("VIEWs and/or subqueries nested too deep"; 80 passed). More
// parents of a category's papers or a paper's citations take a statement
// per 64, since the window would number every row of every parent (65
// papers with 200,000 citations between them); more researchers take the
// window, whose lists are short (1,201
// papers at most at 2.7 million), so that a level of a query stays one
// statement however wide (a 2,832-author paper's authors' papers).
const rangeBranches = 64

// rangePages reads a page of each parent's list as ranges of the list's
// index (see rangeLists), so that a page costs the rows it shows whatever
// the list's size: for each parent one SELECT … ORDER BY … LIMIT over the
// dated rows and one over the undated ones (which come last in both
// orders and which no index order puts there on both databases), joined
// by UNION ALL. A cursor's condition is an OR, which neither database
// bounds an index range by, so the dated branch also bounds the date
// itself (date <= the cursor's, newest first): without it a page deep in
// a long list walked the list from its start. On PostgreSQL the parents
// are a bound array, each read by a LATERAL join: one statement, one SQL
// text, for any number of parents (see bound).
// The parents are without repeats.
func rangePages[P PaperParent](ctx context.Context, idb bun.IDB, b *bound, list PaperList, parents []P, a PageArgs) (map[P]Page[*Paper], error) {
	r := newRangeRead(rangeLists[list], a)
	out := make(map[P]Page[*Paper], len(parents))
	read := func(ctx context.Context, q string, args []any) error {
		var rows []*pageRow[P]
		if err := idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil {
			return err
		}
		paperPages(out, rows, a)
		return nil
	}
	if b.pg {
		q, args := rangeLateralSQL(r, b, parents)
		if err := read(b.ctx(ctx), q, args); err != nil {
			return nil, err
		}
		return out, nil
	}
	for lo := 0; lo < len(parents); lo += rangeBranches {
		part := parents[lo:min(lo+rangeBranches, len(parents))]
		q, args := rangeUnionSQL(r, b, part)
		if err := read(b.ctx(ctx), q, args); err != nil {
			return nil, err
		}
		b.args, b.keys = nil, nil
	}
	return out, nil
}

// rangeRead is the SQL of rangePages for one list and page: the cursor's
// conditions on the list's rows, with their arguments.
type rangeRead struct {
	l                   rangeList
	a                   PageArgs
	cond, bound         string
	condArgs, boundArgs []any
	dir, distinct       string
}

func newRangeRead(l rangeList, a PageArgs) *rangeRead {
	r := &rangeRead{l: l, a: a}
	k, _ := l.keyset(a.Order)
	for _, c := range []struct {
		cur      Cursor
		backward bool
	}{{a.After, false}, {a.Before, true}} {
		if c.cur.Set {
			w, wa := k.beyond(c.cur, c.backward)
			r.cond += " AND " + w
			r.condArgs = append(r.condArgs, wa...)
			if !c.cur.Null {
				r.bound += " AND " + l.date + " " + compareOp(k.keyDesc, c.backward) + "= ?"
				r.boundArgs = append(r.boundArgs, time.Unix(0, c.cur.Key).UTC())
			}
		}
	}
	r.dir = dir(k.keyDesc, false)
	if l.distinct {
		r.distinct = "DISTINCT "
	}
	return r
}

// rangeBranch is one SELECT of a parent's page, with its arguments.
type rangeBranch struct {
	sql  string
	args []any
}

// branches are a parent's two ranges, dated first, each the
// (parent, published, paper) rows of its page for the parent that the
// SQL expression parent names, with their arguments after the
// parent's.
func (r *rangeRead) branches(parent string) [2]rangeBranch {
	l := r.l
	var out [2]rangeBranch
	for nulls, dated := range []string{l.date + " IS NOT NULL" + r.bound, l.date + " IS NULL"} {
		out[nulls].sql = fmt.Sprintf("SELECT %s%s AS parent, %s AS published, %s AS paper FROM %s WHERE %s = %s AND %s%s ORDER BY %s %s, %s %s LIMIT ?",
			r.distinct, l.parent, l.date, l.paper, l.table, l.parent, parent, dated, r.cond, l.date, r.dir, l.paper, r.dir)
		if nulls == 0 {
			out[nulls].args = append(out[nulls].args, r.boundArgs...)
		}
		out[nulls].args = append(append(out[nulls].args, r.condArgs...), r.a.size()+1)
	}
	return out
}

// order sorts the union of the branches by parent, dated rows first.
func (r *rangeRead) order() string {
	return " AS t ORDER BY t.parent, t.rn, t.published " + r.dir + ", t.id " + r.dir
}

// rangeLateralSQL is rangePages' statement on PostgreSQL: the parents a
// bound array, each read by a LATERAL join.
func rangeLateralSQL[P PaperParent](r *rangeRead, b *bound, parents []P) (string, []any) {
	arr, typ := pgArray(parents)
	param := b.add(arr)
	total := "0"
	if r.a.Counted() {
		total = "(SELECT c.n FROM (" + strings.Replace(r.l.count, "?", "u.parent", 1) + ") AS c)"
	}
	var parts []string
	var args []any
	for rn, br := range r.branches("v.parent") {
		parts = append(parts, fmt.Sprintf("SELECT v.parent, %d AS rn, v.total, %s FROM v CROSS JOIN LATERAL (%s) AS x JOIN papers AS p ON p.id = x.paper",
			rn, paperListColumns, br.sql))
		args = append(args, br.args...)
	}
	q := "WITH v AS MATERIALIZED (SELECT u.parent, " + total + " AS total FROM unnest(" + param + "::" + typ + ") AS u(parent)) " +
		"SELECT * FROM (" + strings.Join(parts, " UNION ALL ") + ")" + r.order()
	return q, args
}

// rangeUnionSQL is rangePages' statement on SQLite for at most
// rangeBranches parents: a UNION ALL of each parent's branches.
func rangeUnionSQL[P PaperParent](r *rangeRead, b *bound, part []P) (string, []any) {
	var counts, parts []string
	var args []any
	// Each parent is a parameter of its own where b binds, so that the
	// text depends on the number of parents only; else it is written
	// in, an argument wherever it stands.
	params := make([]string, len(part))
	inline := make([][]any, len(part))
	for i, parent := range part {
		if b.lite {
			params[i] = b.add(parentValue(parent))
		} else {
			params[i], inline[i] = "?", []any{parent}
		}
	}
	// A page read without a cursor counts its list too, as pageSQL's
	// do: a range count of the index, read once (a materialized CTE)
	// for both of the parent's branches.
	if r.a.Counted() {
		for i := range part {
			counts = append(counts, fmt.Sprintf("n%d AS MATERIALIZED (%s)", i, strings.Replace(r.l.count, "?", params[i], 1)))
			args = append(args, inline[i]...)
		}
	}
	for i := range part {
		total := "0"
		if r.a.Counted() {
			total = fmt.Sprintf("(SELECT n FROM n%d)", i)
		}
		for rn, br := range r.branches(params[i]) {
			parts = append(parts, fmt.Sprintf("SELECT * FROM (SELECT x.parent, %d AS rn, %s AS total, %s FROM (%s) AS x JOIN papers AS p ON p.id = x.paper) AS b%d",
				rn, total, paperListColumns, br.sql, len(parts)))
			args = append(append(args, inline[i]...), br.args...)
		}
	}
	q := "SELECT * FROM (" + strings.Join(parts, " UNION ALL ") + ")" + r.order()
	if len(counts) > 0 {
		q = "WITH " + strings.Join(counts, ", ") + " " + q
	}
	return q, args
}
