package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/vector"
)

// startVectors builds, in the background, the vector index that
// searchPapers' SEMANTIC and HYBRID modes, Paper.related and
// Researcher.similar read, and keeps it level with the database every
// refresh (see embed.Watcher): papers another process embeds are searched
// without a restart, and an archive with no embeddings yet gets an index
// once an import or papergraph embed makes them. Until then the server
// searches by keyword alone.
func startVectors(ctx context.Context, idb bun.IDB, cfg embed.Config, refresh time.Duration, logger *slog.Logger) *vector.Live {
	w := embed.NewWatcher(ctx, idb, cfg)
	if !w.Live().Ready() {
		logger.Info("vector index: searches rank by keyword alone until it is built", "refresh", refresh.String())
	}
	go w.Run(ctx, refresh, func(err error) {
		logger.Warn("vector index: could not bring it up to date", "err", err)
	})
	return w.Live()
}
