package network

// SetPathBounds sets Path's budget of researchers and the frontier from
// which it asks whether the two sides are tied before reading a layer,
// and returns a function that restores them.
func SetPathBounds(budget, probe int) (restore func()) {
	b, p := pathBudget, probeFrom
	pathBudget, probeFrom = budget, probe
	return func() { pathBudget, probeFrom = b, p }
}
