package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneGC: serve raises GOGC and sets a soft memory limit, unless the
// environment names either, which then stands.
func TestTuneGC(t *testing.T) {
	gcPercent, memLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(gcPercent); debug.SetMemoryLimit(memLimit) })
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(name); ok {
			t.Cleanup(func() { os.Setenv(name, v) })
		} else {
			t.Cleanup(func() { os.Unsetenv(name) })
		}
	}

	os.Unsetenv("GOGC")
	os.Unsetenv("GOMEMLIMIT")
	tuneGC(0)
	if got := debug.SetGCPercent(100); got != servingGCPercent {
		t.Errorf("GOGC unset: GC percent %d, want %d", got, servingGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != servingMemoryLimit {
		t.Errorf("GOMEMLIMIT unset: memory limit %d, want %d", got, servingMemoryLimit)
	}

	// As if the process had started with GOGC=150 GOMEMLIMIT=256MiB: the
	// runtime read them then.
	os.Setenv("GOGC", "150")
	os.Setenv("GOMEMLIMIT", "256MiB")
	debug.SetGCPercent(150)
	debug.SetMemoryLimit(256 << 20)
	tuneGC(0)
	if got := debug.SetGCPercent(100); got != 150 {
		t.Errorf("GOGC=150: GC percent %d, want 150", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 256<<20 {
		t.Errorf("GOMEMLIMIT=256MiB: memory limit %d, want %d", got, 256<<20)
	}

	// --memory-limit stands over GOMEMLIMIT.
	tuneGC(512 << 20)
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 512<<20 {
		t.Errorf("--memory-limit 512 with GOMEMLIMIT=256MiB: memory limit %d, want %d", got, 512<<20)
	}
}
