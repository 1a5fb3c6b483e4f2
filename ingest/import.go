package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// Options configure one import.
type Options struct {
	Format Format
	Paths  []string
	// FS, when set, holds the paths; otherwise they are on disk.
	FS fs.FS
	// MaxErrors stops the import after that many malformed records; 0
	// means no limit.
	MaxErrors int
	// BatchSize is the number of records written per transaction.
	BatchSize int
	// Bad is told about every malformed record (it is skipped either way).
	Bad func(*RecordError)
	// FileError is told about a file that could not be read to its end
	// (missing, empty, truncated, not of the format); the import goes on
	// with the next file.
	FileError func(path string, err error)
	// Progress, when set, is called about every 200 ms until the import
	// ends.
	Progress func(Progress)
	// OnCommit, when set, is told after each committed batch the ids of
	// the papers it wrote (new or changed) and of the researchers whose
	// papers or profile (external ids, figures) it wrote; a live server
	// publishes them (see package notify).
	OnCommit func(papers, researchers []int64)
	// SkipDerive leaves the derived figures for a later import or Derive
	// call, for a run of several imports.
	SkipDerive bool
}

// Progress is a snapshot of a running import.
type Progress struct {
	Bytes, TotalBytes int64
	Records, Bad      int64
	Elapsed           time.Duration
	// Deriving says the records are written and the import is building
	// indexes and derived figures, since DeriveStart.
	Deriving    bool
	DeriveStart time.Duration
	// DeriveStep names the step of the derive that started last (see
	// DeriveSteps).
	DeriveStep string
}

// Summary is what an import did.
type Summary struct {
	Read int64 // good records read
	Counts
	Bad        int64 // malformed records skipped
	FileErrors int   // files that could not be read to the end
	Elapsed    time.Duration
	Derive     time.Duration // part of Elapsed spent on derived figures
	// CPU and DeriveCPU are the CPU time the process used during Elapsed
	// and Derive (see DeriveStep.CPU), zero where the system does not say.
	CPU, DeriveCPU time.Duration
	// DeriveSteps are the steps of the derive, each with its time.
	DeriveSteps []DeriveStep
}

// OK reports whether the import met no bad record and no file error.
func (s Summary) OK() bool { return s.Bad == 0 && s.FileErrors == 0 }

// ErrTooManyErrors stops an import that met more malformed records than
// Options.MaxErrors allows.
var ErrTooManyErrors = errors.New("too many malformed records")

// ErrWrongFormat says a file's first records all failed to parse, so the
// file is most likely not of the format given.
var ErrWrongFormat = errors.New("not a file of this format")

// wrongFormatAfter is how many malformed records without a single good one
// make a file count as the wrong format.
const wrongFormatAfter = 20

// reportProgress calls report with what now says every 200 ms until the
// stop it returns is called. Import stops it and waits for it before
// returning, so no progress line comes after the caller's summary.
func reportProgress(report func(Progress), now func() Progress) (stop func()) {
	if report == nil {
		return func() {}
	}
	done := make(chan struct{})
	var ticking sync.WaitGroup
	ticking.Add(1)
	go func() {
		defer ticking.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				report(now())
			}
		}
	}()
	return func() { close(done); ticking.Wait() }
}

// Import reads every path in the given format, writes the records in
// batched transactions, and then brings the derived figures up to date.
// Malformed records are reported and skipped; a file that cannot be read
// to its end is reported and the import goes on. Running the same import
// again changes nothing, and an import that was interrupted and run again
// ends with the same data as one that was not.
func Import(ctx context.Context, bdb *bun.DB, o Options) (Summary, error) {
	start, cpu := time.Now(), cpuTime()
	if o.BatchSize <= 0 {
		o.BatchSize = 2000
	}
	var sum Summary
	var total, read, records, bad atomic.Int64
	var deriveStart atomic.Int64 // nanoseconds after start; 0 while writing
	var deriveStep atomic.Pointer[string]
	for _, p := range o.Paths {
		if fi, err := statFile(o.FS, p); err == nil {
			total.Add(fi.Size())
		}
	}
	// An import into an empty archive builds the readers' indexes once
	// at the end, in Derive, rather than row by row.
	bulk, err := db.BeginBulk(ctx, bdb)
	if err != nil {
		return sum, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []Record, 2)
	var readErr error
	go func() {
		defer close(batches)
		readErr = readAll(ctx, o, batches, &read, &records, &bad, &sum.FileErrors)
	}()
	defer reportProgress(o.Progress, func() Progress {
		d := time.Duration(deriveStart.Load())
		p := Progress{Bytes: read.Load(), TotalBytes: total.Load(), Records: records.Load(), Bad: bad.Load(),
			Elapsed: time.Since(start), Deriving: d > 0, DeriveStart: d}
		if step := deriveStep.Load(); step != nil {
			p.DeriveStep = *step
		}
		return p
	})()
	w := newWriter(bdb)
	w.onCommit = o.OnCommit
	w.bulk = bulk
	var writeErr error
	for b := range batches {
		if writeErr != nil {
			continue // drain, so the reader can stop
		}
		c, err := w.write(ctx, b)
		if err != nil {
			writeErr = err
			cancel()
			continue
		}
		sum.Counts.add(c)
	}
	sum.Read, sum.Bad = records.Load(), bad.Load()
	if writeErr != nil {
		sum.Elapsed, sum.CPU = time.Since(start), cpuTime()-cpu
		return sum, writeErr
	}
	if readErr != nil && !errors.Is(readErr, ErrTooManyErrors) {
		sum.Elapsed, sum.CPU = time.Since(start), cpuTime()-cpu
		return sum, readErr
	}
	// Even a stopped import derives: what it wrote is good data.
	if !o.SkipDerive {
		d, dcpu := time.Now(), cpuTime()
		deriveStart.Store(int64(max(d.Sub(start), 1)))
		steps, err := DeriveSteps(ctx, bdb, func(step string) { deriveStep.Store(&step) })
		sum.DeriveSteps = steps
		if err != nil {
			return sum, err
		}
		sum.Derive, sum.DeriveCPU = time.Since(d), cpuTime()-dcpu
	}
	sum.Elapsed, sum.CPU = time.Since(start), cpuTime()-cpu
	return sum, readErr
}

// readAll reads every file and sends full batches; it returns the error
// that stopped it early, if any.
func readAll(ctx context.Context, o Options, out chan<- []Record, read, records, bad *atomic.Int64, fileErrors *int) error {
	b := &batcher{out: out, batch: make([]Record, 0, o.BatchSize)}
	for _, path := range o.Paths {
		err := readPath(ctx, o, path, b, read, records, bad)
		switch {
		case err == nil:
		case errors.Is(err, ErrTooManyErrors), errors.Is(err, context.Canceled):
			_ = b.flush(ctx)
			return err
		default:
			*fileErrors++
			if o.FileError != nil {
				o.FileError(path, err)
			}
		}
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	return nil
}

// batcher gathers records into batches of its capacity for the writer.
type batcher struct {
	out   chan<- []Record
	batch []Record
}

func (b *batcher) add(ctx context.Context, r Record) error {
	b.batch = append(b.batch, r)
	if len(b.batch) == cap(b.batch) {
		return b.flush(ctx)
	}
	return nil
}

// flush sends the batch so far, if it holds any record.
func (b *batcher) flush(ctx context.Context) error {
	if len(b.batch) == 0 {
		return nil
	}
	select {
	case b.out <- b.batch:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.batch = make([]Record, 0, cap(b.batch))
	return nil
}

// readPath reads one path's records into b and returns the error that
// stopped it, if any.
func readPath(ctx context.Context, o Options, path string, b *batcher, read, records, bad *atomic.Int64) error {
	var good int64
	// Errors before the first good record are held back: if the
	// first wrongFormatAfter records are all bad, one message about
	// the format replaces them.
	var held []*RecordError
	reportHeld := func() error {
		for len(held) > 0 {
			e := held[0]
			held = held[1:]
			if err := report(o, e, bad); err != nil {
				return err
			}
		}
		return nil
	}
	sink := Sink{
		Record: func(r Record, _ Position) error {
			good++
			records.Add(1)
			if err := reportHeld(); err != nil {
				return err
			}
			prepare(r)
			return b.add(ctx, r)
		},
		Bad: func(e *RecordError) error {
			e.Pos.File = filepath.Base(e.Pos.File)
			if good > 0 {
				return report(o, e, bad)
			}
			held = append(held, e)
			if len(held) >= wrongFormatAfter {
				return wrongFormat(o.Format, held)
			}
			return nil
		},
	}
	err := eachEntry(o.FS, path, o.Format, read, func(e Entry) error {
		return o.Format.Read(ctx, e, sink)
	})
	switch {
	case len(held) == 0:
	case err == nil:
		err = wrongFormat(o.Format, held)
	case !errors.Is(err, ErrWrongFormat):
		// The file ended early: what was held is still bad records.
		if rerr := reportHeld(); rerr != nil && errors.Is(rerr, ErrTooManyErrors) {
			err = rerr
		}
	}
	return err
}

func wrongFormat(f Format, held []*RecordError) error {
	return fmt.Errorf("%w %q (first error: %s)", ErrWrongFormat, f.Name, held[0])
}

func report(o Options, e *RecordError, bad *atomic.Int64) error {
	n := bad.Add(1)
	if o.Bad != nil {
		o.Bad(e)
	}
	if o.MaxErrors > 0 && n >= int64(o.MaxErrors) {
		return ErrTooManyErrors
	}
	return nil
}

func statFile(fsys fs.FS, path string) (fs.FileInfo, error) {
	if fsys == nil {
		return os.Stat(path)
	}
	return fs.Stat(fsys, path)
}
