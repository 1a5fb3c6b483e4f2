package network

// SetPathBudget sets Path's budget of researchers and returns a function
// that restores it.
func SetPathBudget(budget int) (restore func()) {
	b := pathBudget
	pathBudget = budget
	return func() { pathBudget = b }
}

// OnLayer has Path give fn the frontier of each layer it reads, and
// returns a function that stops it.
func OnLayer(fn func(frontier []int64)) (restore func()) {
	layerRead = fn
	return func() { layerRead = nil }
}

// SetProbeCost sets what Path takes a probe of a pair of researchers to
// cost, in ties read, and returns a function that restores it: 0 has it
// probe every pair, a large cost never.
func SetProbeCost(cost int64) (restore func()) {
	c := probeCost
	probeCost = cost
	return func() { probeCost = c }
}
