package embed

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// SyncOptions shape a Sync.
type SyncOptions struct {
	// Batch is the number of papers embedded and written a transaction
	// (default 512).
	Batch int
	// Progress, when set, hears after each batch written.
	Progress func(SyncProgress)
	// Embedded, when set, hears each paper embedded and its new vector
	// once its batch is written: a server's vector index adds them, so
	// that papers harvested while it serves are found without a restart.
	Embedded func(id int64, v []float32)
}

// SyncProgress is how far a Sync has come.
type SyncProgress struct {
	Model    string
	Scanned  int64 // papers read
	Total    int64 // papers in the archive when the Sync began
	Embedded int64 // papers embedded so far
	Elapsed  time.Duration
}

// SyncSummary is what a Sync did.
type SyncSummary struct {
	Model     string
	Embedded  int64 // papers new or changed, now embedded
	Unchanged int64 // papers whose vector was current
	Elapsed   time.Duration
}

// Sync embeds with e every paper without a vector under e's model or
// whose title or abstract changed since it got one, Batch papers a
// transaction, and then makes e's model the active one. It finds them by
// the papers' text revisions alone (db.StalePaperIDs), reading no text,
// and then reads the text of those papers only; a Sync stopped part way
// keeps the batches written, and the next one embeds only the rest.
func Sync(ctx context.Context, idb bun.IDB, e Embedder, o SyncOptions) (SyncSummary, error) {
	start := time.Now()
	sum := SyncSummary{Model: e.Name()}
	if err := ensureModel(ctx, idb, e); err != nil {
		return sum, err
	}
	total, err := db.CountPapers(ctx, idb)
	if err != nil {
		return sum, err
	}
	stale, err := db.StalePaperIDs(ctx, idb, e.Name())
	if err != nil {
		return sum, err
	}
	batch := o.Batch
	if batch <= 0 {
		batch = 512
	}
	var scanned int64
	for len(stale) > 0 {
		ids := stale[:min(batch, len(stale))]
		stale = stale[len(ids):]
		page, err := db.PaperTextsByIDs(ctx, idb, e.Name(), ids)
		if err != nil {
			return sum, err
		}
		scanned += int64(len(ids))
		n, err := embedPage(ctx, idb, e, page, o.Embedded)
		if err != nil {
			return sum, err
		}
		sum.Embedded += int64(n)
		if o.Progress != nil {
			o.Progress(SyncProgress{Model: e.Name(), Scanned: scanned, Total: scanned + int64(len(stale)),
				Embedded: sum.Embedded, Elapsed: time.Since(start)})
		}
	}
	sum.Unchanged = max(total-sum.Embedded, 0)
	if err := activate(ctx, idb, e.Name()); err != nil {
		return sum, err
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// embedPage embeds the papers of page whose text changed, in one call to
// e, and writes their vectors, which written then hears when not nil; it
// returns how many it embedded. A paper whose text hashes as its vector's
// did (its text changed back) only has its vector's revision brought
// level with it.
func embedPage(ctx context.Context, idb bun.IDB, e Embedder, page []db.PaperText, written func(int64, []float32)) (int, error) {
	var texts []string
	var rows []db.PaperEmbedding
	current := map[int64]int64{}
	for _, p := range page {
		text := PaperText(p.Title, p.Abstract)
		h := TextHash(text)
		if p.Stored && p.Hash == h {
			current[p.ID] = p.TextRev
			continue
		}
		texts = append(texts, text)
		rows = append(rows, db.PaperEmbedding{PaperID: p.ID, Model: e.Name(), TextHash: h, TextRev: p.TextRev})
	}
	if err := db.SetPaperTextRevs(ctx, idb, e.Name(), current); err != nil {
		return 0, err
	}
	if len(texts) == 0 {
		return 0, nil
	}
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		return 0, err
	}
	if len(vs) != len(texts) {
		return 0, fmt.Errorf("embed: %s returned %d vectors for %d texts", e.Name(), len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != e.Dim() {
			return 0, fmt.Errorf("embed: %s returned a vector of %d, not %d, numbers", e.Name(), len(v), e.Dim())
		}
		rows[i].Vector = db.EncodeVector(v)
	}
	if _, err := db.PutPaperVectors(ctx, idb, rows); err != nil {
		return 0, err
	}
	if written != nil {
		for i, v := range vs {
			written(rows[i].PaperID, v)
		}
	}
	return len(rows), nil
}
