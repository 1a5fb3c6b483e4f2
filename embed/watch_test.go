package embed_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/vector"
)

// syncAll learns the built-in model as o says and embeds every paper.
func syncAll(t *testing.T, bdb *bun.DB, o embed.BuiltinOptions) *embed.Model {
	t.Helper()
	ctx := context.Background()
	m, _, err := embed.Builtin(ctx, bdb, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := embed.Sync(ctx, bdb, m, embed.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWatcherSeesAnotherProcesssVectors: a server's index (one database
// handle) finds, after a Refresh, the papers another process (another
// handle on the same database) imported and embedded, and, after the
// other process learned the model again, answers queries by the new
// model; a Refresh with nothing new reads one row in one statement.
func TestWatcherSeesAnotherProcesssVectors(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, server *bun.DB) {
		ctx := context.Background()
		other := dbtest.Open(t, dsn)
		ps := corpus(160, 11)
		importPapers(t, other, ps[:120])
		syncAll(t, other, smallModel)
		w := embed.NewWatcher(ctx, server, embed.Config{})
		if err := w.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		live := w.Live()
		byArxiv := arxivIDs(t, other)
		if got, _ := live.Vectors([]int64{byArxiv[ps[0].ID]}); len(got) != 1 {
			t.Fatalf("the built index lacks the first paper")
		}
		importPapers(t, other, ps[120:])
		m := syncAll(t, other, smallModel)
		byArxiv = arxivIDs(t, other)
		var added []int64
		for _, p := range ps[120:] {
			added = append(added, byArxiv[p.ID])
		}
		if got, _ := live.Vectors(added); len(got) != 0 {
			t.Fatalf("before a Refresh the index has %d of the new papers, want none", len(got))
		}
		if err := w.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := live.Vectors(added); len(got) != len(added) {
			t.Errorf("after a Refresh the index has %d of the %d new papers", len(got), len(added))
		}
		findsItself(t, live.SearchText, ps[150], byArxiv[ps[150].ID])
		log := &dbtest.Log{}
		server.AddQueryHook(log)
		if err := w.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if sqls := log.Take(); len(sqls) != 1 {
			t.Errorf("a Refresh with nothing new sent %q, want one statement", sqls)
		}
		retrained := syncAll(t, other, embed.BuiltinOptions{Retrain: true, Learn: embed.LearnOptions{Dim: 16}})
		if retrained.Dim() == m.Dim() {
			t.Fatalf("the model learned again has %d dimensions, as the first", retrained.Dim())
		}
		if err := w.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		v, ok := mustVector(t, live.Vectors, byArxiv[ps[3].ID])
		if !ok || len(v) != 16 {
			t.Fatalf("after the model was learned again the index holds a vector of %d numbers, want 16", len(v))
		}
		findsItself(t, live.SearchText, ps[3], byArxiv[ps[3].ID])
	})
}

// mustVector is the indexed vector of paper id.
func mustVector(t *testing.T, vectors func([]int64) (map[int64][]float32, error), id int64) ([]float32, bool) {
	t.Helper()
	got, err := vectors([]int64{id})
	if err != nil {
		t.Fatal(err)
	}
	v, ok := got[id]
	return v, ok
}

// findsItself: a search for p's own text ranks p (paper id) among the
// first three.
func findsItself(t *testing.T, search func(context.Context, string, int) ([]vector.Hit, error), p corpusPaper, id int64) {
	t.Helper()
	hits, err := search(context.Background(), embed.PaperText(p.Title, p.Abstract), 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.ID == id {
			return
		}
	}
	t.Errorf("a search for paper %d's text found %v, not it", id, hits)
}

// TestWatcherWaitsForAModel: on an archive with no embeddings the index
// is empty and a Refresh does nothing; once another process embeds, a
// Refresh builds it.
func TestWatcherWaitsForAModel(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, server *bun.DB) {
		ctx := context.Background()
		w := embed.NewWatcher(ctx, server, embed.Config{})
		if err := w.Refresh(ctx); err != nil || w.Live().Ready() {
			t.Fatalf("Refresh with no model = %v, ready %v; want nil, not ready", err, w.Live().Ready())
		}
		other := dbtest.Open(t, dsn)
		importPapers(t, other, corpus(120, 12))
		syncAll(t, other, smallModel)
		if err := w.Refresh(ctx); err != nil || !w.Live().Ready() {
			t.Fatalf("Refresh after the embedding = %v, ready %v; want nil, ready", err, w.Live().Ready())
		}
		if n, _ := db.CountPaperVectors(ctx, server, embed.BuiltinName); n != 120 {
			t.Errorf("%d vectors, want 120", n)
		}
	})
}
