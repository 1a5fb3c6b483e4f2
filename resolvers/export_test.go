package resolvers

// SetLookAhead switches the look-ahead on or off for the benchmarks that
// record what it saves; it returns the previous setting.
func SetLookAhead(on bool) bool {
	was := lookAheadOn
	lookAheadOn = on
	return was
}
