package embed

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/vector"
)

// StartIndex starts building, in the background, the vector index of the
// paper vectors of the active model (see Active), whose queries it embeds
// by that model; done is closed when the build ends. Without a model
// whose vectors are complete it returns Active's error
// (db.ErrNoEmbeddingModel when there is none).
func StartIndex(ctx context.Context, idb bun.IDB, cfg Config) (live *vector.Live, done <-chan struct{}, err error) {
	m, err := Active(ctx, idb, cfg)
	if err != nil {
		return nil, nil, err
	}
	live = vector.NewLive(func(ctx context.Context, text string) ([]float32, error) {
		vs, err := m.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return vs[0], nil
	})
	done = live.Start(ctx, func(ctx context.Context, fn func(id int64, v []float32) error) error {
		return db.EachPaperVector(ctx, idb, m.Name(), fn)
	}, m.Dim(), vector.Options{})
	return live, done, nil
}
