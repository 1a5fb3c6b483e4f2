package analysis

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/sync/errgroup"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/llm"
	"github.com/papergraph/papergraph/retry"
)

// RunOptions configure a run of the model over the papers.
type RunOptions struct {
	// URL is the API's base URL (http://host:8000/v1): each analysis is a
	// POST to URL/chat/completions. Model is the model's name, as the
	// endpoint knows it; Key, when set, is sent as a bearer token.
	URL, Model, Key string
	// Since, when set, limits the run to papers published at or after it.
	Since time.Time
	// Limit, when positive, is the most papers the run asks about.
	Limit int
	// Concurrency is the most requests in flight (default 4).
	Concurrency int
	// PerMinute, when positive, is the most requests a minute, retries
	// included.
	PerMinute int
	// Timeout bounds one request (default 2m); a request that takes
	// longer is tried again, as a 429 or a 5xx is.
	Timeout time.Duration
	// Retry says how often and after what waits a request is tried again.
	Retry retry.Policy
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// Now is the time an analysis is written at (time.Now when nil).
	Now func() time.Time
	// Rejected hears of each answer that is not an analysis of the
	// schema; nothing is written for its paper.
	Rejected func(Rejection)
	// Progress, when set, hears of each paper answered.
	Progress func(RunSummary)
}

// Rejection is an answer the run did not write: its paper and why.
type Rejection struct {
	PaperID int64
	ArxivID string
	Reason  string
}

// RunSummary counts what a run did.
type RunSummary struct {
	Analysed int // analyses written
	Current  int // papers whose analysis is of their abstract as it is
	Rejected int // answers not written
	// PromptTokens and CompletionTokens are the tokens the endpoint
	// counted, of rejected answers too.
	PromptTokens, CompletionTokens int
}

// candidatePage is how many papers one read of the candidates returns.
const candidatePage = 500

// answered is one paper's answer, or the error that ends the run.
type answered struct {
	paper  db.AnalysisCandidate
	answer *completion
	err    error
}

// Run asks the model of o for the analysis of each paper with an
// abstract that has none, or one of an abstract since changed, in id
// order, o.Concurrency at a time, and writes each as it is answered, so
// that a run stopped midway and run again asks only about the papers
// left. An answer that is not JSON of AnswerSchema is reported to
// o.Rejected and not written. A request the endpoint refuses for now
// (429, 5xx) or that times out is tried again as o.Retry says; one that
// still fails, or that the endpoint refuses outright, ends the run with
// an error naming the paper, after the answers already in are written.
func Run(ctx context.Context, bdb *bun.DB, o RunOptions) (RunSummary, error) {
	var sum RunSummary
	if o.URL == "" || o.Model == "" {
		return sum, errors.New("analysis: a run needs the endpoint's URL and a model name")
	}
	workers := o.Concurrency
	if workers <= 0 {
		workers = 4
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	c := &chatClient{endpoint: llm.Endpoint{URL: o.URL, Model: o.Model, Key: o.Key, Client: o.Client},
		timeout: o.Timeout, retry: o.Retry}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var pace <-chan time.Time
	if o.PerMinute > 0 {
		t := time.NewTicker(time.Minute / time.Duration(o.PerMinute))
		defer t.Stop()
		pace = t.C
	}

	jobs := make(chan db.AnalysisCandidate)
	var g errgroup.Group
	var current int
	g.Go(func() error {
		defer close(jobs)
		n, err := candidates(ctx, bdb, o.Since, o.Limit, jobs)
		current = n
		return err
	})
	results := analyseAll(ctx, c, jobs, workers, pace)
	for r := range results {
		keep(ctx, cancel, bdb, o, now, r, &sum)
		if o.Progress != nil {
			o.Progress(sum)
		}
	}
	gerr := g.Wait()
	sum.Current = current
	if cause := context.Cause(ctx); cause != nil {
		return sum, cause
	}
	return sum, gerr
}

// analyseAll asks c for an analysis of each paper of jobs, workers at a
// time, each within pace when set, and sends what it answered on the
// channel it returns, closed when every worker is done.
func analyseAll(ctx context.Context, c *chatClient, jobs <-chan db.AnalysisCandidate, workers int, pace <-chan time.Time) <-chan answered {
	results := make(chan answered)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for p := range jobs {
				a, err := c.analyse(ctx, p, pace)
				select {
				case results <- answered{paper: p, answer: a, err: err}:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	return results
}

// keep counts r's tokens into sum and writes its analysis, or reports it
// rejected; a failed call stops the run through cancel.
func keep(ctx context.Context, cancel context.CancelCauseFunc, bdb *bun.DB, o RunOptions, now func() time.Time, r answered, sum *RunSummary) {
	if r.answer != nil {
		sum.PromptTokens += r.answer.promptTokens
		sum.CompletionTokens += r.answer.completionTokens
	}
	switch {
	case r.err != nil:
		if ctx.Err() == nil {
			cancel(fmt.Errorf("analysis of %s: %w", r.paper.ArxivID, r.err))
		}
	case r.answer.problem != "":
		sum.Rejected++
		if o.Rejected != nil {
			o.Rejected(Rejection{PaperID: r.paper.ID, ArxivID: r.paper.ArxivID, Reason: r.answer.problem})
		}
	default:
		row := r.answer.Answer.row(r.paper.ID, r.paper.Title, r.paper.Abstract, r.answer.model, PromptVersion, now())
		// The write is not under the run's context: an answer paid
		// for is kept even when the run is stopping.
		if err := db.SaveAnalyses(context.WithoutCancel(ctx), bdb, []*db.PaperAnalysis{row}); err != nil {
			cancel(err)
			return
		}
		sum.Analysed++
	}
}

// candidates sends to jobs, in id order, up to limit (when positive)
// papers whose analysis is missing or of another abstract, and returns
// how many it passed over as current.
func candidates(ctx context.Context, bdb *bun.DB, since time.Time, limit int, jobs chan<- db.AnalysisCandidate) (int, error) {
	current, sent := 0, 0
	var after int64
	for {
		page, err := db.AnalysisCandidates(ctx, bdb, after, since, candidatePage)
		if err != nil {
			return current, err
		}
		for _, p := range page {
			if p.AbstractHash == db.AbstractHash(p.Title, p.Abstract) {
				current++
				continue
			}
			if limit > 0 && sent == limit {
				return current, nil
			}
			select {
			case jobs <- p:
				sent++
			case <-ctx.Done():
				return current, nil
			}
		}
		if len(page) < candidatePage {
			return current, nil
		}
		after = page[len(page)-1].ID
	}
}
