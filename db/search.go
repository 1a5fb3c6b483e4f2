package db

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// PaperSearch selects papers of the archive (those with an arXiv id):
// matching Query when it is not zero, and passing every filter that is
// set.
type PaperSearch struct {
	Query SearchQuery
	// Categories keeps papers filed under any of them.
	Categories []string
	// From and To bound the first version's date: From <= published < To.
	From, To time.Time
	// ResearcherID and InstitutionID keep the papers of a researcher, or
	// with an author affiliation matched to an institution. A negative id
	// names nobody: a filter by an unknown profile matches nothing.
	ResearcherID, InstitutionID int64
	// HasDOI keeps papers with (true) or without (false) a DOI.
	HasDOI *bool
	// IDs, when not nil, keeps only these papers (see MatchPapers).
	IDs []int64
	// RankAll ranks every match in a relevance order, not only the
	// RelevanceCandidates: an export streams a search whole.
	RankAll bool

	// cand, when not nil, is the search's candidates as read by
	// SearchCandidates: a relevance page, the count and the facets read
	// them from it instead of finding them again.
	cand *Candidates
	// scoreFirst, when above 0, is how many of the candidates' best in
	// relevance order need their score (see ForPage).
	scoreFirst int
}

// ForPage is s, searched for page a of its relevance order: when a is a
// first page, read forward, only the candidates that may be on it (and
// the one after it, which tells whether there is a next page) need their
// scores, and SearchCandidates may leave the others unscored (see
// Candidates.Unscored): scoring a common word's candidates whole is most
// of the work of its first page. Other pages rank every candidate.
func (s PaperSearch) ForPage(a PageArgs) PaperSearch {
	s.scoreFirst = 0
	if !a.After.Set && !a.Before.Set && !a.backward() {
		s.scoreFirst = a.size() + 1
	}
	return s
}

// unscored is the score of a candidate SearchCandidates left unscored:
// below any score, so that it sorts after every scored candidate.
var unscored = math.Inf(-1)

// Candidates are a search's RelevanceCandidates most cited matches (most
// cited first, newest id first among equals), as SearchCandidates reads
// them once for a request, with what its count, year facet and relevance
// page need of each.
type Candidates struct {
	// IDs are the candidates, all the matches when More is false.
	IDs []int64
	// More reports that the search matches more papers than IDs holds.
	More bool
	// Relaxed reports that the candidates are those of the relaxed query
	// (see RelaxBelow), best first: too few papers matched every term.
	Relaxed bool
	// rows are the candidates in IDs' order.
	rows []candidate
	// scored tells that the rows carry their relevance score.
	scored bool
	// first, when rows are left unscored, is how many of the best rows
	// of the relevance order are sure to be those of rows scored whole:
	// the s.scoreFirst they were read for.
	first int
}

// Unscored reports whether c, read for a search s.ForPage gave a first
// page, left candidates unscored: those that cannot be among the page's
// candidates (nor the one after it) whatever their score. They rank
// after every scored candidate, in id order; every scored candidate has
// its score, so that the first page, and the order of the candidates up
// to the one after it, are those of c scored whole.
func (c Candidates) Unscored() bool {
	for _, r := range c.rows {
		if r.Score == unscored {
			return true
		}
	}
	return false
}

// candidate is one of a search's Candidates. Its year of first
// publication (0 when undated) is what the year facet counts; it is read
// as the year the database computes (yearSQL), not as a date: a driver
// parses a date of a thousand candidates at a cost that shows beside the
// rest of a search.
type candidate struct {
	ID    int64   `bun:"id"`
	Year  int     `bun:"year"`
	Score float64 `bun:"score"`
}

// SearchCandidates reads the candidates of s, which has a query, in one
// statement (two when scored and relaxed, see RelaxBelow): its RelevanceCandidates most cited matches, whether there are
// more, their dates and, when scored, their relevance. It reads them band
// by band of citations (see citedBands), most cited first, and stops at
// the band that completes them: a common word's candidates come from the
// few papers of the top bands, not from ranking all of its matches. A
// request asking for a relevance page, the count and the facets finds them
// once; see WithCandidates.
func SearchCandidates(ctx context.Context, idb bun.IDB, s PaperSearch, scored bool) (Candidates, error) {
	rows, err := s.readCandidates(ctx, idb, scored)
	if err != nil {
		return Candidates{}, err
	}
	c := Candidates{scored: scored}
	if scored && len(rows) < RelaxBelow {
		relaxed, ok, err := s.relaxedCandidates(ctx, idb)
		if err != nil {
			return Candidates{}, err
		}
		if ok {
			rows, c.Relaxed = relaxed, true
		}
	}
	if len(rows) > RelevanceCandidates {
		rows, c.More = rows[:RelevanceCandidates], true
	}
	if scored && s.scoreFirst > 0 {
		c.first = s.scoreFirst
	}
	c.rows, c.IDs = rows, make([]int64, len(rows))
	for i, r := range rows {
		c.IDs[i] = r.ID
	}
	return c, nil
}

// readCandidates reads the candidates of s in the statement of
// candidatesSQL, or, when scored on SQLite, with their scores computed
// here (bm25Candidates) where that reproduces FTS5's bm25.
func (s PaperSearch) readCandidates(ctx context.Context, idb bun.IDB, scored bool) ([]candidate, error) {
	if scored && goBM25 && !IsPostgres(idb) {
		if ps, ok := s.Query.bm25Phrases(); ok {
			rows, ok, err := s.bm25Candidates(ctx, idb, ps)
			if err != nil || ok {
				return rows, err
			}
		}
	}
	q, args, b := s.candidatesSQL(idb, scored)
	var rows []candidate
	err := idb.NewRaw(q, args...).Scan(b.ctx(ctx), &rows)
	return rows, err
}

// citedBands are the lower bounds of the bands of citations, most cited
// first: band i holds the papers with citedBands[i] <= citation_count <
// citedBands[i-1] (the first has no upper bound), and the papers cited
// less than the last bound, never, are the rest. Migrations 0019 and 0031
// index each band's papers on its own: on PostgreSQL a partial GIN index
// per band (papers_search_cited_N), on SQLite the full-text table
// papers_fts_cited, whose band column holds the token cN.
// TestCitedBandsMatchMigration checks that the two agree.
//
// A query's candidates are read from the top band down, each band's most
// cited matches up to the number still wanting, so a band is read only
// when the bands above it hold fewer than RelevanceCandidates + 1 matches,
// and the statement reads, of a word matching m papers of which a
// fraction f(n) is cited n times or more, about m × f(citedBands[i]) rows
// for the band i that completes the candidates, which is at most the ratio
// of f across a band (the bands double, and citations fall off as a power
// of their count) times RelevanceCandidates. Reading a word's matches in
// citation order needs no index in that order, which a full-text index
// cannot have; without the bands a word of 20,000 matches would be read
// whole and sorted, and a word more common than that would walk the
// papers in citation order and probe each.
//
// The rest, the papers never cited, are all equal in citations, so that
// their order is the newest first: on SQLite the full-text index's own
// order, which the rest's statement walks down until it has the number
// still wanting, rather than looking up every match's citations and
// sorting them. Were the rest the papers cited once or never, a rare
// word's thousandth candidate in a mid-sized archive would cost a look-up
// of every one of its matches.
var citedBands = []int{128, 64, 32, 16, 8, 4, 2, 1}

// restProbe is a condition a test adds to SQLite's part of the
// candidates statement that reads the rest (the papers below the bands),
// to count the rows it reads.
var restProbe string

// citedBandToken is band i's token in papers_fts_cited's band column.
func citedBandToken(i int) string { return "c" + strconv.Itoa(citedBands[i]) }

// citedBandCase is the SQL expression of the band token of row's paper
// (NULL below the bands), as migration 0019's triggers have it.
func citedBandCase(row string) string {
	var b strings.Builder
	b.WriteString("CASE")
	for i, n := range citedBands {
		fmt.Fprintf(&b, " WHEN %s.citation_count >= %d THEN '%s'", row, n, citedBandToken(i))
	}
	b.WriteString(" END")
	return b.String()
}

// candidatesSQL is the statement that reads the candidates of s: one CTE
// per band of citations and one for the rest, each reading its band's
// most cited matches up to the number the bands above it left wanting
// (LIMIT 0, which both databases answer without reading the band, once
// they are found), then the candidates' scores when scored: on
// PostgreSQL ts_rank of each candidate; on SQLite bm25, which counts the
// query's matches in the whole full-text index (a band's own table would
// score against the band's counts), so that statement reads every match
// of the query from papers_fts as its outer loop, cheaply, and keeps the
// candidates.
func (s PaperSearch) candidatesSQL(idb bun.IDB, scored bool) (string, []any, *bound) {
	c, bands := s.candidatesQuery(idb)
	q := c.candidates(bands)
	q += c.scores(scored)
	return q + " ORDER BY c.citation_count DESC, c.id DESC", c.args, c.b
}

// candidatesQuery starts the statement that reads the candidates of s:
// the query with its filters and bindings, and the bands of citations it
// reads them by.
func (s PaperSearch) candidatesQuery(idb bun.IDB) (*candidatesQuery, []int) {
	c := &candidatesQuery{s: s, pg: IsPostgres(idb), want: RelevanceCandidates + 1, b: binding(idb)}
	c.cond, c.condArgs = s.conditions(c.b, idb)
	bands := citedBands
	if s.ResearcherID != 0 || s.InstitutionID != 0 || s.IDs != nil {
		// A researcher's or an institution's papers are few beside a
		// word's: each band would read its share of the word's matches
		// and test them all, and the rest read the word's matches again,
		// where ranking the few papers whole reads each once. They are
		// ranked whole, in one part.
		bands = nil
	}
	// On PostgreSQL the query's words are a bound parameter where the
	// pool binds (see bound): the statement, which the bands make long to
	// plan, is then the same text for every
	// query without filters, prepared once per connection and planned
	// once PostgreSQL settles on a generic plan.
	c.tsquery = "to_tsquery('simple', ?)"
	if c.b.pg {
		c.tsquery = "to_tsquery('simple', " + c.b.add(s.Query.tsquery("")) + "::text)"
		// A filtered query is planned for its words, every time: a
		// generic plan cannot tell a rare word from a common one, and for
		// a category it hashes the whole category where a plan for the
		// words probes their few matches (the category's size, not the
		// matches', sets the generic plan's cost). Without filters the
		// generic plan is as good.
		c.b.custom = c.b.custom || len(s.Categories) > 0 || !s.From.IsZero() || !s.To.IsZero()
	}
	return c, bands
}

// candidatesQuery is candidatesSQL's statement as it is written, with its
// arguments in the order their placeholders stand.
type candidatesQuery struct {
	s        PaperSearch
	pg       bool
	b        *bound
	want     int
	tsquery  string
	cond     string
	condArgs []any
	args     []any
}

// candidates is the statement's CTE c: the most cited matches, read band
// by band.
func (c *candidatesQuery) candidates(bands []int) string {
	var parts, names []string
	for i := 0; i <= len(bands); i++ {
		body := c.bandSelect(bands, i)
		if !c.pg {
			// SQLite runs the arms of a UNION ALL in order and stops at
			// its LIMIT: the bands past the one that completes the
			// candidates are never read.
			parts = append(parts, "SELECT * FROM ("+body+strconv.Itoa(c.want)+")")
			continue
		}
		// PostgreSQL may run the arms of a UNION ALL in parallel, so each
		// band is a CTE whose LIMIT is what the bands above it left
		// wanting (SQLite refuses such a chain of CTEs past a few
		// levels).
		limit := strconv.Itoa(c.want)
		if i > 0 {
			taken := make([]string, len(names))
			for j, n := range names {
				taken[j] = "(SELECT COUNT(*) FROM " + n + ")"
			}
			limit = fmt.Sprintf("GREATEST(0, %d - %s)", c.want, strings.Join(taken, " - "))
		}
		name := "b" + strconv.Itoa(i)
		parts = append(parts, name+" AS MATERIALIZED ("+body+limit+")")
		names = append(names, name)
	}
	if !c.pg {
		return "WITH c AS MATERIALIZED (" + strings.Join(parts, "\nUNION ALL ") + "\nLIMIT " + strconv.Itoa(c.want) + ")\n"
	}
	union := make([]string, len(names))
	for i, n := range names {
		union[i] = "SELECT id, published, citation_count FROM " + n
	}
	return "WITH " + strings.Join(parts, ",\n") + ",\nc AS MATERIALIZED (SELECT * FROM (" + strings.Join(union, " UNION ALL ") +
		") AS u ORDER BY citation_count DESC, id DESC LIMIT " + strconv.Itoa(c.want) + ")\n"
}

// bandSelect is the SELECT of band i's most cited matches (of the rest
// when i is len(bands)), up to a LIMIT the caller writes after it. "+ 0"
// keeps PostgreSQL off a walk of papers_citation_count through the band,
// which reads the band whole for a rare word: the band's matches are
// read from its index and sorted.
func (c *candidatesQuery) bandSelect(bands []int, i int) string {
	var from, band string
	switch {
	case i < len(bands):
		band = fmt.Sprintf("p.citation_count >= %d", bands[i])
		if i > 0 {
			band += fmt.Sprintf(" AND p.citation_count < %d", bands[i-1])
		}
	case len(bands) > 0:
		band = fmt.Sprintf("p.citation_count < %d", bands[len(bands)-1])
	default:
		band = "1 = 1"
	}
	switch {
	case c.pg:
		from = "FROM papers AS p WHERE p.search_doc @@ " + c.tsquery + " AND " + band
		if !c.b.pg {
			c.args = append(c.args, c.s.Query.tsquery(""))
		}
	case i < len(bands):
		from = "FROM papers_fts_cited CROSS JOIN papers AS p ON p.id = papers_fts_cited.rowid WHERE papers_fts_cited MATCH ?"
		c.args = append(c.args, fmt.Sprintf(`{band} : "%s" AND {title abstract} : (%s)`, citedBandToken(i), c.s.Query.fts5()))
	default:
		from = "FROM papers_fts CROSS JOIN papers AS p ON p.id = papers_fts.rowid WHERE papers_fts MATCH ? AND " + band + restProbe
		c.args = append(c.args, c.s.Query.fts5())
	}
	c.args = append(c.args, c.condArgs...)
	order := " ORDER BY p.citation_count + 0 DESC, p.id DESC LIMIT "
	if !c.pg && i == len(bands) && len(bands) > 0 {
		// The rest, all uncited: newest first is the index's order, which
		// FTS5 gives as it walks (no sort), so that the LIMIT stops it.
		order = " ORDER BY papers_fts.rowid DESC LIMIT "
	}
	return "SELECT p.id, p.published, p.citation_count " + from + c.cond + order
}

// scores is the statement's SELECT of the candidates, with their scores
// when scored.
func (c *candidatesQuery) scores(scored bool) string {
	switch {
	case !scored:
		return "SELECT c.id, " + yearSQL(c.pg, "c.published") + " AS year, 0.0 AS score FROM c"
	case c.pg:
		if !c.b.pg {
			c.args = append(c.args, c.s.Query.tsquery(""))
		}
		return "SELECT c.id, " + yearSQL(true, "c.published") + " AS year, ts_rank(p.search_doc, " + c.tsquery + ")::float8 * " + citationWeight +
			" AS score FROM c JOIN papers AS p ON p.id = c.id"
	default:
		// The index is the outer loop (CROSS JOIN) and the unary plus
		// keeps the ids from its constraints: a lookup of the index by id
		// is a probe whose bm25 counts the matches again (862 against 25
		// ms for a thousand ids at 750,000 papers).
		c.args = append(c.args, c.s.Query.fts5())
		return "SELECT c.id, " + yearSQL(false, "c.published") + " AS year, -bm25(papers_fts, 10.0, 1.0) * " + citationWeightOf("c.citation_count") +
			" AS score FROM papers_fts CROSS JOIN c WHERE papers_fts MATCH ? AND +papers_fts.rowid IN (SELECT id FROM c) AND c.id = papers_fts.rowid"
	}
}

// candidatesOf is the candidates of s, which has a query: those
// WithCandidates gave it (when scored, if scores are wanted), or else
// read now.
func (s PaperSearch) candidatesOf(ctx context.Context, idb bun.IDB, scored bool) (*Candidates, error) {
	if s.cand != nil && (s.cand.scored || !scored) {
		return s.cand, nil
	}
	c, err := SearchCandidates(ctx, idb, s, scored)
	return &c, err
}

// WithCandidates is s reading its candidates from c, which
// SearchCandidates read for s: SearchCount then sends no statement,
// SearchFacets counts categories over c's ids and years from c, and
// SearchPapers in relevance order (when c is scored) orders c itself and
// reads only the page's papers.
func (s PaperSearch) WithCandidates(c Candidates) PaperSearch {
	s.cand = &c
	return s
}

// relevancePage reads page a, in relevance order, of the scored
// candidates c: c sorted as relevanceKeyset orders (score first, then id
// ascending), cut at a's cursors, then the page's papers read by id in one
// statement (none when the page is empty). ok is false, and nothing read,
// when c left candidates unscored and a is not a first page within those
// c is sure of: c was read for another page (see ForPage).
func relevancePage(ctx context.Context, idb bun.IDB, c *Candidates, a PageArgs) (pg Page[*Paper], ok bool, err error) {
	if c.Unscored() && (a.After.Set || a.Before.Set || a.backward() || a.size()+1 > c.first) {
		return Page[*Paper]{}, false, nil
	}
	rows := slices.Clone(c.rows)
	less := relevanceLess
	slices.SortFunc(rows, less)
	if a.After.Set {
		at := candidate{ID: a.After.ID, Score: keyScore(a.After.Key)}
		rows = slices.DeleteFunc(rows, func(r candidate) bool { return less(r, at) <= 0 })
	}
	if a.Before.Set {
		at := candidate{ID: a.Before.ID, Score: keyScore(a.Before.Key)}
		rows = slices.DeleteFunc(rows, func(r candidate) bool { return less(r, at) >= 0 })
	}
	if a.backward() { // read backward, as limitSQL does
		slices.Reverse(rows)
	}
	rows = rows[:min(len(rows), a.size()+1)]
	if len(rows) == 0 {
		return searchPage(nil, a), true, nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var ps []*Paper
	b := binding(idb)
	cond, args := in(b, "p.id", ids)
	if err := idb.NewRaw("SELECT "+paperListColumns+" FROM papers AS p WHERE "+cond, args...).Scan(b.ctx(ctx), &ps); err != nil {
		return Page[*Paper]{}, false, err
	}
	byID := make(map[int64]*Paper, len(ps))
	for _, p := range ps {
		byID[p.ID] = p
	}
	ordered := make([]*searchRow, 0, len(rows))
	for _, r := range rows {
		if p := byID[r.ID]; p != nil { // a paper deleted since: left out
			ordered = append(ordered, &searchRow{Score: r.Score, Paper: *p})
		}
	}
	return searchPage(ordered, a), true, nil
}

// relevanceLess is the relevance order of candidates: -1 when x comes
// first (higher score, then lower id).
func relevanceLess(x, y candidate) int {
	if x.Score != y.Score {
		if x.Score > y.Score {
			return -1
		}
		return 1
	}
	return cmp.Compare(x.ID, y.ID)
}

// relevanceKeyset orders by the score searchFrom computes, best first.
var relevanceKeyset = keyset{key: "p.score", id: "p.id", keyDesc: true, isScore: true}

// RelevanceCandidates bounds the work of a relevance order and of a
// search's facets: they read a query's RelevanceCandidates most cited
// matches (most cited first, newest id first among equals), all of them
// when there are fewer. A common word ("the", 26,000 demo papers) then
// costs a walk down the citation order instead of ranking and counting
// every match; a query of distinctive words, which matches fewer, is
// ranked and counted whole.
const RelevanceCandidates = 1000

// searchFrom is the FROM … WHERE … of the papers s selects, as a table
// "p" of a list page's columns, a parent column (always 0, so that pages
// treat a search as the list of one parent) and the score, which is
// computed for a relevance order only. A relevance order over a query's
// candidates is SearchPapers' own (relevancePage); this ranks every match
// (RankAll).
func (s PaperSearch) searchFrom(b *bound, idb bun.IDB, relevance bool) (string, []any) {
	score, from, args := s.filtered(b, idb)
	if !relevance {
		score = "0.0"
	}
	return "FROM (SELECT 0 AS parent, " + paperListColumns + ", " + score + " AS score " + from + ") AS p WHERE 1 = 1", args
}

// citationWeight is the factor by which relevance weighs a match by the
// paper's citations: 1 for an uncited paper, 1 + ln(1 + citations) above
// (about 7 at 400 citations), so that among papers matching alike the
// influential come first, while a paper matching only in its abstract
// needs far more citations than one matching in its title to pass it.
var citationWeight = citationWeightOf("p.citation_count")

// citationWeightOf is citationWeight of the citation count in column col.
func citationWeightOf(col string) string {
	return "(1 + ln(CAST(1 + " + col + " AS DOUBLE PRECISION)))"
}

// filtered is the FROM … WHERE … over "papers AS p" of the papers s
// selects, and the expression of their score: the relevance of the match,
// higher is better, 0 without a query. Relevance is the text score (bm25
// on SQLite, ts_rank on PostgreSQL; a title word counts ten times an
// abstract word on SQLite, 2.5 times on PostgreSQL, whose weights are
// fixed) times citationWeight. Its lists of keys are bound in b.
func (s PaperSearch) filtered(b *bound, idb bun.IDB) (score, from string, args []any) {
	score = "0.0"
	switch {
	case s.Query.IsZero():
		from = "FROM papers AS p WHERE 1 = 1"
	case IsPostgres(idb):
		score = "ts_rank(p.search_doc, tq)::float8 * " + citationWeight
		from = "FROM papers AS p, to_tsquery('simple', ?) AS tq WHERE p.search_doc @@ tq"
		args = append(args, s.Query.tsquery(""))
	default:
		// bm25 is lower for better matches.
		score = "-bm25(papers_fts, 10.0, 1.0) * " + citationWeight
		from = "FROM papers_fts JOIN papers AS p ON p.id = papers_fts.rowid WHERE papers_fts MATCH ?"
		args = append(args, s.Query.fts5())
	}
	c, cargs := s.conditions(b, idb)
	return score, from + c, append(args, cargs...)
}

// conditions is the filters of s other than its query, as conditions on
// papers AS p, each after an AND, with their arguments; its lists of
// keys are bound in b.
func (s PaperSearch) conditions(b *bound, idb bun.IDB) (from string, args []any) {
	from = " AND p.arxiv_id IS NOT NULL"
	switch {
	case s.IDs == nil:
	case len(s.IDs) == 0:
		from += " AND 1 = 0"
	default:
		cond, a := in(b, "p.id", s.IDs)
		from += " AND " + cond
		args = append(args, a...)
	}
	if len(s.Categories) > 0 {
		cond, a := in(b, probeColumn(idb, "pc.category"), s.Categories)
		from += " AND EXISTS (SELECT 1 FROM paper_categories AS pc WHERE pc.paper_id = p.id AND " + cond + ")"
		args = append(args, a...)
	}
	if !s.From.IsZero() {
		from += " AND p.published >= ?"
		args = append(args, s.From.UTC())
	}
	if !s.To.IsZero() {
		from += " AND p.published < ?"
		args = append(args, s.To.UTC())
	}
	if s.ResearcherID != 0 {
		// By the byline's primary key (see probeColumn): by the researcher
		// index, SQLite walks the researcher's whole range for each paper,
		// a cost of papers times the researcher's range.
		from += " AND EXISTS (SELECT 1 FROM authorships AS a WHERE a.paper_id = p.id AND " + probeColumn(idb, "a.researcher_id") + " = ?)"
		args = append(args, s.ResearcherID)
	}
	if s.InstitutionID != 0 {
		from += " AND EXISTS (SELECT 1 FROM affiliations AS af WHERE af.paper_id = p.id AND af.institution_id = ?)"
		args = append(args, s.InstitutionID)
	}
	switch {
	case s.HasDOI == nil:
	case *s.HasDOI:
		from += " AND p.doi IS NOT NULL"
	default:
		from += " AND p.doi IS NULL"
	}
	return from, args
}

type searchRow struct {
	Parent int64   `bun:"parent"`
	RN     int64   `bun:"rn"`
	Score  float64 `bun:"score"`
	Paper
}

// SearchPapers reads one page of the papers s selects, in a.Order. The
// papers are Partial and carry their Score. A relevance order over a
// query ranks its candidates (read now unless WithCandidates gave them
// with scores); with RankAll it ranks every match.
func SearchPapers(ctx context.Context, idb bun.IDB, s PaperSearch, a PageArgs) (Page[*Paper], error) {
	if a.Order == Relevance && !s.Query.IsZero() && !s.RankAll {
		c, err := s.candidatesOf(ctx, idb, true)
		if err != nil {
			return Page[*Paper]{}, err
		}
		pg, ok, err := relevancePage(ctx, idb, c, a)
		if ok || err != nil {
			return pg, err
		}
		// Candidates scored for another page: scored whole for this one.
		s.cand, s.scoreFirst = nil, 0
		if c, err = s.candidatesOf(ctx, idb, true); err != nil {
			return Page[*Paper]{}, err
		}
		pg, _, err = relevancePage(ctx, idb, c, a)
		return pg, err
	}
	b := binding(idb)
	from, args := s.searchFrom(b, idb, a.Order == Relevance)
	k := paperKeysets[a.Order]
	if a.Order == Relevance {
		k = relevanceKeyset
	}
	q, args := k.limitSQL("p.*", from, args, a)
	var rows []*searchRow
	if err := idb.NewRaw(q, args...).Scan(b.ctx(ctx), &rows); err != nil {
		return Page[*Paper]{}, err
	}
	return searchPage(rows, a), nil
}

// searchPage is the page of a search read as rows (a's page and one more,
// in the order read), its papers Partial and carrying their Score.
func searchPage(rows []*searchRow, a PageArgs) Page[*Paper] {
	pg := split(rows, func(r *searchRow) int64 { return r.Parent }, nil, a)[0]
	out := Page[*Paper]{Items: make([]*Paper, len(pg.Items)), HasNext: pg.HasNext, HasPrev: pg.HasPrev}
	for i, r := range pg.Items {
		r.Paper.Partial, r.Paper.Score = true, r.Score
		out.Items[i] = &r.Paper
	}
	return out
}

// MatchPapers reads the papers among s.IDs that s selects, in id order,
// in one statement: a live subscription's filter applied to the papers
// one commit wrote. The papers are Partial.
func MatchPapers(ctx context.Context, idb bun.IDB, s PaperSearch) ([]*Paper, error) {
	if len(s.IDs) == 0 {
		return nil, nil
	}
	b := binding(idb)
	_, from, args := s.filtered(b, idb)
	var ps []*Paper
	if err := idb.NewRaw("SELECT "+paperListColumns+" "+from+" ORDER BY p.id", args...).Scan(b.ctx(ctx), &ps); err != nil {
		return nil, err
	}
	return partial(ps), nil
}

// SearchCountCap is the most matches SearchCount counts: a query's
// RelevanceCandidates, the papers its facets count, so that the years
// facet of a capped search adds up to its count.
const SearchCountCap = RelevanceCandidates

// SearchCount counts the papers s selects, up to SearchCountCap when s
// has a query: its candidates (those WithCandidates gave, or read now),
// so that a common word ("the", "a") costs no count of most of the
// archive. exact is false when s selects more than the cap; n is then the
// cap, a lower bound. Filters alone are counted exactly.
func SearchCount(ctx context.Context, idb bun.IDB, s PaperSearch) (n int, exact bool, err error) {
	if s.Query.IsZero() {
		n, err = SearchTotal(ctx, idb, s)
		return n, true, err
	}
	c, err := s.candidatesOf(ctx, idb, false)
	if err != nil {
		return 0, false, err
	}
	return len(c.IDs), !c.More, nil
}

// SearchTotal counts the papers s selects, every one of them.
func SearchTotal(ctx context.Context, idb bun.IDB, s PaperSearch) (int, error) {
	b := binding(idb)
	_, from, args := s.filtered(b, idb)
	var n int
	err := idb.NewRaw("SELECT COUNT(*) "+from, args...).Scan(b.ctx(ctx), &n)
	return n, err
}

// scoreKey holds a score in a Cursor's Key: its IEEE 754 bits, which
// give the score back exactly.
func scoreKey(score float64) int64 { return int64(math.Float64bits(score)) }

func keyScore(key int64) float64 { return math.Float64frombits(uint64(key)) }

// suggestSortMax is the most title matches SuggestPapers sorts on SQLite.
// Past it, walking the papers in citation order finds the most cited
// matches sooner than reading every match; SQLite's planner cannot tell
// the two cases apart.
const suggestSortMax = 1000

// suggestWalk is how many of the most cited papers SuggestPapers reads on
// PostgreSQL for a prefix before it reads the prefix's matches from the
// title index instead.
const suggestWalk = 1000

// SuggestPapers reads the n most cited papers (newest id first among
// equals) whose title matches q, for a search box's completions. Titles
// alone are matched, and the order needs no score, so that a short prefix
// matching much of the archive costs no ranking of every abstract. The
// papers are Partial.
//
// Neither database's planner can tell a prefix most titles have (best
// read by walking papers in citation order until n match) from one few
// or none have (best read from the full-text index and sorted: the walk
// reads the whole archive for those), so SuggestPapers finds out first,
// in a statement of bounded cost. On SQLite it counts the matches, up to
// suggestSortMax. On PostgreSQL it walks the suggestWalk most cited
// papers; when fewer than n of them match, the matches are read from the
// title index (papers.title_doc, migration 0015) and sorted. One
// statement, or two.
func SuggestPapers(ctx context.Context, idb bun.IDB, q SearchQuery, n int) ([]*Paper, error) {
	var out []*Paper
	const order = " ORDER BY p.citation_count DESC, p.id DESC LIMIT ?"
	if IsPostgres(idb) {
		match := "p.title_doc @@ to_tsquery('simple', ?)"
		arg := q.tsquery("")
		err := idb.NewRaw("SELECT "+paperListColumns+" FROM (SELECT "+paperListColumns+", p.title_doc FROM papers AS p WHERE p.arxiv_id IS NOT NULL"+
			" ORDER BY p.citation_count DESC, p.id DESC LIMIT ?) AS p WHERE "+match+order, suggestWalk, arg, n).Scan(ctx, &out)
		if err != nil || len(out) == n {
			return partial(out), err
		}
		// Few titles match: "+ 0" keeps the planner off the walk along
		// papers_citation_count, so that it reads the matches from the
		// title index.
		out = nil
		err = idb.NewRaw("SELECT "+paperListColumns+" FROM papers AS p WHERE "+match+
			" AND p.arxiv_id IS NOT NULL ORDER BY p.citation_count + 0 DESC, p.id DESC LIMIT ?", arg, n).Scan(ctx, &out)
		return partial(out), err
	}
	match := "p.id IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?)"
	arg := "{title} : (" + q.fts5() + ")"
	var matches int
	err := idb.NewRaw("SELECT COUNT(*) FROM (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? LIMIT ?) AS m", arg, suggestSortMax+1).Scan(ctx, &matches)
	if err != nil || matches == 0 {
		return nil, err
	}
	if matches > suggestSortMax {
		// The unary plus keeps SQLite from looking the matches up by
		// id, so that it walks papers_citation_count instead.
		match = "+" + match
	}
	err = idb.NewRaw("SELECT "+paperListColumns+" FROM papers AS p WHERE "+match+
		" AND p.arxiv_id IS NOT NULL"+order, arg, n).Scan(ctx, &out)
	return partial(out), err
}

// partial marks papers read with paperListColumns as Partial.
func partial(ps []*Paper) []*Paper {
	for _, p := range ps {
		p.Partial = true
	}
	return ps
}
