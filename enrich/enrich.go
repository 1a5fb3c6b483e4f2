// Package enrich asks the OpenAlex and Semantic Scholar APIs about the
// archive's papers and the researchers linked to their profiles, and feeds
// the objects they answer with to ingest's OpenAlex and S2AG readers: the
// API objects have the shape of those datasets' records, so the matching on
// evidence and the writing are the import's own.
package enrich

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/retry"
)

// Options configure one run.
type Options struct {
	// OpenAlexURL and S2URL are the APIs' base URLs; an empty one skips
	// that source.
	OpenAlexURL string
	S2URL       string
	// Mailto puts OpenAlex requests in its polite pool.
	Mailto string
	// S2Key is sent as Semantic Scholar's x-api-key header when set.
	S2Key string
	// Delay is the least time between two requests.
	Delay time.Duration
	// Tries bounds the attempts of one request that meets 429 or 503;
	// Backoff is the first wait when the server names none, doubled per
	// try, and MaxWait the longest wait.
	Tries   int
	Backoff time.Duration
	MaxWait time.Duration
	// MaxRequests stops the run after that many requests; 0 means no cap.
	MaxRequests int
	// RefreshAge asks again about items last asked about longer ago than
	// that (at least a second: the checks are kept to the second); 0 never
	// asks twice.
	RefreshAge time.Duration
	// BatchOpenAlex and BatchS2 are the papers or researchers per request
	// (at most, and by default, 100 and 500).
	BatchOpenAlex int
	BatchS2       int
	// HTTP is the client requests go through; nil means one with a
	// minute's timeout.
	HTTP *http.Client
	// Bad is told about every malformed object (it is skipped).
	Bad func(*ingest.RecordError)
	// Log is told about each batch done.
	Log func(format string, args ...any)
	// OnCommit, when set, is told after each committed write the ids of
	// the researchers it changed: those whose profile figures or ids
	// changed and the authors of the papers whose figures or ids
	// changed. It is never told papers: enrich adds no paper, version or
	// metadata, only what the sources say about papers already stored,
	// which papersAdded's subscribers do not wait for.
	OnCommit func(researchers []int64)

	// sleep replaces the waits in tests.
	sleep func(context.Context, time.Duration) error
}

// Summary is what a run did.
type Summary struct {
	Requests int
	Checked  map[string]int // items asked about, by source
	Records  int64          // good objects written
	Bad      int64          // malformed objects skipped
	ingest.Counts
	// Stopped says the request cap ended the run before it was done.
	Stopped bool
}

// The sources, as enrich_checks names them.
const (
	sourceOpenAlexWorks   = "openalex-works"
	sourceS2Papers        = "s2-papers"
	sourceOpenAlexAuthors = "openalex-authors"
	sourceS2Authors       = "s2-authors"
)

// Run asks the sources about every paper and linked researcher not asked
// about yet (or longer ago than the refresh age), newest papers first, and
// writes what they answer. It records each batch once written, so a run
// that was stopped (cap, signal, error) and run again goes on with the
// next batch. The researchers' figures are asked for after the papers,
// whose authorships link them to their profiles.
func Run(ctx context.Context, bdb *bun.DB, o Options) (Summary, error) {
	o.defaults()
	r := &run{db: bdb, o: o, sum: Summary{Checked: map[string]int{}}}
	if o.RefreshAge > 0 {
		r.staleBefore = time.Now().Add(-o.RefreshAge)
	}
	r.client = &client{
		http: o.HTTP, delay: o.Delay, backoff: o.Backoff, maxWait: o.MaxWait,
		tries: o.Tries, maxRequests: o.MaxRequests, sleep: o.sleep,
	}
	var stages []func(context.Context) error
	if o.OpenAlexURL != "" {
		stages = append(stages, r.openAlexWorks)
	}
	if o.S2URL != "" {
		stages = append(stages, r.s2Papers)
	}
	if o.OpenAlexURL != "" {
		stages = append(stages, r.openAlexAuthors)
	}
	if o.S2URL != "" {
		stages = append(stages, r.s2Authors)
	}
	var err error
	for _, stage := range stages {
		if err = stage(ctx); err != nil {
			break
		}
	}
	r.sum.Requests = r.client.requests
	if errors.Is(err, ErrRequestCap) {
		r.sum.Stopped, err = true, nil
	}
	// What was written is good data, whatever stopped the run.
	if r.wrote {
		if derr := ingest.Derive(context.WithoutCancel(ctx), bdb); derr != nil && err == nil {
			err = derr
		}
	}
	return r.sum, err
}

func (o *Options) defaults() {
	if o.BatchOpenAlex <= 0 || o.BatchOpenAlex > 100 {
		o.BatchOpenAlex = 100
	}
	if o.BatchS2 <= 0 || o.BatchS2 > 500 {
		o.BatchS2 = 500
	}
	if o.Tries <= 0 {
		o.Tries = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 5 * time.Minute
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: time.Minute}
	}
	if o.sleep == nil {
		o.sleep = retry.Sleep
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
}

// run is the state of one Run.
type run struct {
	db          *bun.DB
	o           Options
	client      *client
	sum         Summary
	staleBefore time.Time
	pages       int  // pages fed to the readers, to name them
	wrote       bool // whether any record was written
}

// batches calls fetch with each next batch of items of source until none
// is left, and records each batch as asked about once fetch is done with it.
// next is given the last item of the batch before (nil at first).
func batches[T any](ctx context.Context, r *run, source string, next func(last *T) ([]T, error), id func(T) int64, fetch func([]T) error) error {
	var last *T
	for {
		items, err := next(last)
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		if len(items) == 0 {
			return nil
		}
		if err := fetch(items); err != nil {
			return err
		}
		ids := make([]int64, len(items))
		for i, it := range items {
			ids[i] = id(it)
		}
		if err := db.MarkEnriched(ctx, r.db, source, ids, time.Now()); err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		last = &items[len(items)-1]
		r.sum.Checked[source] += len(items)
		r.o.Log("%s: %d asked about, %d requests so far", source, r.sum.Checked[source], r.client.requests)
	}
}

// write feeds lines (one API object each) to the reader of f and writes
// the records.
func (r *run) write(ctx context.Context, f ingest.Format, lines []byte) error {
	if len(lines) == 0 {
		return nil
	}
	r.pages++
	name := fmt.Sprintf("%s-page-%d.jsonl", f.Name, r.pages)
	bad := func(e *ingest.RecordError) {
		r.sum.Bad++
		if r.o.Bad != nil {
			r.o.Bad(e)
		}
	}
	sum, err := ingest.Import(ctx, r.db, ingest.Options{
		Format: pageFormat(f, bad), FS: pageFS{name: name, data: lines}, Paths: []string{name},
		SkipDerive: true,
		OnCommit:   r.onCommit(),
		FileError: func(_ string, ferr error) {
			bad(&ingest.RecordError{Pos: ingest.Position{File: name}, Reason: ferr.Error()})
		},
	})
	r.sum.Records += sum.Read
	r.sum.Counts.Inserted += sum.Inserted
	r.sum.Counts.Updated += sum.Updated
	r.sum.Counts.Unchanged += sum.Unchanged
	r.sum.Counts.Skipped += sum.Skipped
	if sum.Read > 0 {
		r.wrote = true
	}
	return err
}

// onCommit is the ingest OnCommit of the run's writes: the researchers
// only, to Options.OnCommit; nil without one.
func (r *run) onCommit() func(papers, researchers []int64) {
	if r.o.OnCommit == nil {
		return nil
	}
	return func(_, researchers []int64) {
		if len(researchers) > 0 {
			r.o.OnCommit(researchers)
		}
	}
}

// pageFormat is f reporting each malformed object to bad itself. Import
// takes a file whose first records are all malformed for a file of
// another format; an API page is of the format asked for, and a page of
// one malformed object is just that.
func pageFormat(f ingest.Format, bad func(*ingest.RecordError)) ingest.Format {
	read := f.Read
	f.Read = func(ctx context.Context, e ingest.Entry, s ingest.Sink) error {
		return read(ctx, e, ingest.Sink{Record: s.Record, Bad: func(re *ingest.RecordError) error {
			bad(re)
			return nil
		}})
	}
	return f
}

// lastID is the id of the researcher last asked about, 0 before the first.
func lastID(last *db.EnrichResearcher) int64 {
	if last == nil {
		return 0
	}
	return last.ID
}
