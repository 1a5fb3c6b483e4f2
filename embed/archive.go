package embed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// BuiltinOptions say when and how the built-in model is learned.
type BuiltinOptions struct {
	// Retrain learns the model again even if the archive keeps one.
	Retrain bool
	// MaxDocs bounds the papers the model is learned from, an even sample
	// of the archive (default 25000).
	MaxDocs int
	Learn   LearnOptions
}

func (o BuiltinOptions) maxDocs() int {
	if o.MaxDocs <= 0 {
		return 25000
	}
	return o.MaxDocs
}

// Builtin returns the built-in model the archive keeps, learning it first
// (and storing it, which drops the vectors the old one made) when the
// archive has none, when asked to, or when it was learned from the whole
// archive, then smaller than MaxDocs, and the archive has since doubled:
// a model learned from a first small import would know too few words. A
// model learned from a sample is kept. learned says whether it learned.
func Builtin(ctx context.Context, idb bun.IDB, o BuiltinOptions) (m *Model, learned bool, err error) {
	papers, err := db.CountPapers(ctx, idb)
	if err != nil {
		return nil, false, err
	}
	if !o.Retrain {
		row, err := db.GetEmbeddingModel(ctx, idb, BuiltinName)
		switch {
		case errors.Is(err, db.ErrNoEmbeddingModel):
		case err != nil:
			return nil, false, err
		default:
			m, err := UnmarshalModel(row.Data)
			if err != nil {
				return nil, false, err
			}
			if m.archive >= o.maxDocs() || papers < 2*int64(m.archive) {
				return m, false, nil
			}
		}
	}
	m, err = LearnArchive(ctx, idb, o)
	if err != nil {
		return nil, false, err
	}
	data, err := m.MarshalBinary()
	if err != nil {
		return nil, false, err
	}
	row := &db.EmbeddingModel{Name: BuiltinName, Dim: m.dim, Data: data, CreatedAt: time.Now().UTC()}
	if err := db.PutEmbeddingModel(ctx, idb, row); err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// LearnArchive learns the built-in model from an even sample of at most
// MaxDocs of the archive's papers, without storing it.
func LearnArchive(ctx context.Context, idb bun.IDB, o BuiltinOptions) (*Model, error) {
	papers, err := db.CountPapers(ctx, idb)
	if err != nil {
		return nil, err
	}
	limit := o.maxDocs()
	every := (papers + int64(limit) - 1) / int64(limit)
	sample, err := db.PaperTextSample(ctx, idb, every, limit)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(sample))
	for i, p := range sample {
		texts[i] = PaperText(p.Title, p.Abstract)
	}
	m, err := Learn(ctx, texts, o.Learn)
	if err != nil {
		return nil, err
	}
	m.archive = int(papers)
	return m, nil
}

// Open returns the embedder cfg chooses: a provider when cfg.URL is set,
// else the built-in model, learned first as Builtin says.
func Open(ctx context.Context, idb bun.IDB, cfg Config, o BuiltinOptions) (Embedder, error) {
	if cfg.URL != "" {
		return NewProvider(ctx, cfg)
	}
	m, _, err := Builtin(ctx, idb, o)
	return m, err
}

// Active returns the embedder to embed queries with: the one whose
// vectors were last brought up to date (see Sync), whose Name is the model
// to read the vectors of (db.EachPaperVector, db.PaperVectorsByIDs). The
// built-in model comes from the database; a provider's model needs cfg to
// name the same model and say where its server is. db.ErrNoEmbeddingModel
// when no model's vectors are complete.
func Active(ctx context.Context, idb bun.IDB, cfg Config) (Embedder, error) {
	row, err := db.ActiveEmbeddingModel(ctx, idb)
	if err != nil {
		return nil, err
	}
	if row.Name == BuiltinName {
		return UnmarshalModel(row.Data)
	}
	if cfg.URL == "" || ProviderName(cfg.Model) != row.Name {
		return nil, fmt.Errorf("embed: the archive's vectors are %s's: set --embeddings-url and --embeddings-model to it, "+
			"or run papergraph embed to make the built-in model's", row.Name)
	}
	p, err := NewProvider(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if p.Dim() != row.Dim {
		return nil, fmt.Errorf("embed: %s now makes vectors of %d numbers, the archive's have %d: run papergraph embed",
			row.Name, p.Dim(), row.Dim)
	}
	return p, nil
}

// activate makes model the active one unless it is already: a run with
// nothing to do writes nothing, and waits for no commit.
func activate(ctx context.Context, idb bun.IDB, model string) error {
	row, err := db.ModelGeneration(ctx, idb)
	if err == nil && row.Name == model {
		return nil
	}
	if err != nil && !errors.Is(err, db.ErrNoEmbeddingModel) {
		return err
	}
	return db.ActivateEmbeddingModel(ctx, idb, model)
}

// ensureModel records a provider's model, whose row holds no data; a
// provider whose vectors changed length drops the old ones.
func ensureModel(ctx context.Context, idb bun.IDB, e Embedder) error {
	row, err := db.GetEmbeddingModel(ctx, idb, e.Name())
	if err == nil && row.Dim == e.Dim() {
		return nil
	}
	if _, builtin := e.(*Model); builtin {
		if err != nil {
			return err
		}
		return fmt.Errorf("embed: the stored built-in model is not the one embedding: run papergraph embed --retrain")
	}
	return db.PutEmbeddingModel(ctx, idb, &db.EmbeddingModel{Name: e.Name(), Dim: e.Dim(), CreatedAt: time.Now().UTC()})
}
