package db

import (
	"cmp"
	"context"
	"math"
	"slices"
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
}

// Candidates are a search's RelevanceCandidates most cited matches (most
// cited first, newest id first among equals), as SearchCandidates reads
// them once for a request, with what its count, year facet and relevance
// page need of each.
type Candidates struct {
	// IDs are the candidates, all the matches when More is false.
	IDs []int64
	// More reports that the search matches more papers than IDs holds.
	More bool
	// rows are the candidates in IDs' order.
	rows []candidate
	// scored tells that the rows carry their relevance score.
	scored bool
}

// candidate is one of a search's Candidates.
type candidate struct {
	ID        int64     `bun:"id"`
	Published time.Time `bun:"published,nullzero"`
	Score     float64   `bun:"score"`
}

// SearchCandidates reads the candidates of s, which has a query, in one
// statement (on SQLite after a count of the matches, and for a common
// word by a walk of its own, see walkCandidates): its RelevanceCandidates
// most cited matches, whether there are more, their dates and, when
// scored, their relevance. A common word's candidates are the costly part
// of a search (a walk down the citation order until a thousand match), so that a request asking for a relevance
// page, the count and the facets finds them once; see WithCandidates.
func SearchCandidates(ctx context.Context, idb bun.IDB, s PaperSearch, scored bool) (Candidates, error) {
	rows, err := s.walkCandidates(ctx, idb, scored)
	if err != nil {
		return Candidates{}, err
	}
	if rows == nil {
		score, from, args := s.filtered(idb)
		if !scored {
			score = "0.0"
		}
		err := idb.NewRaw("SELECT p.id, p.published, "+score+" AS score "+from+" ORDER BY p.citation_count DESC, p.id DESC LIMIT ?",
			append(args, RelevanceCandidates+1)...).Scan(ctx, &rows)
		if err != nil {
			return Candidates{}, err
		}
	}
	c := Candidates{scored: scored}
	if len(rows) > RelevanceCandidates {
		rows, c.More = rows[:RelevanceCandidates], true
	}
	c.rows, c.IDs = rows, make([]int64, len(rows))
	for i, r := range rows {
		c.IDs[i] = r.ID
	}
	return c, nil
}

// walkCost and walkMin set when SQLite finds a query's candidates by
// walking the citation order: when the query matches at least
// max(walkMin, sqrt(walkCost × words × papers)) papers (counted up to
// that bound), words being its words. The candidates statement reads
// every match from the full-text index, joins it to its paper, scores it
// and sorts: 3.0–3.9 µs a match at 750,000 synthetic papers ("distance",
// "dark", "black", "magnetic": 20,100 to 118,943 matches, 70 to 354 ms),
// 1.3 µs for "the", which matches nearly every paper (980 ms). The walk
// reads papers most cited first and probes the index for each, 11–18 µs a
// probe for a word (62–83 µs for four), and needs about 1,001 × papers /
// matches probes (72 ms for "magnetic", 619 ms for "distance"). The two
// cost the same at matches = sqrt(1,001 × 15 / 3.4 × words × papers),
// about 57,000 for a word at 750,000 papers (between "dark" and "black",
// as measured), hence walkCost; below walkMin (twice the candidates) a
// walk saves nothing.
var walkCost, walkMin int64 = 4416, 2 * (RelevanceCandidates + 1)

// walkSlack is how many times the probes its count predicts a walk may
// make (see walkCandidates).
var walkSlack int64 = 2

// walkWords is the most words a walked query has: a probe costs about
// 15 µs a word, and a prefix longer than the index's prefixes (2 and 3
// characters) merges its words' postings again for every probe (50 probes
// of "quan*" took 7.8 s at 750,000 papers), so prefixes are never walked.
const walkWords = 4

// walkCandidates reads the candidates of s on SQLite by walking papers in
// citation order when its query is common (see walkCost), of at most
// walkWords words and no prefix, and it has no other filter. It returns
// nil otherwise, or when the walk gave up, for the candidates statement
// to rank every match instead. The walk may make walkSlack times the
// probes its count predicts, but makes an eighth of them first and goes
// on (from where it stopped) only if those found an eighth of the
// candidates: a word common in the
// archive but rare among its most cited papers (new words are in new,
// uncited papers) costs an eighth of the walk before the statement.
// The scores, when scored, are bm25 times citationWeight as the candidates
// statement computes them, read in a statement of their own: bm25 counts
// the query's matches once per statement, and so once for every probe in
// the walk's (12 s for "quantum" at 750,000 papers). That statement still
// reads every match from the index, but at about 0.2 µs each: 146 ms for
// "the", 50 ms for "quantum" (240,937 matches). A candidate it does not
// return (deleted, or changed not to match, in between) is left out.
func (s PaperSearch) walkCandidates(ctx context.Context, idb bun.IDB, scored bool) ([]candidate, error) {
	if IsPostgres(idb) || s.Query.IsZero() || s.IDs != nil || len(s.Categories) > 0 || !s.From.IsZero() || !s.To.IsZero() ||
		s.ResearcherID != 0 || s.InstitutionID != 0 || s.HasDOI != nil {
		return nil, nil
	}
	words := 0
	for _, t := range s.Query.Terms {
		if t.Prefix {
			return nil, nil
		}
		words += len(t.Words)
	}
	if words > walkWords {
		return nil, nil
	}
	match := s.Query.fts5()
	var n struct {
		Papers  int64 `bun:"papers"`
		Bound   int64 `bun:"bound"`
		Matches int64 `bun:"matches"`
	}
	err := idb.NewRaw(`WITH b AS (SELECT papers, MAX(?, CAST(sqrt(? * papers) AS INTEGER)) AS bound
		  FROM (SELECT COALESCE(MAX(id), 0) AS papers FROM papers) AS n)
		SELECT papers, bound, (SELECT COUNT(*) FROM (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? LIMIT (SELECT bound FROM b)) AS m) AS matches FROM b`,
		walkMin, walkCost*int64(words), match).Scan(ctx, &n)
	if err != nil || n.Matches < n.Bound {
		return nil, err
	}
	type walked struct {
		candidate
		CitationCount int64 `bun:"citation_count"`
	}
	var rows []walked
	budget := walkSlack*(RelevanceCandidates+1)*(n.Papers/n.Bound+1) + 1
	var probed int64
	for i, probes := range []int64{budget/8 + 1, budget - budget/8 - 1} {
		// The second part goes on from where the first stopped: the
		// papers after the first's in citation order.
		var part []walked
		err = idb.NewRaw(`SELECT w.id, w.published, w.citation_count
			FROM (SELECT id, published, citation_count FROM papers WHERE arxiv_id IS NOT NULL ORDER BY citation_count DESC, id DESC LIMIT ? OFFSET ?) AS w
			WHERE EXISTS (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? AND papers_fts.rowid = w.id)
			ORDER BY w.citation_count DESC, w.id DESC LIMIT ?`, probes, probed, match, RelevanceCandidates+1-len(rows)).Scan(ctx, &part)
		rows, probed = append(rows, part...), probed+probes
		switch {
		case err != nil:
			return nil, err
		case len(rows) > RelevanceCandidates || probed >= n.Papers: // the candidates, or every match
		case i == 0 && 8*len(rows) > RelevanceCandidates:
			continue // on course: the rest of the walk
		default:
			return nil, nil
		}
		break
	}
	out := make([]candidate, len(rows))
	ids := make([]int64, len(rows))
	for i, r := range rows {
		out[i], ids[i] = r.candidate, r.ID
	}
	if !scored || len(ids) == 0 {
		return out, nil
	}
	// The index is the outer loop (CROSS JOIN) and the unary plus keeps the
	// ids from its constraints: a lookup of the index by id is the probe
	// whose bm25 recounts the matches.
	var scores []candidate
	err = idb.NewRaw(`SELECT papers_fts.rowid AS id, -bm25(papers_fts, 10.0, 1.0) * `+citationWeight+` AS score
		FROM papers_fts CROSS JOIN papers AS p WHERE papers_fts MATCH ? AND +papers_fts.rowid IN (?) AND p.id = papers_fts.rowid`,
		match, bun.List(ids)).Scan(ctx, &scores)
	if err != nil {
		return nil, err
	}
	score := make(map[int64]float64, len(scores))
	for _, r := range scores {
		score[r.ID] = r.Score
	}
	kept := out[:0]
	for _, c := range out {
		if sc, ok := score[c.ID]; ok {
			c.Score = sc
			kept = append(kept, c)
		}
	}
	return kept, nil
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
// statement (none when the page is empty).
func relevancePage(ctx context.Context, idb bun.IDB, c *Candidates, a PageArgs) (Page[*Paper], error) {
	rows := slices.Clone(c.rows)
	less := func(x, y candidate) int { // relevance order: -1 when x comes first
		if x.Score != y.Score {
			if x.Score > y.Score {
				return -1
			}
			return 1
		}
		return cmp.Compare(x.ID, y.ID)
	}
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
		return searchPage(nil, a), nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var ps []*Paper
	b := binding(idb)
	cond, args := in(b, "p.id", ids)
	if err := idb.NewRaw("SELECT "+paperListColumns+" FROM papers AS p WHERE "+cond, args...).Scan(b.ctx(ctx), &ps); err != nil {
		return Page[*Paper]{}, err
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
	return searchPage(ordered, a), nil
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
func (s PaperSearch) searchFrom(idb bun.IDB, relevance bool) (string, []any) {
	score, from, args := s.filtered(idb)
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
const citationWeight = "(1 + ln(CAST(1 + p.citation_count AS DOUBLE PRECISION)))"

// filtered is the FROM … WHERE … over "papers AS p" of the papers s
// selects, and the expression of their score: the relevance of the match,
// higher is better, 0 without a query. Relevance is the text score (bm25
// on SQLite, ts_rank on PostgreSQL; a title word counts ten times an
// abstract word on SQLite, 2.5 times on PostgreSQL, whose weights are
// fixed) times citationWeight.
func (s PaperSearch) filtered(idb bun.IDB) (score, from string, args []any) {
	score = "0.0"
	switch {
	case s.Query.IsZero():
		from = "FROM papers AS p WHERE p.arxiv_id IS NOT NULL"
	case IsPostgres(idb):
		score = "ts_rank(p.search_doc, tq)::float8 * " + citationWeight
		from = "FROM papers AS p, to_tsquery('simple', ?) AS tq WHERE p.arxiv_id IS NOT NULL AND p.search_doc @@ tq"
		args = append(args, s.Query.tsquery(""))
	default:
		// bm25 is lower for better matches.
		score = "-bm25(papers_fts, 10.0, 1.0) * " + citationWeight
		from = "FROM papers_fts JOIN papers AS p ON p.id = papers_fts.rowid WHERE papers_fts MATCH ? AND p.arxiv_id IS NOT NULL"
		args = append(args, s.Query.fts5())
	}
	switch {
	case s.IDs == nil:
	case len(s.IDs) == 0:
		from += " AND 1 = 0"
	default:
		from += " AND p.id IN (?)"
		args = append(args, bun.List(s.IDs))
	}
	if len(s.Categories) > 0 {
		from += " AND EXISTS (SELECT 1 FROM paper_categories AS pc WHERE pc.paper_id = p.id AND " + probeColumn(idb, "pc.category") + " IN (?))"
		args = append(args, bun.List(s.Categories))
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
		// index, SQLite walked the researcher's whole range for each paper
		// (a helper's review: SearchCount 18.4 s against 78 ms for a
		// researcher of 1,280 papers among 200,000).
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
	return score, from, args
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
		return relevancePage(ctx, idb, c, a)
	}
	from, args := s.searchFrom(idb, a.Order == Relevance)
	k := paperKeysets[a.Order]
	if a.Order == Relevance {
		k = relevanceKeyset
	}
	q, args := k.limitSQL("p.*", from, args, a)
	var rows []*searchRow
	if err := idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil {
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
	_, from, args := s.filtered(idb)
	var ps []*Paper
	if err := idb.NewRaw("SELECT "+paperListColumns+" "+from+" ORDER BY p.id", args...).Scan(ctx, &ps); err != nil {
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
	_, from, args := s.filtered(idb)
	var n int
	err := idb.NewRaw("SELECT COUNT(*) "+from, args...).Scan(ctx, &n)
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
