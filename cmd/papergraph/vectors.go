package main

import (
	"context"
	"log/slog"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/vector"
)

// startVectors builds, in the background, the vector index of the
// archive's paper embeddings by the active model, which searchPapers'
// SEMANTIC and HYBRID modes, Paper.related and Researcher.similar read.
// Without a model whose vectors are complete it returns nil, and the
// server searches by keyword alone.
func startVectors(ctx context.Context, idb bun.IDB, cfg embed.Config, logger *slog.Logger) *vector.Live {
	m, err := embed.Active(ctx, idb, cfg)
	if err != nil {
		logger.Info("no vector index: searches rank by keyword alone", "reason", err.Error())
		return nil
	}
	live := vector.NewLive(func(ctx context.Context, text string) ([]float32, error) {
		vs, err := m.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return vs[0], nil
	})
	live.Start(ctx, func(ctx context.Context, fn func(id int64, v []float32) error) error {
		return db.EachPaperVector(ctx, idb, m.Name(), fn)
	}, m.Dim(), vector.Options{})
	return live
}
