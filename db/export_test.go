package db

import "time"

// SetFTSHashSize sets the memory EndBulk's refill of the SQLite full-text
// index fills before it writes a segment, and returns what restores it.
func SetFTSHashSize(n int) (restore func()) {
	old := ftsHashSize
	ftsHashSize = n
	return func() { ftsHashSize = old }
}

// SetResolveChunk sets how many citing papers' references
// ResolveReferences resolves in one statement, and returns what restores
// it.
func SetResolveChunk(n int64) (restore func()) {
	old := resolveChunk
	resolveChunk = n
	return func() { resolveChunk = old }
}

// SetWalk sets when SQLite walks the citation order for a query's
// candidates (walkCost, walkMin) and how far (walkSlack), and returns what
// restores them.
func SetWalk(cost, min, slack int64) (restore func()) {
	oc, om, os := walkCost, walkMin, walkSlack
	walkCost, walkMin, walkSlack = cost, min, slack
	return func() { walkCost, walkMin, walkSlack = oc, om, os }
}

// CandidateDates is the first-version dates of c's candidates, in c's
// order.
func CandidateDates(c Candidates) []time.Time {
	out := make([]time.Time, len(c.rows))
	for i, r := range c.rows {
		out[i] = r.Published
	}
	return out
}
