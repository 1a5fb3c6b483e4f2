package network

// SetPathBudget sets Path's budget of researchers and returns a function
// that restores it.
func SetPathBudget(budget int) (restore func()) {
	b := pathBudget
	pathBudget = budget
	return func() { pathBudget = b }
}
