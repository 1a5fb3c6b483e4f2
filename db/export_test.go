package db

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
)

// SetFTSHashSize sets the memory EndBulk's refill of the SQLite full-text
// index fills before it writes a segment, and returns what restores it.
func SetFTSHashSize(n int) (restore func()) {
	old := ftsHashSize
	ftsHashSize = n
	return func() { ftsHashSize = old }
}

// SetFTSRefillChunk sets how many ids of papers EndBulk's refill of the
// SQLite full-text index indexes in one transaction, and returns what
// restores it.
func SetFTSRefillChunk(n int64) (restore func()) {
	old := ftsRefillChunk
	ftsRefillChunk = n
	return func() { ftsRefillChunk = old }
}

// SetResolveChunk sets how many citing papers' references
// ResolveReferences resolves in one statement, and returns what restores
// it.
func SetResolveChunk(n int64) (restore func()) {
	old := resolveChunk
	resolveChunk = n
	return func() { resolveChunk = old }
}

// SetCitedBands sets the bands of citations SearchCandidates reads a
// query's candidates by (nil: all matches in one part, ranked whole), and
// returns what restores them.
func SetCitedBands(bands []int) (restore func()) {
	old := citedBands
	citedBands = bands
	return func() { citedBands = old }
}

// CandidatesSQL is the statement SearchCandidates sends for s, and the
// context to send it in (which carries its bound parameters).
func CandidatesSQL(ctx context.Context, idb bun.IDB, s PaperSearch, scored bool) (context.Context, string, []any) {
	q, args, b := s.candidatesSQL(idb, scored)
	return b.ctx(ctx), q, args
}

// SetRestProbe sets a condition on SQLite's rest part of the candidates
// statement (see restProbe), and returns what restores it.
func SetRestProbe(cond string) (restore func()) {
	old := restProbe
	restProbe = cond
	return func() { restProbe = old }
}

// CitedBands is the bands of citations, most cited first.
func CitedBands() []int { return citedBands }

// CandidateYears is the years of first version of c's candidates (0:
// undated), in c's order.
func CandidateYears(c Candidates) []int {
	out := make([]int, len(c.rows))
	for i, r := range c.rows {
		out[i] = r.Year
	}
	return out
}

// SearchVectors is searchVectors, the search documents InsertPapers sends
// to PostgreSQL with a paper.
var SearchVectors = searchVectors

// SearchVectorsAgree is searchVectorsAgree: whether the database builds
// the probe text's documents as SearchVectors does.
var SearchVectorsAgree = searchVectorsAgree

// SearchWords is the words of s as both indexes hold them, joined by
// spaces: what PostgreSQL's search_words returns, trimmed.
func SearchWords(s string) string { return strings.Join(searchText(s), " ") }

// MigrationStatements is the statements of a migration file (its path
// under migrations/), as split by --bun:split.
func MigrationStatements(path string) ([]string, error) {
	text, err := migrationFiles.ReadFile("migrations/" + path)
	return strings.Split(string(text), "--bun:split"), err
}

// SetGoBM25 turns scoring SQLite's candidates in Go on or off (see
// goBM25), and returns what restores it.
func SetGoBM25(on bool) (restore func()) {
	old := goBM25
	goBM25 = on
	return func() { goBM25 = old }
}

// SetBM25MinMatches sets bm25MinMatches, and returns what restores it.
func SetBM25MinMatches(n int64) (restore func()) {
	old := bm25MinMatches
	bm25MinMatches = n
	return func() { bm25MinMatches = old }
}

// CandidateScores is the scores of c's candidates, in c's order.
func CandidateScores(c Candidates) []float64 {
	out := make([]float64, len(c.rows))
	for i, r := range c.rows {
		out[i] = r.Score
	}
	return out
}

// IndexFold is search_fold, as the SQLite index is given its text.
func IndexFold(s string) string { return indexFold(s) }

// IndexTokens is the tokens the Go scorer counts in s (see indexTokens).
func IndexTokens(s string) []string {
	var buf []byte
	return indexTokens(nil, &buf, s)
}

// FTS5 is q's MATCH text for papers_fts.
func FTS5(q SearchQuery) string { return q.fts5() }
