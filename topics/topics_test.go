package topics_test

import (
	"context"
	"maps"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/topics"
	"github.com/papergraph/papergraph/vector"
)

// hashed embeds with vector.HashedWords, as a provider would.
type hashed struct{}

func (hashed) Name() string { return "hashed" }
func (hashed) Dim() int     { return 64 }
func (hashed) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = vector.HashedWords(s, 64)
	}
	return out, nil
}

func importAndEmbed(t *testing.T, bdb *bun.DB, f ingest.Format, path string) {
	t.Helper()
	if _, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: f, Paths: []string{path}}); err != nil {
		t.Fatal(err)
	}
	if _, err := embed.Sync(t.Context(), bdb, hashed{}, embed.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
}

func update(t *testing.T, bdb *bun.DB, o topics.Options) topics.Summary {
	t.Helper()
	sum, err := topics.Update(t.Context(), bdb, o)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func filed(t *testing.T, bdb *bun.DB, level int) map[int64]int64 {
	t.Helper()
	m, err := db.TopicAssignments(t.Context(), bdb, level)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUpdate: the first update builds topics of every embedded paper; a
// rebuild of the same data gives the same topics and names; papers
// imported later are filed under the existing topics, leaving the others
// where they were, with the counts kept; a paper deleted leaves its
// topics' counts.
func TestUpdate(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		// The papers of the sample's last quarter come later: their
		// vectors are made only after the topics are built.
		importAndEmbed(t, bdb, ingest.Kaggle, "../demo/data/kaggle-arxiv-sample.jsonl.gz")
		if _, err := bdb.ExecContext(t.Context(), "DELETE FROM paper_embeddings WHERE paper_id > (SELECT MAX(id) - 50 FROM papers)"); err != nil {
			t.Fatal(err)
		}
		first := scalar(t, bdb, "SELECT COUNT(*) FROM paper_embeddings")
		if sum := update(t, bdb, topics.Options{}); !sum.Built || sum.Papers != int(first) || sum.Topics < 2 {
			t.Fatalf("first update = %+v, want topics built from %d papers", sum, first)
		}
		top, sub := filed(t, bdb, 0), filed(t, bdb, 1)
		names := topicNames(t, bdb)
		if len(top) != int(first) {
			t.Errorf("%d papers filed under a broad topic, want %d", len(top), first)
		}

		if sum := update(t, bdb, topics.Options{Rebuild: true}); !sum.Built {
			t.Fatalf("rebuild = %+v, want built", sum)
		}
		if !maps.Equal(top, filed(t, bdb, 0)) || !maps.Equal(sub, filed(t, bdb, 1)) || !maps.Equal(names, topicNames(t, bdb)) {
			t.Error("a rebuild of the same papers gave other topics")
		}

		// Fewer papers than the archive holds: filed, not built afresh.
		if _, err := embed.Sync(t.Context(), bdb, hashed{}, embed.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		added := scalar(t, bdb, "SELECT COUNT(*) FROM paper_embeddings") - first
		if added != 50 {
			t.Fatalf("%d papers embedded later, want 50", added)
		}
		sum := update(t, bdb, topics.Options{})
		if sum.Built || sum.Papers != int(added) {
			t.Errorf("update after the import = %+v, want %d papers filed, nothing built", sum, added)
		}
		after := filed(t, bdb, 0)
		for id, topic := range top {
			if after[id] != topic {
				t.Errorf("paper %d moved from topic %d to %d when others were filed", id, topic, after[id])
			}
		}
		if len(after) != int(first+added) {
			t.Errorf("%d papers filed, want %d", len(after), first+added)
		}
		checkCounts(t, bdb)

		if _, err := bdb.ExecContext(t.Context(), "DELETE FROM papers WHERE id = (SELECT MIN(paper_id) FROM paper_topics)"); err != nil {
			t.Fatal(err)
		}
		if sum := update(t, bdb, topics.Options{}); sum.Built || sum.Papers != 0 {
			t.Errorf("update after a deletion = %+v, want nothing filed", sum)
		}
		checkCounts(t, bdb)
	})
}

func topicNames(t *testing.T, bdb *bun.DB) map[int64]string {
	t.Helper()
	var rows []db.Topic
	if err := bdb.NewSelect().Model(&rows).Column("id", "name").Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for _, r := range rows {
		if r.Name == "" {
			t.Errorf("topic %d has no name", r.ID)
		}
		out[r.ID] = r.Name
	}
	return out
}

func scalar(t *testing.T, bdb *bun.DB, q string) int64 {
	t.Helper()
	var n int64
	if err := bdb.NewRaw(q).Scan(t.Context(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// checkCounts checks every topic's paper_count against its papers.
func checkCounts(t *testing.T, bdb *bun.DB) {
	t.Helper()
	if n := scalar(t, bdb, `SELECT COUNT(*) FROM topics AS t WHERE t.paper_count <>
		(SELECT COUNT(*) FROM paper_topics AS pt WHERE pt.topic_id = t.id)`); n != 0 {
		t.Errorf("%d topics whose paper_count is not their papers'", n)
	}
}
