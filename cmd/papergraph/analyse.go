package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/analysis"
	"github.com/papergraph/papergraph/ingest"
)

func cmdAnalyse(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("analyse", "analyse [--db DSN] --llm-url URL --llm-model NAME [--since DATE] [--limit N]\n"+
		"        [--concurrency N] [--rate N/min]\n\n"+
		"Asks a language model behind an OpenAI-compatible chat-completions API for the analysis of each paper\n"+
		"with an abstract that has none, or one of an abstract that has changed since, and writes each as it is\n"+
		"answered: a run stopped midway, run again, goes on where it was. Answers that are not an analysis of\n"+
		"the schema are reported and not written. The key, if the API needs one, comes from $PAPERGRAPH_LLM_KEY.", stderr)
	url := fs.String("llm-url", os.Getenv("PAPERGRAPH_LLM_URL"),
		"the OpenAI-compatible API's base `URL` (http://localhost:11434/v1, say) (env PAPERGRAPH_LLM_URL)")
	model := fs.String("llm-model", os.Getenv("PAPERGRAPH_LLM_MODEL"), "the `MODEL` that analyses (env PAPERGRAPH_LLM_MODEL)")
	since := fs.String("since", "", "analyse only papers published on or after `DATE` (YYYY-MM-DD)")
	limit := fs.Int("limit", 0, "ask about at most `N` papers (0: all)")
	concurrency := fs.Int("concurrency", 4, "at most `N` requests at a time")
	rate := fs.String("rate", "", "at most so many requests a minute, written `N/min`, retries included (empty: no limit)")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up on a request after this long, and try it again")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: analyse takes no arguments, got %q", errUsage, fs.Arg(0))
	}
	if *url == "" || *model == "" {
		return fmt.Errorf("%w: analyse needs --llm-url and --llm-model", errUsage)
	}
	o := analysis.RunOptions{URL: *url, Model: *model, Key: os.Getenv("PAPERGRAPH_LLM_KEY"), Limit: *limit,
		Concurrency: *concurrency, Timeout: *timeout}
	if *limit < 0 || *concurrency < 1 {
		return fmt.Errorf("%w: --limit must be 0 or more and --concurrency 1 or more", errUsage)
	}
	if *since != "" {
		t, err := time.Parse(time.DateOnly, *since)
		if err != nil {
			return fmt.Errorf("%w: --since %q is not a date YYYY-MM-DD", errUsage, *since)
		}
		o.Since = t
	}
	if *rate != "" {
		n, err := strconv.Atoi(strings.TrimSuffix(*rate, "/min"))
		if err != nil || n < 1 {
			return fmt.Errorf("%w: --rate %q is not N/min with N 1 or more", errUsage, *rate)
		}
		o.PerMinute = n
	}
	bdb, closeDB, err := openLocked(ctx, *dsn)
	if err != nil {
		return err
	}
	defer closeDB()
	return runAnalyse(ctx, bdb, o, stdout, stderr)
}

// runAnalyse runs the model over the papers, printing rejected answers,
// progress on a terminal, and a summary with the tokens spent.
func runAnalyse(ctx context.Context, bdb *bun.DB, o analysis.RunOptions, stdout, stderr io.Writer) error {
	bar := &progressLine{w: stderr, label: "analysing"}
	o.Rejected = func(r analysis.Rejection) {
		bar.clear()
		fmt.Fprintf(stderr, "rejected the answer for %s: %s\n", r.ArxivID, r.Reason)
	}
	o.Retry.Notify = func(err error, wait time.Duration) {
		bar.clear()
		fmt.Fprintf(stderr, "trying again in %s: %v\n", wait, err)
	}
	start := time.Now()
	if isTerminal(stderr) {
		o.Progress = func(s analysis.RunSummary) {
			bar.mu.Lock()
			defer bar.mu.Unlock()
			fmt.Fprintf(bar.w, "\r\033[K%s (%s): %d analysed, %d rejected, %d tokens", bar.label, o.Model,
				s.Analysed, s.Rejected, s.PromptTokens+s.CompletionTokens)
			bar.drawn = true
		}
	}
	sum, err := analysis.Run(ctx, bdb, o)
	bar.clear()
	fmt.Fprintf(stdout, "analyses (%s, prompt %s): analysed %d papers, %d current, %d answers rejected, in %s\n",
		o.Model, analysis.PromptVersion, sum.Analysed, sum.Current, sum.Rejected, roundDuration(time.Since(start)))
	fmt.Fprintf(stdout, "tokens spent: %d prompt + %d completion = %d\n", sum.PromptTokens, sum.CompletionTokens,
		sum.PromptTokens+sum.CompletionTokens)
	if err != nil {
		return fmt.Errorf("%w (the analyses written stand; run papergraph analyse again to go on)", err)
	}
	if sum.Rejected > 0 {
		return errReported
	}
	return nil
}

// runAnalysisImport imports analysis files, printing bad records and a
// summary. It reports whether every record was good.
func runAnalysisImport(ctx context.Context, bdb *bun.DB, o analysis.ImportOptions, stdout, stderr io.Writer) (bool, error) {
	o.Bad = func(e *ingest.RecordError) { fmt.Fprintf(stderr, "skipped %s\n", e) }
	start := time.Now()
	sum, err := analysis.Import(ctx, bdb, o)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(stdout, "analysis: read %d, written %d, unchanged %d, malformed %d in %s\n",
		sum.Read, sum.Written, sum.Unchanged, sum.Bad, roundDuration(time.Since(start)))
	return sum.Bad == 0, nil
}
