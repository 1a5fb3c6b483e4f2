package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/topics"
)

func cmdTopics(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("topics", "topics [--db DSN] [--rebuild]\n\n"+
		"Files the papers new or changed since the topics were built under the nearest topic, or builds the\n"+
		"topics afresh from the papers' embeddings when there are none, they came from another embedding model,\n"+
		"or the archive has doubled since. Import, harvest and embed run it at their end.", stderr)
	rebuild := fs.Bool("rebuild", false, "cluster every paper again (deterministic: an archive unchanged since gives the same topics)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: topics takes no arguments, got %q", errUsage, fs.Arg(0))
	}
	bdb, closeDB, err := openLocked(ctx, *dsn)
	if err != nil {
		return err
	}
	defer closeDB()
	return runTopics(ctx, bdb, topics.Options{Rebuild: *rebuild}, stdout)
}

// runTopics brings the topics up to date and prints a summary; an
// archive with too few embedded papers is skipped for now.
func runTopics(ctx context.Context, bdb *bun.DB, o topics.Options, stdout io.Writer) error {
	sum, err := topics.Update(ctx, bdb, o)
	switch {
	case errors.Is(err, topics.ErrTooFewPapers):
		fmt.Fprintf(stdout, "topics: skipped for now: %v\n", err)
		return nil
	case err != nil:
		return fmt.Errorf("topics: %w", err)
	case sum.Built:
		fmt.Fprintf(stdout, "topics: built %d topics from %d papers in %s\n", sum.Topics, sum.Papers, roundDuration(sum.Elapsed))
	default:
		fmt.Fprintf(stdout, "topics: filed %d new or changed papers under %d topics in %s\n", sum.Papers, sum.Topics, roundDuration(sum.Elapsed))
	}
	return nil
}

// topicsLogged brings the topics up to date after a harvest's
// embeddings, logging what it did; the caller holds the import lock.
func topicsLogged(ctx context.Context, bdb *bun.DB, logger *slog.Logger) error {
	sum, err := topics.Update(ctx, bdb, topics.Options{})
	if errors.Is(err, topics.ErrTooFewPapers) {
		logger.Info("topics: skipped for now", "reason", err.Error())
		return nil
	}
	if err != nil {
		return fmt.Errorf("topics: %w", err)
	}
	logger.Info("topics up to date", "built", sum.Built, "topics", sum.Topics, "papers", sum.Papers,
		"elapsed", sum.Elapsed.Round(time.Millisecond))
	return nil
}
