package resolvers

import "time"

// SetLookAhead switches the look-ahead on or off for the benchmarks that
// record what it saves; it returns the previous setting.
func SetLookAhead(on bool) bool {
	was := lookAheadOn
	lookAheadOn = on
	return was
}

// WithoutStep removes the look-ahead's step of field ("Type.field") until
// the test ends, making a shape the look-ahead does not know, and makes a
// loader's miss wait long, so that misses that can meet in one batch
// always do whatever the machine's load.
func WithoutStep(t interface{ Cleanup(func()) }, field string) {
	s, wait := lookAheads[field], missWait
	delete(lookAheads, field)
	missWait = 250 * time.Millisecond
	t.Cleanup(func() { lookAheads[field], missWait = s, wait })
}
