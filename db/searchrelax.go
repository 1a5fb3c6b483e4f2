package db

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
)

// A query whose words do not all occur in any paper (a sentence
// describing an idea in other words than its paper's title) would find
// nothing, however well some papers match most of it. A relevance order
// relaxes such a query: when fewer than RelaxBelow papers match every
// term, its candidates are the papers matching its Required terms and at
// least minShould of its other words, stop words left out, ranked by how
// many of those words they match, then by a bm25-like score (the inverse
// document frequency of each word matched, a title match counting
// relaxTitleWeight times, times citationWeight). The papers matching every
// term match the most words, so they come first. Counts and facets are
// read from the same candidates, so they agree with the pages; the date
// and citation orders, exports and live filters keep the strict meaning.

// RelaxBelow is the fewest papers a query must match in full for a
// relevance order to keep it strict: fewer do not fill a first page.
const RelaxBelow = 10

// relaxTitleWeight is how many times a word matched in the title counts
// one matched in the abstract alone.
const relaxTitleWeight = 3

// stopWords are the words a relaxed query leaves out: they match most
// papers and say nothing of a paper's idea.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also an and any are as at be
		because been before being below between both but by can could did do does doing down during each
		few for from further had has have having here how i if in into is it its itself just more most my
		no nor not of off on once only or other our out over own same should so some such than that the
		their them then there these they this those through to too under until up very via was we were
		what when where which while who whom why will with would you your using use used one two new way
		paper show shown describe describing find found study studied how`) {
		m[w] = true
	}
	return m
}()

// relaxed is q relaxed: its Required terms, the other terms but stop
// words (one term a word, in query order, each once), and how many of
// those a paper must match. ok is false when relaxing changes nothing:
// one word or none left, and no stop word dropped.
func (q SearchQuery) relaxed() (required SearchQuery, optional []SearchTerm, minShould int, ok bool) {
	dropped := false
	seen := map[string]bool{}
	for _, t := range q.Terms {
		switch {
		case t.Required:
			required.Terms = append(required.Terms, t)
			continue
		case len(t.Words) > 1:
			// A word the fold split ("hep-th") is a phrase, kept whole.
		case stopWords[t.Words[0]] && !t.Prefix:
			dropped = true
			continue
		}
		key := strings.Join(t.Words, " ")
		if t.Prefix {
			key += "*"
		}
		if !seen[key] {
			seen[key] = true
			optional = append(optional, t)
		}
	}
	k := len(optional)
	minShould = min((k+1)/2, 4)
	return required, optional, minShould, k >= 2 || (k == 1 && dropped)
}

// relaxedCandidates reads the candidates of s's relaxed query in one
// statement: the RelevanceCandidates + 1 best, with their scores (see
// relaxed), best first. Each optional word's matches are read from the
// full-text index (stop words, which match most papers, are not), with
// their count, which gives the word's document frequency; the papers
// matching enough of them are then filtered and scored. The number of
// papers, which inverse document frequency divides, is read as the
// largest paper id: one index probe, an upper bound.
func (s PaperSearch) relaxedCandidates(ctx context.Context, idb bun.IDB) ([]candidate, bool, error) {
	required, optional, minShould, ok := s.Query.relaxed()
	if !ok {
		return nil, false, nil
	}
	pg := IsPostgres(idb)
	var args []any
	arms := make([]string, 0, 2*len(optional))
	for title := range 2 {
		for i, t := range optional {
			term := SearchQuery{Terms: []SearchTerm{t}}
			sel := "SELECT rowid AS id, " + strconv.Itoa(i) + " AS t, " + strconv.Itoa(title) + " AS title FROM papers_fts WHERE papers_fts MATCH ?"
			arg := term.fts5()
			switch {
			case pg:
				doc := [...]string{"search_doc", "title_doc"}[title]
				sel = "SELECT p.id, " + strconv.Itoa(i) + " AS t, " + strconv.Itoa(title) + " AS title FROM papers AS p WHERE p." + doc + " @@ to_tsquery('simple', ?)"
				arg = term.tsquery("")
			case title == 1:
				arg = "{title} : (" + arg + ")"
			}
			arms = append(arms, sel)
			args = append(args, arg)
		}
	}
	// u holds a row for each word a paper matches, and another when it
	// matches in the title (a title match is a match); w one row for each
	// word a paper matches, with the word's document frequency. sc is the
	// score of a match before its count of words: above 0, so that hits +
	// sc / (1 + sc) orders by words matched, then by sc.
	q := "WITH u AS (" + strings.Join(arms, " UNION ALL ") + "),\n" +
		"w AS (SELECT id, t, title, COUNT(*) OVER (PARTITION BY t) AS df FROM (SELECT id, t, MAX(title) AS title FROM u GROUP BY id, t) AS g),\n" +
		"n AS (SELECT CAST(COALESCE(MAX(id), 0) AS DOUBLE PRECISION) AS n FROM papers),\n" +
		"m AS (SELECT w.id, COUNT(*) AS hits, SUM(ln((n.n - w.df + 0.5) / (w.df + 0.5) + 1) * CASE WHEN w.title = 1 THEN " +
		strconv.Itoa(relaxTitleWeight) + " ELSE 1 END) AS s FROM w CROSS JOIN n GROUP BY w.id HAVING COUNT(*) >= ?)\n"
	args = append(args, minShould)
	b := binding(idb)
	cond, cargs := s.conditions(b, idb)
	if !required.IsZero() {
		if pg {
			cond += " AND p.search_doc @@ to_tsquery('simple', ?)"
			cargs = append(cargs, required.tsquery(""))
		} else {
			cond += " AND p.id IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?)"
			cargs = append(cargs, required.fts5())
		}
	}
	q += "SELECT id, year, hits + sc / (1 + sc) AS score FROM (SELECT p.id, " + yearSQL(pg, "p.published") + " AS year, m.hits, m.s * " + citationWeight +
		" AS sc FROM m JOIN papers AS p ON p.id = m.id WHERE 1 = 1" + cond + ") AS r ORDER BY score DESC, id LIMIT " + strconv.Itoa(RelevanceCandidates+1)
	var rows []candidate
	if err := idb.NewRaw(q, append(args, cargs...)...).Scan(b.ctx(ctx), &rows); err != nil {
		return nil, false, err
	}
	return rows, true, nil
}

// KeywordRanked returns the ids of the n papers (at most
// RelevanceCandidates) that s ranks first in a relevance order, best
// first, its filters applied: the order searchPapers gives them, a query
// relaxed when fewer than RelaxBelow papers match it in full. It is one
// statement, or two when relaxed; a search without a query ranks nothing.
func KeywordRanked(ctx context.Context, idb bun.IDB, s PaperSearch, n int) ([]int64, error) {
	if s.Query.IsZero() || n <= 0 {
		return nil, nil
	}
	// Only the n first need their scores.
	s.RankAll, s.scoreFirst = false, n
	c, err := SearchCandidates(ctx, idb, s, true)
	if err != nil {
		return nil, err
	}
	rows := slices.Clone(c.rows)
	slices.SortFunc(rows, relevanceLess)
	ids := make([]int64, min(n, len(rows)))
	for i := range ids {
		ids[i] = rows[i].ID
	}
	return ids, nil
}
