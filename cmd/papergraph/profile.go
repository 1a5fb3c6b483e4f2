package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"time"
)

// profiles are the pprof profiles import's --cpuprofile and --memprofile
// ask for, to find what a large import spends its time and memory on.
type profiles struct {
	cpu, mem string
}

// heapSample is the metric the heap profile follows: the bytes of live
// and not yet swept heap objects.
const heapSample = "/memory/classes/heap/objects:bytes"

// start starts the profiles and returns a function that ends them. The
// CPU profile covers the whole run. The heap profile is written each time
// the Go heap passes its highest so far by an eighth (sampled every 200
// ms), and once at the end if never: what a memory burst holds is in the
// file after the run, not what is left at its end. SQLite's own memory
// (its page cache and sorter) is not on the Go heap; the line written to
// stderr at the end says how much of the peak resident memory the heap was.
func (p profiles) start(stderr io.Writer) (func() error, error) {
	var stops []func() error
	if p.cpu != "" {
		f, err := os.Create(p.cpu)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		stops = append(stops, func() error {
			pprof.StopCPUProfile()
			return f.Close()
		})
	}
	if p.mem != "" {
		done, finished := make(chan struct{}), make(chan error, 1)
		go func() { finished <- p.followHeap(done, stderr) }()
		stops = append(stops, func() error {
			close(done)
			return <-finished
		})
	}
	return func() error {
		var first error
		for _, stop := range stops {
			if err := stop(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}, nil
}

// followHeap writes the heap profile at each new high of the heap until
// done is closed.
func (p profiles) followHeap(done <-chan struct{}, stderr io.Writer) error {
	sample := []metrics.Sample{{Name: heapSample}}
	var high uint64
	var at time.Time
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			if high == 0 {
				if err := p.writeHeap(); err != nil {
					return err
				}
			}
			fmt.Fprintf(stderr, "heap profile %s: Go heap peaked at %d MB at %s; peak resident memory %s\n",
				p.mem, high>>20, at.UTC().Format(time.TimeOnly), peakRSS())
			return nil
		case <-tick.C:
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > high+high/8 {
				high, at = v, time.Now()
				if err := p.writeHeap(); err != nil {
					return err
				}
			}
		}
	}
}

// writeHeap writes the heap profile as of the last garbage collection,
// into a new file renamed over the old, so that the file is always whole.
func (p profiles) writeHeap() error {
	tmp := p.mem + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p.mem)
}

// peakRSS reads the process's peak resident memory where the system says
// it (Linux), else says it is unknown.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil || runtime.GOOS != "linux" {
		return "unknown"
	}
	var kb int64
	for _, line := range strings.Split(string(b), "\n") {
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil {
			return fmt.Sprintf("%d MB", kb>>10)
		}
	}
	return "unknown"
}
