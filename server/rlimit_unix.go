//go:build unix

package server

import "syscall"

// descriptorLimit is the process's soft limit on open descriptors.
func descriptorLimit() (uint64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, err
	}
	return uint64(r.Cur), nil
}
