package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/topics"
	"github.com/papergraph/papergraph/vector"
)

// embedFlags choose the embedder of the commands that embed papers.
type embedFlags struct {
	url, model *string
	skip       *bool
}

// addEmbedFlags adds --embeddings-url and --embeddings-model to fs, and
// --no-embed when skippable.
func addEmbedFlags(fs *flag.FlagSet, skippable bool) *embedFlags {
	f := &embedFlags{
		url: fs.String("embeddings-url", os.Getenv("PAPERGRAPH_EMBEDDINGS_URL"),
			"embed with the OpenAI-compatible server at `URL` (http://localhost:11434/v1, say) rather than the built-in model;\n"+
				"its key, if it needs one, comes from $PAPERGRAPH_EMBEDDINGS_KEY (env PAPERGRAPH_EMBEDDINGS_URL)"),
		model: fs.String("embeddings-model", os.Getenv("PAPERGRAPH_EMBEDDINGS_MODEL"),
			"the model the --embeddings-url server embeds with (env PAPERGRAPH_EMBEDDINGS_MODEL)"),
		skip: new(bool),
	}
	if skippable {
		f.skip = fs.Bool("no-embed", false, "do not bring the papers' embeddings and topics up to date at the end (papergraph embed does)")
	}
	return f
}

func (f *embedFlags) config() embed.Config {
	return embed.Config{URL: *f.url, Model: *f.model, Key: os.Getenv("PAPERGRAPH_EMBEDDINGS_KEY")}
}

func (f *embedFlags) check() error {
	if *f.url != "" && *f.model == "" {
		return fmt.Errorf("%w: --embeddings-url needs --embeddings-model", errUsage)
	}
	return nil
}

func cmdEmbed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("embed", "embed [--db DSN] [--retrain] [--embeddings-url URL --embeddings-model NAME]\n\n"+
		"Embeds the papers that are new or changed since they were last embedded, and makes their model the one\n"+
		"queries are embedded with. Without --embeddings-url it uses the built-in model, learned from the archive\n"+
		"when it has none (or has doubled since), and kept in the database.", stderr)
	ef := addEmbedFlags(fs, false)
	retrain := fs.Bool("retrain", false, "learn the built-in model again from the archive (as learning is deterministic, an archive\n"+
		"unchanged since gives the same model, whose vectors stand)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: embed takes no arguments, got %q", errUsage, fs.Arg(0))
	}
	if err := ef.check(); err != nil {
		return err
	}
	if *retrain && *ef.url != "" {
		return fmt.Errorf("%w: --retrain is for the built-in model, not --embeddings-url", errUsage)
	}
	bdb, closeDB, err := openLocked(ctx, *dsn)
	if err != nil {
		return err
	}
	defer closeDB()
	return runEmbed(ctx, bdb, ef.config(), embed.BuiltinOptions{Retrain: *retrain}, stdout, stderr)
}

// runEmbed brings the papers' embeddings up to date, drawing a progress
// line on a terminal and printing a summary, and then the topics, which
// are made from them.
func runEmbed(ctx context.Context, bdb *bun.DB, cfg embed.Config, o embed.BuiltinOptions, stdout, stderr io.Writer) error {
	var e embed.Embedder
	var err error
	start := time.Now()
	if cfg.URL == "" {
		m, learned, berr := embed.Builtin(ctx, bdb, o)
		if learned {
			fmt.Fprintf(stdout, "embeddings: built-in model of %d words in %d dimensions, learned from %d papers in %s\n",
				m.Words(), m.Dim(), m.Docs(), roundDuration(time.Since(start)))
		}
		e, err = m, berr
	} else {
		e, err = embed.NewProvider(ctx, cfg)
	}
	if errors.Is(err, embed.ErrTooLittleText) {
		fmt.Fprintf(stdout, "embeddings: skipped for now: %v\n", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("embeddings: %w", err)
	}
	bar := &progressLine{w: stderr, label: "embedding"}
	var so embed.SyncOptions
	if isTerminal(stderr) {
		so.Progress = bar.drawEmbed
	}
	sum, err := embed.Sync(ctx, bdb, e, so)
	bar.clear()
	if err != nil {
		return fmt.Errorf("embeddings: %w", err)
	}
	fmt.Fprintf(stdout, "embeddings (%s, %d dimensions): embedded %d papers, %d unchanged, in %s\n",
		sum.Model, e.Dim(), sum.Embedded, sum.Unchanged, roundDuration(sum.Elapsed))
	return runTopics(ctx, bdb, topics.Options{}, stdout)
}

// drawEmbed draws an embedding's progress.
func (p *progressLine) drawEmbed(pr embed.SyncProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	frac := float64(pr.Scanned) / float64(max(pr.Total, 1))
	const width = 24
	n := int(frac * width)
	bar := strings.Repeat("=", n) + strings.Repeat("-", width-n)
	line := fmt.Sprintf("%s (%s): %d/%d papers [%s] %5.1f%%, %d embedded", p.label, pr.Model, pr.Scanned, pr.Total,
		bar, 100*frac, pr.Embedded)
	if frac > 0.01 && frac < 1 {
		eta := time.Duration(pr.Elapsed.Seconds()/frac*(1-frac)) * time.Second
		line += " ETA " + eta.Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
}

// embedLogged brings the embeddings, and then the topics, up to date
// after a harvest, under the import lock, logging what it did; a harvest
// or import writing meanwhile leaves it to that one's end.
func embedLogged(ctx context.Context, bdb *bun.DB, cfg embed.Config, logger *slog.Logger, live *vector.Live) error {
	release, err := db.LockImport(ctx, bdb)
	var running *db.ImportRunningError
	if errors.As(err, &running) {
		logger.Info("embeddings: skipped, another harvest or import is writing", "holder", running.Holder.String())
		return nil
	}
	if err != nil {
		return err
	}
	defer release()
	e, err := embed.Open(ctx, bdb, cfg, embed.BuiltinOptions{})
	if errors.Is(err, embed.ErrTooLittleText) {
		logger.Info("embeddings: skipped for now", "reason", err.Error())
		return nil
	}
	if err != nil {
		return fmt.Errorf("embeddings: %w", err)
	}
	var so embed.SyncOptions
	if live != nil {
		so.Embedded = func(id int64, v []float32) {
			if err := live.Add(id, v); err != nil {
				logger.Warn("embeddings: could not add a paper to the vector index", "paper", id, "err", err)
			}
		}
	}
	sum, err := embed.Sync(ctx, bdb, e, so)
	if err != nil {
		return fmt.Errorf("embeddings: %w", err)
	}
	logger.Info("embeddings up to date", "model", sum.Model, "embedded", sum.Embedded, "unchanged", sum.Unchanged,
		"elapsed", sum.Elapsed.Round(time.Millisecond))
	return topicsLogged(ctx, bdb, logger)
}
