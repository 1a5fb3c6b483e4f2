package topics_test

import (
	"cmp"
	"context"
	"maps"
	"slices"
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

// checkCounts checks every topic's paper_count against its papers, and
// its researchers against their papers there.
func checkCounts(t *testing.T, bdb *bun.DB) {
	t.Helper()
	if n := scalar(t, bdb, `SELECT COUNT(*) FROM topics AS t WHERE t.paper_count <>
		(SELECT COUNT(*) FROM paper_topics AS pt WHERE pt.topic_id = t.id)`); n != 0 {
		t.Errorf("%d topics whose paper_count is not their papers'", n)
	}
	got, want := topicResearchers(t, bdb), countedResearchers(t, bdb)
	if len(got) == 0 || !slices.Equal(got, want) {
		t.Errorf("%d rows of topic_researchers, %d counted from the topics' papers, or they differ", len(got), len(want))
	}
}

// topicResearcher is a row of topic_researchers.
type topicResearcher struct {
	TopicID, Rank, ResearcherID, PaperCount int64
}

// topicResearchers reads topic_researchers in topic and rank order.
func topicResearchers(t *testing.T, bdb *bun.DB) []topicResearcher {
	t.Helper()
	var rows []topicResearcher
	if err := bdb.NewSelect().TableExpr("topic_researchers").Column("topic_id", "rank", "researcher_id", "paper_count").
		OrderExpr("topic_id, rank").Scan(t.Context(), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// countedResearchers is what topic_researchers should hold, counted here
// from the papers filed under each topic: per topic, the researchers with
// most papers there (bylines of more than 100 authors aside), most first
// and the lower id among equals, at most db.MaxTopicResearchers.
func countedResearchers(t *testing.T, bdb *bun.DB) []topicResearcher {
	t.Helper()
	var counts []topicResearcher
	if err := bdb.NewRaw(`SELECT pt.topic_id, a.researcher_id, COUNT(DISTINCT a.paper_id) AS paper_count
		FROM paper_topics AS pt JOIN papers AS p ON p.id = pt.paper_id AND p.author_count <= 100
		JOIN authorships AS a ON a.paper_id = pt.paper_id WHERE a.researcher_id IS NOT NULL
		GROUP BY pt.topic_id, a.researcher_id`).Scan(t.Context(), &counts); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(counts, func(a, b topicResearcher) int {
		return cmp.Or(cmp.Compare(a.TopicID, b.TopicID), cmp.Compare(b.PaperCount, a.PaperCount), cmp.Compare(a.ResearcherID, b.ResearcherID))
	})
	var out []topicResearcher
	for i, c := range counts {
		if i == 0 || c.TopicID != counts[i-1].TopicID {
			c.Rank = 1
		} else {
			c.Rank = counts[i-1].Rank + 1
		}
		counts[i] = c
		if c.Rank <= db.MaxTopicResearchers {
			out = append(out, c)
		}
	}
	return out
}

// TestResearchersKeptCurrent: a topic's researchers follow its papers'
// bylines. After two researchers are merged into one, the update that
// files nothing leaves topic_researchers as a full rebuild of the same
// papers writes it.
func TestResearchersKeptCurrent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importAndEmbed(t, bdb, ingest.Kaggle, "../demo/data/kaggle-arxiv-sample.jsonl.gz")
		update(t, bdb, topics.Options{})
		before := topicResearchers(t, bdb)
		// The two researchers with most papers in the topics become one.
		var ids []int64
		if err := bdb.NewRaw(`SELECT researcher_id FROM topic_researchers GROUP BY researcher_id
			ORDER BY SUM(paper_count) DESC, researcher_id LIMIT 2`).Scan(t.Context(), &ids); err != nil || len(ids) != 2 {
			t.Fatalf("the two researchers with most papers: %v, %v", ids, err)
		}
		if _, err := bdb.NewUpdate().Table("authorships").Set("researcher_id = ?", ids[0]).
			Where("researcher_id = ?", ids[1]).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		if sum := update(t, bdb, topics.Options{}); sum.Built || sum.Papers != 0 {
			t.Fatalf("update after the merge = %+v, want nothing filed", sum)
		}
		incremental := topicResearchers(t, bdb)
		if slices.Equal(before, incremental) {
			t.Error("the topics' researchers did not change when two merged")
		}
		update(t, bdb, topics.Options{Rebuild: true})
		if full := topicResearchers(t, bdb); !slices.Equal(incremental, full) {
			t.Errorf("after the merge an update gave %d rows of topic_researchers, a rebuild %d, or they differ", len(incremental), len(full))
		}
		checkCounts(t, bdb)
	})
}

// TestMigrationCountsResearchers: an archive whose topics were built
// before topic_researchers existed has them counted by the migration
// that makes the table, as a build counts them.
func TestMigrationCountsResearchers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importAndEmbed(t, bdb, ingest.Kaggle, "../demo/data/kaggle-arxiv-sample.jsonl.gz")
		update(t, bdb, topics.Options{})
		built := topicResearchers(t, bdb)
		for _, q := range []string{"DROP TABLE topic_researchers", "DELETE FROM bun_migrations WHERE name = '0029_topic_researchers'"} {
			if _, err := bdb.ExecContext(t.Context(), q); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Migrate(t.Context(), bdb); err != nil {
			t.Fatal(err)
		}
		if migrated := topicResearchers(t, bdb); len(built) == 0 || !slices.Equal(built, migrated) {
			t.Errorf("the build counted %d rows of topic_researchers, the migration %d, or they differ", len(built), len(migrated))
		}
	})
}
