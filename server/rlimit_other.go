//go:build !unix

package server

// descriptorLimit is unknown where there are no rlimits.
func descriptorLimit() (uint64, error) { return 0, errNoRlimit }
