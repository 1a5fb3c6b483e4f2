//go:build unix

package ingest

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used so far, user and system.
// Differences of it measure a step on a machine busy with other work,
// where its wall time says more about the neighbours than the step.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
