package main

import (
	"context"
	"log/slog"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/vector"
)

// startVectors builds, in the background, the vector index that
// searchPapers' SEMANTIC and HYBRID modes, Paper.related and
// Researcher.similar read (see embed.StartIndex). Without a model whose
// vectors are complete it returns nil, and the server searches by
// keyword alone.
func startVectors(ctx context.Context, idb bun.IDB, cfg embed.Config, logger *slog.Logger) *vector.Live {
	live, _, err := embed.StartIndex(ctx, idb, cfg)
	if err != nil {
		logger.Info("no vector index: searches rank by keyword alone", "reason", err.Error())
		return nil
	}
	return live
}
