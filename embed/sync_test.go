package embed_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/ingest"
)

func importPapers(t *testing.T, bdb *bun.DB, ps []corpusPaper) {
	t.Helper()
	sum, err := ingest.Import(context.Background(), bdb, ingest.Options{Format: ingest.Kaggle, Paths: []string{writeKaggle(t, ps)}})
	if err != nil || sum.Bad > 0 {
		t.Fatalf("import: %v (%d malformed)", err, sum.Bad)
	}
}

// vectors reads every paper's vector under model.
func vectors(t *testing.T, bdb *bun.DB, model string) map[int64][]float32 {
	t.Helper()
	out := map[int64][]float32{}
	err := db.EachPaperVector(context.Background(), bdb, model, func(id int64, v []float32) error {
		out[id] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var smallModel = embed.BuiltinOptions{Learn: embed.LearnOptions{Dim: 24}}

// TestSyncEmbedsEveryPaper: after an import and a sync every paper has a
// unit vector under the built-in model, which is active; the vector
// readers agree; a second sync embeds nothing.
func TestSyncEmbedsEveryPaper(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		if _, err := embed.Active(ctx, bdb, embed.Config{}); !errors.Is(err, db.ErrNoEmbeddingModel) {
			t.Errorf("Active before any sync = %v, want ErrNoEmbeddingModel", err)
		}
		importPapers(t, bdb, corpus(200, 3))
		m, learned, err := embed.Builtin(ctx, bdb, smallModel)
		if err != nil || !learned {
			t.Fatalf("Builtin = %v, learned %v", err, learned)
		}
		sum, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{Batch: 64})
		if err != nil || sum.Embedded != 200 || sum.Unchanged != 0 {
			t.Fatalf("Sync = %+v, %v; want 200 embedded", sum, err)
		}
		got := vectors(t, bdb, embed.BuiltinName)
		if len(got) != 200 {
			t.Fatalf("%d vectors, want 200", len(got))
		}
		var ids []int64
		for id, v := range got {
			if n := dot(v, v); len(v) != 24 || math.Abs(n-1) > 1e-4 {
				t.Fatalf("paper %d: vector of %d numbers, squared norm %.4f", id, len(v), n)
			}
			ids = append(ids, id)
		}
		some := append(ids[:3:3], -1)
		byID, err := db.PaperVectorsByIDs(ctx, bdb, embed.BuiltinName, some)
		if err != nil || len(byID) != 3 {
			t.Fatalf("PaperVectorsByIDs(%v) = %d vectors, %v; want 3", some, len(byID), err)
		}
		for _, id := range some[:3] {
			if !slices.Equal(byID[id], got[id]) {
				t.Errorf("paper %d: PaperVectorsByIDs and EachPaperVector differ", id)
			}
		}
		active, err := embed.Active(ctx, bdb, embed.Config{})
		if err != nil || active.Name() != embed.BuiltinName || active.Dim() != 24 {
			t.Fatalf("Active = %v, %v", active, err)
		}
		again, _, err := embed.Builtin(ctx, bdb, smallModel)
		if err != nil {
			t.Fatal(err)
		}
		sum, err = embed.Sync(ctx, bdb, again, embed.SyncOptions{})
		if err != nil || sum.Embedded != 0 || sum.Unchanged != 200 {
			t.Errorf("second Sync = %+v, %v; want 200 unchanged", sum, err)
		}
	})
}

// failing embeds as e does until it has embedded after texts, then fails
// as a crash would stop a run.
type failing struct {
	embed.Embedder
	after int
}

var errCrash = errors.New("crash")

func (f *failing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.after < len(texts) {
		return nil, errCrash
	}
	f.after -= len(texts)
	return f.Embedder.Embed(ctx, texts)
}

// TestSyncResumes: a sync stopped part way keeps what it wrote; the next
// embeds only the rest and ends with the vectors of an uninterrupted
// run.
func TestSyncResumes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		ps := corpus(150, 4)
		importPapers(t, bdb, ps)
		m, _, err := embed.Builtin(ctx, bdb, smallModel)
		if err != nil {
			t.Fatal(err)
		}
		_, err = embed.Sync(ctx, bdb, &failing{Embedder: m, after: 100}, embed.SyncOptions{Batch: 50})
		if !errors.Is(err, errCrash) {
			t.Fatalf("interrupted Sync = %v, want the crash", err)
		}
		if n, _ := db.CountPaperVectors(ctx, bdb, embed.BuiltinName); n != 100 {
			t.Fatalf("%d vectors after the crash, want the 100 of two batches", n)
		}
		if _, err := embed.Active(ctx, bdb, embed.Config{}); !errors.Is(err, db.ErrNoEmbeddingModel) {
			t.Errorf("Active after an unfinished sync = %v, want ErrNoEmbeddingModel", err)
		}
		sum, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{Batch: 50})
		if err != nil || sum.Embedded != 50 || sum.Unchanged != 100 {
			t.Fatalf("resumed Sync = %+v, %v; want 50 embedded, 100 unchanged", sum, err)
		}
		got := vectors(t, bdb, embed.BuiltinName)
		want, err := m.Embed(ctx, texts(ps))
		if err != nil {
			t.Fatal(err)
		}
		byArxiv := arxivIDs(t, bdb)
		for i, p := range ps {
			if !slices.Equal(got[byArxiv[p.ID]], want[i]) {
				t.Errorf("paper %s: stored vector is not the model's", p.ID)
			}
		}
	})
}

// TestSyncReembedsChangedPapers: a paper whose abstract an import changed
// is embedded again, and no other.
func TestSyncReembedsChangedPapers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		ps := corpus(120, 5)
		importPapers(t, bdb, ps)
		m, _, err := embed.Builtin(ctx, bdb, smallModel)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		before := vectors(t, bdb, embed.BuiltinName)
		changed := ps[7]
		changed.Abstract, changed.Revised = corpus(8, 99)[2].Abstract, true // another topic's words
		importPapers(t, bdb, []corpusPaper{changed})
		sum, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{})
		if err != nil || sum.Embedded != 1 || sum.Unchanged != 119 {
			t.Fatalf("Sync after the change = %+v, %v; want 1 embedded, 119 unchanged", sum, err)
		}
		after := vectors(t, bdb, embed.BuiltinName)
		id := arxivIDs(t, bdb)[changed.ID]
		for pid, v := range after {
			if same := slices.Equal(v, before[pid]); same == (pid == id) {
				t.Errorf("paper %d: vector changed %v, want changed only for the changed paper %d", pid, !same, id)
			}
		}
	})
}

// arxivIDs maps the papers' arXiv ids to their ids.
func arxivIDs(t *testing.T, bdb *bun.DB) map[string]int64 {
	t.Helper()
	var rows []struct {
		ID      int64  `bun:"id"`
		ArxivID string `bun:"arxiv_id"`
	}
	if err := bdb.NewSelect().TableExpr("papers").Column("id", "arxiv_id").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.ArxivID] = r.ID
	}
	return out
}

// TestBuiltinRelearnsAfterTheArchiveDoubles: a model learned from a whole
// small archive is learned again once the archive has doubled, and the
// papers embedded again with it; a model learned from a sample is kept.
func TestBuiltinRelearnsAfterTheArchiveDoubles(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		ps := corpus(300, 8)
		importPapers(t, bdb, ps[:100])
		whole := embed.BuiltinOptions{MaxDocs: 1000, Learn: embed.LearnOptions{Dim: 16}}
		sampled := embed.BuiltinOptions{MaxDocs: 40, Learn: embed.LearnOptions{Dim: 16}}
		learns := func(o embed.BuiltinOptions, want bool) *embed.Model {
			t.Helper()
			m, learned, err := embed.Builtin(ctx, bdb, o)
			if err != nil || learned != want {
				t.Fatalf("Builtin = learned %v, %v; want learned %v", learned, err, want)
			}
			return m
		}
		m := learns(whole, true)
		if _, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		learns(whole, false)
		importPapers(t, bdb, ps[100:190]) // 190 papers: not yet doubled
		learns(whole, false)
		importPapers(t, bdb, ps[190:])
		m = learns(whole, true)
		if m.Docs() != 300 {
			t.Errorf("relearned from %d papers, want 300", m.Docs())
		}
		sum, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{})
		if err != nil || sum.Embedded != 300 {
			t.Errorf("Sync after relearning = %+v, %v; want every paper embedded again", sum, err)
		}
		m = learns(embed.BuiltinOptions{Retrain: true, MaxDocs: 40, Learn: embed.LearnOptions{Dim: 16}}, true)
		if m.Docs() > 40 {
			t.Errorf("learned from %d papers, want a sample of at most 40", m.Docs())
		}
		importPapers(t, bdb, corpus(700, 9)[300:])
		learns(sampled, false)
	})
}

// generations reads the generation each paper's vector under model was
// written in.
func generations(t *testing.T, bdb *bun.DB, model string) map[int64]int64 {
	t.Helper()
	var rows []db.PaperEmbedding
	if err := bdb.NewSelect().Model(&rows).Column("paper_id", "generation").Where("model = ?", model).
		Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := map[int64]int64{}
	for _, r := range rows {
		out[r.PaperID] = r.Generation
	}
	return out
}

// readsText lists the statements of sqls that read a paper's title or
// abstract, and those that write.
func readsText(sqls []string) (reads, writes []string) {
	for _, s := range sqls {
		if strings.Contains(s, `"title"`) || strings.Contains(s, ".title") || strings.Contains(s, "abstract") {
			reads = append(reads, s)
		}
		if strings.HasPrefix(s, "INSERT") || strings.HasPrefix(s, "UPDATE") || strings.HasPrefix(s, "DELETE") {
			writes = append(writes, s)
		}
	}
	return reads, writes
}

// TestSyncWithNothingChangedReadsNoText: a sync after a sync reads no
// paper's text and writes nothing; an abstract changed by any writer (a
// plain UPDATE here) is embedded again, that paper's text alone read and
// its vector alone written; a text set to what it was, or changed and
// changed back, embeds nothing.
func TestSyncWithNothingChangedReadsNoText(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		importPapers(t, bdb, corpus(120, 6))
		m, _, err := embed.Builtin(ctx, bdb, smallModel)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		before := generations(t, bdb, embed.BuiltinName)
		log := &dbtest.Log{}
		bdb.AddQueryHook(log)
		sum, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{})
		if err != nil || sum.Embedded != 0 || sum.Unchanged != 120 {
			t.Fatalf("second Sync = %+v, %v; want 120 unchanged", sum, err)
		}
		if reads, writes := readsText(log.Take()); len(reads)+len(writes) > 0 {
			t.Errorf("a sync with nothing to do read text in %q and wrote in %q", reads, writes)
		}
		var id int64
		if err := bdb.NewSelect().TableExpr("papers").ColumnExpr("min(id)").Scan(ctx, &id); err != nil {
			t.Fatal(err)
		}
		if _, err := bdb.NewUpdate().Table("papers").Set("abstract = ?", corpus(8, 99)[2].Abstract).
			Where("id = ?", id).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		log.Take()
		sum, err = embed.Sync(ctx, bdb, m, embed.SyncOptions{})
		if err != nil || sum.Embedded != 1 || sum.Unchanged != 119 {
			t.Fatalf("Sync after the change = %+v, %v; want 1 embedded, 119 unchanged", sum, err)
		}
		reads, writes := readsText(log.TakeBound())
		if len(reads) != 1 || !strings.HasSuffix(reads[0], fmt.Sprintf(" -- [[%d]]", id)) || len(writes) != 2 {
			t.Errorf("the sync read text in %q and wrote in %q; want paper %d's text read, its generation taken and its vector written",
				reads, writes, id)
		}
		for pid, g := range generations(t, bdb, embed.BuiltinName) {
			if rewritten := g != before[pid]; rewritten != (pid == id) {
				t.Errorf("paper %d: vector rewritten %v, want rewritten only for the changed paper %d", pid, rewritten, id)
			}
		}
		stillSame(t, bdb, m, id)
	})
}

// stillSame: setting paper id's title to itself leaves nothing to embed;
// changing it and changing it back, and vectors stored before revisions
// were counted, are checked by their text's hash once, embedded again
// none, and then left alone.
func stillSame(t *testing.T, bdb *bun.DB, m embed.Embedder, id int64) {
	t.Helper()
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := bdb.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec("UPDATE papers SET title = title WHERE id = ?", id)
	if stale, err := db.StalePaperIDs(ctx, bdb, embed.BuiltinName); err != nil || len(stale) != 0 {
		t.Errorf("after setting a title to itself, stale papers %v, %v; want none", stale, err)
	}
	exec("UPDATE papers SET title = 'Something else' WHERE id = ?", id+1)
	exec("UPDATE papers SET title = (SELECT title FROM papers WHERE id = ?) WHERE id = ?", id+2, id+1)
	exec("UPDATE papers SET title = title || ' ' WHERE id = ?", id+1)
	exec("UPDATE papers SET title = rtrim(title) WHERE id = ?", id+1)
	exec("UPDATE paper_embeddings SET text_rev = -1 WHERE paper_id = ?", id+3)
	stale, err := db.StalePaperIDs(ctx, bdb, embed.BuiltinName)
	if err != nil || len(stale) != 2 {
		t.Errorf("stale papers %v, %v; want the two whose revisions moved", stale, err)
	}
	sum, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{})
	if err != nil || sum.Embedded != 1 {
		t.Errorf("Sync = %+v, %v; want the paper whose title changed embedded, no other", sum, err)
	}
	if stale, err := db.StalePaperIDs(ctx, bdb, embed.BuiltinName); err != nil || len(stale) != 0 {
		t.Errorf("after the sync, stale papers %v, %v; want none", stale, err)
	}
}
