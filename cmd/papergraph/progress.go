package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/ingest"
)

// runImport runs one import, drawing a progress line on a terminal and
// printing bad records and a summary. It reports whether the import met
// no error.
func runImport(ctx context.Context, bdb *bun.DB, o ingest.Options, stdout, stderr io.Writer) (bool, error) {
	tty := isTerminal(stderr)
	bar := &progressLine{w: stderr, label: o.Format.Name}
	o.Bad = func(e *ingest.RecordError) {
		bar.clear()
		fmt.Fprintf(stderr, "skipped %s\n", e)
	}
	o.FileError = func(path string, err error) {
		bar.clear()
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
	}
	if tty {
		o.Progress = bar.draw
	}
	sum, err := ingest.Import(ctx, bdb, o)
	bar.clear()
	if err != nil && !errors.Is(err, ingest.ErrTooManyErrors) {
		return false, err
	}
	fmt.Fprintf(stdout, "%s: read %d, inserted %d, updated %d, unchanged %d, skipped %d, malformed %d",
		o.Format.Name, sum.Read, sum.Inserted, sum.Updated, sum.Unchanged, sum.Skipped, sum.Bad)
	if sum.FileErrors > 0 {
		fmt.Fprintf(stdout, ", %d unreadable files", sum.FileErrors)
	}
	fmt.Fprintf(stdout, " in %s%s (derived figures %s%s)\n", sum.Elapsed.Round(time.Millisecond), cpuNote(", ", sum.CPU),
		sum.Derive.Round(time.Millisecond), cpuNote(", ", sum.DeriveCPU))
	if len(sum.DeriveSteps) > 0 {
		fmt.Fprintf(stdout, "%s: derived figures by step: %s\n", o.Format.Name, stepTimes(sum.DeriveSteps))
	}
	if err != nil {
		fmt.Fprintf(stderr, "stopped after %d malformed records (--max-errors)\n", sum.Bad)
		return false, nil
	}
	return sum.OK(), nil
}

// progressLine redraws one status line on a terminal.
type progressLine struct {
	mu    sync.Mutex // draw runs on the import's ticker, clear on its reader
	w     io.Writer
	label string
	drawn bool
}

func (p *progressLine) draw(pr ingest.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	secs := pr.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(pr.Records) / secs
	}
	line := fmt.Sprintf("%s: %d records (%.0f/s)", p.label, pr.Records, rate)
	if pr.TotalBytes > 0 {
		frac := float64(pr.Bytes) / float64(pr.TotalBytes)
		const width = 24
		n := int(frac * width)
		bar := make([]byte, width)
		for i := range bar {
			bar[i] = '-'
			if i < n {
				bar[i] = '='
			}
		}
		line = fmt.Sprintf("%s [%s] %5.1f%% %s/%s", line, bar, 100*frac, mb(pr.Bytes), mb(pr.TotalBytes))
		if frac > 0.01 && frac < 1 {
			eta := time.Duration(secs/frac*(1-frac)) * time.Second
			line += " ETA " + eta.Round(time.Second).String()
		}
	}
	if pr.Bad > 0 {
		line += fmt.Sprintf(", %d malformed", pr.Bad)
	}
	if pr.Deriving {
		line = fmt.Sprintf("%s: %d records written; building indexes and derived figures (%s)",
			p.label, pr.Records, (pr.Elapsed - pr.DeriveStart).Round(time.Second))
		if pr.DeriveStep != "" {
			line += ": " + pr.DeriveStep
		}
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
}

func (p *progressLine) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// stepTimes lists the steps of a derive with their times and CPU times,
// and with the number of transactions of those that took more than one.
func stepTimes(steps []ingest.DeriveStep) string {
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", s.Name, roundDuration(s.Elapsed))
		switch {
		case s.Transactions > 1:
			fmt.Fprintf(&b, " (%d transactions%s)", s.Transactions, cpuNote(", ", s.CPU))
		case s.CPU > 0:
			fmt.Fprintf(&b, " (%s)", cpuNote("", s.CPU))
		}
	}
	return b.String()
}

// cpuNote is ", cpu 1.5s" (after sep) for a CPU time, or nothing where
// the system does not say (zero). The CPU time measures a step on a busy
// machine, whose wall time holds the waits for other processes.
func cpuNote(sep string, cpu time.Duration) string {
	if cpu <= 0 {
		return ""
	}
	return sep + "cpu " + roundDuration(cpu).String()
}

// roundDuration keeps two or three significant digits of a time.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	default:
		return d.Round(time.Millisecond)
	}
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
