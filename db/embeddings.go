package db

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/uptrace/bun"
)

// EmbeddingModel is an embedder whose vectors the archive keeps (table
// embedding_models). Data is the built-in model's vocabulary and word
// vectors (see package embed), empty for a provider's model.
type EmbeddingModel struct {
	bun.BaseModel `bun:"table:embedding_models"`

	Name      string    `bun:"name,pk"`
	Dim       int       `bun:"dim,notnull"`
	Data      []byte    `bun:"data"`
	Active    bool      `bun:"active,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	// Generation is the last of the model's writes of paper vectors (see
	// PutPaperVectors).
	Generation int64 `bun:"generation,notnull"`
}

// PaperEmbedding is a paper's vector under a model (table
// paper_embeddings); TextHash identifies the text it was made from and
// TextRev is the paper's text_rev when that text was read. Generation is
// the write that stored it (PutPaperVectors sets it).
type PaperEmbedding struct {
	bun.BaseModel `bun:"table:paper_embeddings"`

	PaperID    int64  `bun:"paper_id,pk"`
	Model      string `bun:"model,pk"`
	TextHash   int64  `bun:"text_hash,notnull"`
	TextRev    int64  `bun:"text_rev,notnull"`
	Generation int64  `bun:"generation,notnull"`
	Vector     []byte `bun:"vector,notnull"`
}

// ErrNoEmbeddingModel says the archive keeps no model by the name asked
// for, or no active one.
var ErrNoEmbeddingModel = errors.New("no embedding model")

// EncodeVector writes v as little-endian float32s, the form
// paper_embeddings keeps.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector reads a vector EncodeVector wrote.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("db: a stored vector of %d bytes is not float32s", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// GetEmbeddingModel reads the model named name; ErrNoEmbeddingModel when
// there is none.
func GetEmbeddingModel(ctx context.Context, idb bun.IDB, name string) (*EmbeddingModel, error) {
	m := new(EmbeddingModel)
	err := idb.NewSelect().Model(m).Where("name = ?", name).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w named %q", ErrNoEmbeddingModel, name)
	}
	return m, err
}

// ActiveEmbeddingModel reads the model queries are embedded with: the one
// whose vectors were last brought up to date. ErrNoEmbeddingModel when the
// archive has none.
func ActiveEmbeddingModel(ctx context.Context, idb bun.IDB) (*EmbeddingModel, error) {
	m := new(EmbeddingModel)
	err := idb.NewSelect().Model(m).Where("active").Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w is active: run papergraph embed", ErrNoEmbeddingModel)
	}
	return m, err
}

// PutEmbeddingModel writes m, replacing a model of its name but keeping
// whether it is active; replacing a model whose data or dimension differ
// deletes its paper vectors, which the old one made.
func PutEmbeddingModel(ctx context.Context, idb bun.IDB, m *EmbeddingModel) error {
	return idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		old, err := GetEmbeddingModel(ctx, tx, m.Name)
		switch {
		case errors.Is(err, ErrNoEmbeddingModel):
			_, err = tx.NewInsert().Model(m).Exec(ctx)
			return err
		case err != nil:
			return err
		}
		if old.Dim != m.Dim || string(old.Data) != string(m.Data) {
			if _, err := tx.NewDelete().Model((*PaperEmbedding)(nil)).Where("model = ?", m.Name).Exec(ctx); err != nil {
				return err
			}
		}
		_, err = tx.NewUpdate().Model(m).Column("dim", "data", "created_at").WherePK().Exec(ctx)
		return err
	})
}

// ActivateEmbeddingModel makes name the model queries are embedded with.
func ActivateEmbeddingModel(ctx context.Context, idb bun.IDB, name string) error {
	return idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Model((*EmbeddingModel)(nil)).Set("active = ?", false).
			Where("active AND name <> ?", name).Exec(ctx); err != nil {
			return err
		}
		res, err := tx.NewUpdate().Model((*EmbeddingModel)(nil)).Set("active = ?", true).Where("name = ?", name).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w named %q", ErrNoEmbeddingModel, name)
		}
		return nil
	})
}

// PaperText is a paper's text to embed, with the hash of the text its
// stored vector under a model was made from (Stored false: none is).
// TextRev is the paper's text_rev as the text was read.
type PaperText struct {
	ID       int64  `bun:"id"`
	Title    string `bun:"title"`
	Abstract string `bun:"abstract"`
	Hash     int64  `bun:"text_hash"`
	Stored   bool   `bun:"stored"`
	TextRev  int64  `bun:"text_rev"`
}

// PaperTexts returns up to limit papers with an id above after, in id
// order, each with the hash of its vector under model. A run over the
// archive reads it once, in pages, whatever it finds to embed.
func PaperTexts(ctx context.Context, idb bun.IDB, model string, after int64, limit int) ([]PaperText, error) {
	var ps []PaperText
	err := idb.NewSelect().TableExpr("papers AS p").
		ColumnExpr("p.id, p.title, COALESCE(p.abstract, '') AS abstract").
		ColumnExpr("COALESCE(e.text_hash, 0) AS text_hash, e.paper_id IS NOT NULL AS stored").
		Join("LEFT JOIN paper_embeddings AS e ON e.model = ? AND e.paper_id = p.id", model).
		Where("p.id > ?", after).OrderExpr("p.id").Limit(int64(limit)).Scan(ctx, &ps)
	return ps, err
}

// StalePaperIDs returns, in id order, the papers whose vector under
// model is missing or was made from a text that has changed since (its
// text_rev is not the paper's), in one statement that reads two narrow
// indexes and no text: with nothing to embed, a run costs this and no
// more. It is a NOT EXISTS over all three columns of the unique
// paper_embeddings_text_rev, the form in which SQLite's planner reads that
// index alone (a join on the key reads each vector's row).
func StalePaperIDs(ctx context.Context, idb bun.IDB, model string) ([]int64, error) {
	var ids []int64
	current := idb.NewSelect().TableExpr("paper_embeddings AS e").ColumnExpr("1").
		Where("e.model = ? AND e.paper_id = p.id AND e.text_rev = p.text_rev", model)
	err := idb.NewSelect().TableExpr("papers AS p").ColumnExpr("p.id").
		Where("NOT EXISTS (?)", current).OrderExpr("p.id").Scan(ctx, &ids)
	return ids, err
}

// PaperTextsByIDs reads the text of the papers ids, in id order, each
// with the hash of its vector under model, in one statement; papers
// deleted meanwhile are left out.
func PaperTextsByIDs(ctx context.Context, idb bun.IDB, model string, ids []int64) ([]PaperText, error) {
	var ps []PaperText
	if len(ids) == 0 {
		return ps, nil
	}
	b := binding(idb)
	cond, args := in(b, "p.id", ids)
	err := idb.NewSelect().TableExpr("papers AS p").
		ColumnExpr("p.id, p.title, COALESCE(p.abstract, '') AS abstract, p.text_rev").
		ColumnExpr("COALESCE(e.text_hash, 0) AS text_hash, e.paper_id IS NOT NULL AS stored").
		Join("LEFT JOIN paper_embeddings AS e ON e.model = ? AND e.paper_id = p.id", model).
		Where(cond, args...).OrderExpr("p.id").Scan(b.ctx(ctx), &ps)
	return ps, err
}

// SetPaperTextRevs records that the vectors under model of the papers
// revs names (paper id to text_rev) are current at those revs: their
// text changed and changed back, or they were stored before revs were
// counted. One statement per distinct rev, in one transaction.
func SetPaperTextRevs(ctx context.Context, idb bun.IDB, model string, revs map[int64]int64) error {
	if len(revs) == 0 {
		return nil
	}
	byRev := map[int64][]int64{}
	for id, rev := range revs {
		byRev[rev] = append(byRev[rev], id)
	}
	return idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for rev, ids := range byRev {
			b := binding(tx)
			cond, args := in(b, "paper_id", ids)
			if _, err := tx.NewUpdate().Model((*PaperEmbedding)(nil)).Set("text_rev = ?", rev).
				Where("model = ?", model).Where(cond, args...).Exec(b.ctx(ctx)); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutPaperVectors writes the vectors of papers under model, in one
// transaction, replacing those stored, and stamps them with the model's
// next generation, which it returns. Taking the generation first locks
// the model's row, so two writers' generations commit in their order:
// a reader that saw generation g has seen every row stamped g or less.
func PutPaperVectors(ctx context.Context, idb bun.IDB, rows []PaperEmbedding) (gen int64, err error) {
	if len(rows) == 0 {
		return 0, nil
	}
	err = idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewUpdate().Model((*EmbeddingModel)(nil)).Set("generation = generation + 1").
			Where("name = ?", rows[0].Model).Returning("generation").Scan(ctx, &gen); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w named %q", ErrNoEmbeddingModel, rows[0].Model)
			}
			return err
		}
		for i := range rows {
			if rows[i].Model != rows[0].Model {
				return fmt.Errorf("db: one write of paper vectors holds models %q and %q", rows[0].Model, rows[i].Model)
			}
			rows[i].Generation = gen
		}
		_, err := tx.NewInsert().Model(&rows).
			On("CONFLICT (model, paper_id) DO UPDATE").
			Set("text_hash = EXCLUDED.text_hash, text_rev = EXCLUDED.text_rev").
			Set("generation = EXCLUDED.generation, vector = EXCLUDED.vector").Exec(ctx)
		return err
	})
	return gen, err
}

// ModelGeneration reads the name, creation time and generation of the
// active model, in one statement of one row: what a server polls to learn
// that another process wrote vectors or changed the model.
func ModelGeneration(ctx context.Context, idb bun.IDB) (*EmbeddingModel, error) {
	m := new(EmbeddingModel)
	err := idb.NewSelect().Model(m).Column("name", "dim", "created_at", "generation").
		Where("active").Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w is active: run papergraph embed", ErrNoEmbeddingModel)
	}
	return m, err
}

// EachPaperVectorSince calls fn with the vector of every paper under model
// written in a generation after gen, in one statement; an error from fn
// stops the reading and is returned.
func EachPaperVectorSince(ctx context.Context, idb bun.IDB, model string, gen int64, fn func(id int64, v []float32) error) error {
	rows, err := idb.NewSelect().Model((*PaperEmbedding)(nil)).Column("paper_id", "vector").
		Where("model = ?", model).Where("generation > ?", gen).OrderExpr("paper_id").Rows(ctx)
	if err != nil {
		return err
	}
	return scanVectors(rows, fn)
}

// CountPaperVectors counts the papers with a vector under model.
func CountPaperVectors(ctx context.Context, idb bun.IDB, model string) (int64, error) {
	return idb.NewSelect().Model((*PaperEmbedding)(nil)).Where("model = ?", model).Count(ctx)
}

// EachPaperVector calls fn with every paper's vector under model, in
// paper id order, reading them in one statement; an error from fn stops
// the reading and is returned.
func EachPaperVector(ctx context.Context, idb bun.IDB, model string, fn func(id int64, v []float32) error) error {
	rows, err := idb.NewSelect().Model((*PaperEmbedding)(nil)).Column("paper_id", "vector").
		Where("model = ?", model).OrderExpr("paper_id").Rows(ctx)
	if err != nil {
		return err
	}
	return scanVectors(rows, fn)
}

// scanVectors calls fn with each row's paper id and decoded vector, and
// closes rows.
func scanVectors(rows *sql.Rows, fn func(id int64, v []float32) error) error {
	defer rows.Close()
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return err
		}
		v, err := DecodeVector(b)
		if err != nil {
			return err
		}
		if err := fn(id, v); err != nil {
			return err
		}
	}
	return rows.Err()
}

// PaperVectorsByIDs reads the vectors under model of the papers ids, in
// one statement; papers without one are not in the map.
func PaperVectorsByIDs(ctx context.Context, idb bun.IDB, model string, ids []int64) (map[int64][]float32, error) {
	out := make(map[int64][]float32, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []PaperEmbedding
	b := binding(idb)
	cond, args := in(b, "paper_id", ids)
	if err := idb.NewSelect().Model(&rows).Column("paper_id", "vector").
		Where("model = ?", model).Where(cond, args...).Scan(b.ctx(ctx)); err != nil {
		return nil, err
	}
	for _, r := range rows {
		v, err := DecodeVector(r.Vector)
		if err != nil {
			return nil, err
		}
		out[r.PaperID] = v
	}
	return out, nil
}

// PaperTextSample returns the title and abstract of up to limit papers
// whose id is a multiple of every, in id order: an even sample of the
// archive, read in one statement.
func PaperTextSample(ctx context.Context, idb bun.IDB, every int64, limit int) ([]PaperText, error) {
	var ps []PaperText
	err := idb.NewSelect().TableExpr("papers AS p").
		ColumnExpr("p.id, p.title, COALESCE(p.abstract, '') AS abstract").
		Where("p.id % ? = 0", max(every, 1)).OrderExpr("p.id").Limit(int64(limit)).Scan(ctx, &ps)
	return ps, err
}

// CountPapers counts the archive's papers.
func CountPapers(ctx context.Context, idb bun.IDB) (int64, error) {
	var n int64
	err := idb.NewSelect().TableExpr("papers").ColumnExpr("count(*)").Scan(ctx, &n)
	return n, err
}
