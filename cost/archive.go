package cost

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// archive holds the statistics a Calculator estimates lists by: for each
// name a @listBound(typical:) gives, the length that most lists of that
// kind stay within (the 99th percentile of the archive's own lists). A
// name without a figure, as in an empty archive, leaves its lists at their
// size from @listSize.
type archive struct {
	figures atomic.Pointer[map[string]int64]

	mu      sync.Mutex
	read    func(context.Context) (map[string]int64, error)
	every   time.Duration
	readAt  time.Time
	reading bool
}

// readTimeout bounds one read of the statistics.
const readTimeout = 30 * time.Second

// SetTypical replaces the archive's statistics.
func (a *archive) SetTypical(figures map[string]int64) {
	a.figures.Store(&figures)
}

func (a *archive) typical() map[string]int64 {
	a.refresh()
	if m := a.figures.Load(); m != nil {
		return *m
	}
	return nil
}

// Follow reads the archive's statistics with read now, and again when
// Measure runs at least every after the last read, in the background, so
// that an import or a harvest into a running server's database changes
// its estimates without a restart and no request waits on the read. It
// returns the first read's error; the statistics stay as they were when
// a read fails.
func (c *Calculator) Follow(read func(context.Context) (map[string]int64, error), every time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	figures, err := read(ctx)
	if err == nil {
		c.SetTypical(figures)
	}
	c.mu.Lock()
	c.read, c.every, c.readAt = read, every, time.Now()
	c.mu.Unlock()
	return err
}

// refresh starts a read of the statistics when the last one is older than
// the interval Follow was given and no other is running.
func (a *archive) refresh() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.read == nil || a.reading || time.Since(a.readAt) < a.every {
		return
	}
	a.reading = true
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		defer cancel()
		figures, err := a.read(ctx)
		if err == nil {
			a.SetTypical(figures)
		}
		a.mu.Lock()
		a.reading, a.readAt = false, time.Now()
		a.mu.Unlock()
	}()
}

// Statistics returns the names of the archive statistics the schema's
// @listBound(typical:) directives give, sorted.
func (c *Calculator) Statistics() []string {
	var names []string
	for _, b := range c.table {
		if b.typical != "" && !slices.Contains(names, b.typical) {
			names = append(names, b.typical)
		}
	}
	slices.Sort(names)
	return names
}
