package db

// SetFTSHashSize sets the memory EndBulk's refill of the SQLite full-text
// index fills before it writes a segment, and returns what restores it.
func SetFTSHashSize(n int) (restore func()) {
	old := ftsHashSize
	ftsHashSize = n
	return func() { ftsHashSize = old }
}
