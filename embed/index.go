package embed

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/vector"
)

// DefaultRefresh is how often a server's Watcher looks for vectors other
// processes wrote: one read of one row each time, so it may be often; a
// paper another process embeds is searched at most this long after.
const DefaultRefresh = 30 * time.Second

// StartIndex starts building, in the background, the vector index of the
// paper vectors of the active model (see Active), whose queries it embeds
// by that model; done is closed when the build ends. Without a model
// whose vectors are complete it returns Active's error
// (db.ErrNoEmbeddingModel when there is none). The index is built once;
// a server keeps it level with the database with a Watcher instead.
func StartIndex(ctx context.Context, idb bun.IDB, cfg Config) (live *vector.Live, done <-chan struct{}, err error) {
	if _, err := Active(ctx, idb, cfg); err != nil {
		return nil, nil, err
	}
	w := NewWatcher(ctx, idb, cfg)
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		w.Refresh(ctx) // a failure is the error its searches answer
	}()
	return w.Live(), ch, nil
}

// A Watcher keeps a server's vector index level with the database, whoever
// writes it: each Refresh reads the active model's name, creation time and
// generation (db.ModelGeneration), builds the index again when the model
// is another (a provider's vectors completed, the built-in model learned
// again), and otherwise adds the vectors written since the generation it
// last saw (db.EachPaperVectorSince). A paper another process deletes
// stays in the index until it is built again.
type Watcher struct {
	idb  bun.IDB
	cfg  Config
	live *vector.Live
	// model and created identify the model the index was built for, gen
	// the generation its vectors are level with; failed says the index of
	// that model could not be built, and is not tried again until the
	// model changes.
	model   string
	created time.Time
	gen     int64
	failed  bool
}

// NewWatcher returns the Watcher of a new index, empty until the first
// Refresh; searches answer vector.ErrBuilding until then when the
// archive has an active model, vector.ErrNoVectors when not.
func NewWatcher(ctx context.Context, idb bun.IDB, cfg Config) *Watcher {
	w := &Watcher{idb: idb, cfg: cfg, live: vector.NewLive(nil)}
	if _, err := db.ModelGeneration(ctx, idb); err == nil {
		w.live.Begin()
	}
	return w
}

// Live is the index the Watcher keeps.
func (w *Watcher) Live() *vector.Live { return w.live }

// Refresh brings the index level with the database, as Watcher says. It
// is not safe to call from two goroutines at once.
func (w *Watcher) Refresh(ctx context.Context) error {
	row, err := db.ModelGeneration(ctx, w.idb)
	switch {
	case errors.Is(err, db.ErrNoEmbeddingModel):
		return nil
	case err != nil:
		return err
	case row.Name != w.model || !row.CreatedAt.Equal(w.created):
		return w.rebuild(ctx, row)
	case w.failed || row.Generation <= w.gen:
		return nil
	}
	if err := db.EachPaperVectorSince(ctx, w.idb, w.model, w.gen, w.live.Add); err != nil {
		return err
	}
	w.gen = row.Generation
	return nil
}

// rebuild builds the index of the active model, whose row is row, and
// makes it the one searched. The vectors are read after row's generation
// was, so the next Refresh adds any written meanwhile.
func (w *Watcher) rebuild(ctx context.Context, row *db.EmbeddingModel) error {
	w.model, w.created, w.gen, w.failed = row.Name, row.CreatedAt, row.Generation, false
	e, err := Active(ctx, w.idb, w.cfg)
	if err == nil {
		w.live.Begin()
		var idx *vector.Index
		idx, err = vector.Build(ctx, func(ctx context.Context, fn func(id int64, v []float32) error) error {
			return db.EachPaperVector(ctx, w.idb, e.Name(), fn)
		}, e.Dim(), vector.Options{})
		w.live.Replace(idx, queryEmbedder(e), err)
	}
	if err != nil {
		w.failed = true
		w.live.Replace(nil, nil, err)
	}
	return err
}

// Run calls Refresh at once and then every every until ctx ends, telling
// failed of each error.
func (w *Watcher) Run(ctx context.Context, every time.Duration, failed func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := w.Refresh(ctx); err != nil && ctx.Err() == nil {
			failed(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// queryEmbedder embeds a query with e.
func queryEmbedder(e Embedder) vector.QueryEmbedder {
	return func(ctx context.Context, text string) ([]float32, error) {
		vs, err := e.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return vs[0], nil
	}
}
