package db

import (
	"context"
	"database/sql"
	"errors"
	"iter"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// Topic is a group of papers found from their embeddings (table topics,
// see package topics): level 0 a broad topic, level 1 a topic within
// its ParentID. Centroid, the mean of its papers' vectors under Model,
// is read only by the filing of new papers.
type Topic struct {
	bun.BaseModel `bun:"table:topics"`

	ID         int64  `bun:"id,pk"`
	ParentID   int64  `bun:"parent_id,nullzero"`
	Level      int    `bun:"level,notnull"`
	Name       string `bun:"name,notnull"`
	PaperCount int    `bun:"paper_count,notnull"`
	Model      string `bun:"model,notnull"`
	Centroid   []byte `bun:"centroid,notnull"`
}

// PaperTopic files a paper under a topic of a level (table
// paper_topics); TextHash is that of the vector it was filed by.
type PaperTopic struct {
	PaperID  int64
	TopicID  int64
	Level    int
	TextHash int64
}

// TopicBuild records the last build of the topics (table topic_builds).
type TopicBuild struct {
	bun.BaseModel `bun:"table:topic_builds"`

	Model   string    `bun:"model,pk"`
	Papers  int64     `bun:"papers,notnull"`
	BuiltAt time.Time `bun:"built_at,notnull"`
}

// topicColumns are a topic's columns but its centroid, which no page
// shows.
const topicColumns = "t.id, t.parent_id, t.level, t.name, t.paper_count, t.model"

// SaveTopics replaces the archive's topics and their papers with topics
// and filed, counts the topics' researchers, and records the build, in
// one transaction. filed is read once, as it is written: a build of the
// whole archive need not hold every paper's rows.
func SaveTopics(ctx context.Context, idb bun.IDB, b *TopicBuild, topics []Topic, filed iter.Seq[PaperTopic]) error {
	return idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, q := range []string{"DELETE FROM topic_researchers", "DELETE FROM paper_topics", "DELETE FROM topics WHERE parent_id IS NOT NULL",
			"DELETE FROM topics", "DELETE FROM topic_builds"} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		if len(topics) > 0 {
			if _, err := tx.NewInsert().Model(&topics).Exec(ctx); err != nil {
				return err
			}
		}
		if err := insertFiled(ctx, tx, filed); err != nil {
			return err
		}
		if err := countTopicResearchers(ctx, tx); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(b).Exec(ctx)
		return err
	})
}

// filedChunk is how many rows of paper_topics insertFiled writes a
// statement batch: its memory, not the archive's size, bounds a build's.
const filedChunk = 20000

func insertFiled(ctx context.Context, tx bun.Tx, filed iter.Seq[PaperTopic]) error {
	var papers, topics, levels, hashes []int64
	flush := func() error {
		err := InsertColumns(ctx, tx, "paper_topics", []string{"paper_id", "topic_id", "level", "text_hash"}, papers, topics, levels, hashes)
		papers, topics, levels, hashes = papers[:0], topics[:0], levels[:0], hashes[:0]
		return err
	}
	for f := range filed {
		papers, topics, levels, hashes = append(papers, f.PaperID), append(topics, f.TopicID), append(levels, int64(f.Level)), append(hashes, f.TextHash)
		if len(papers) == filedChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// GetTopicBuild reads the record of the last build of the topics, nil
// when there was none.
func GetTopicBuild(ctx context.Context, idb bun.IDB) (*TopicBuild, error) {
	b := new(TopicBuild)
	err := idb.NewSelect().Model(b).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return b, err
}

// TopicCentroids reads every topic with its centroid, in id order.
func TopicCentroids(ctx context.Context, idb bun.IDB) ([]Topic, error) {
	var ts []Topic
	err := idb.NewSelect().Model(&ts).Order("id").Scan(ctx)
	return ts, err
}

// EachVectorToFile calls fn with the vector under model of every paper
// that is not filed under a topic, or was filed by another vector (its
// text changed since), in paper id order, reading them in one statement;
// all, filed or not, when all is set. An error from fn stops the reading
// and is returned.
func EachVectorToFile(ctx context.Context, idb bun.IDB, model string, all bool, fn func(id, hash int64, v []float32) error) error {
	q := idb.NewSelect().TableExpr("paper_embeddings AS e").ColumnExpr("e.paper_id, e.text_hash, e.vector").
		Where("e.model = ?", model).OrderExpr("e.paper_id")
	if !all {
		q = q.Join("LEFT JOIN paper_topics AS pt ON pt.paper_id = e.paper_id AND pt.level = 0").
			Where("pt.paper_id IS NULL OR pt.text_hash <> e.text_hash")
	}
	rows, err := q.Rows(ctx)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, hash int64
		var b []byte
		if err := rows.Scan(&id, &hash, &b); err != nil {
			return err
		}
		v, err := DecodeVector(b)
		if err != nil {
			return err
		}
		if err := fn(id, hash, v); err != nil {
			return err
		}
	}
	return rows.Err()
}

// FilePapers files papers under topics, replacing where they were filed,
// and counts the topics' papers and researchers again, in one
// transaction.
func FilePapers(ctx context.Context, idb bun.IDB, filed []PaperTopic) error {
	return idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ids := make([]int64, 0, len(filed))
		for _, f := range filed {
			if len(ids) == 0 || ids[len(ids)-1] != f.PaperID {
				ids = append(ids, f.PaperID)
			}
		}
		for lo := 0; lo < len(ids); lo += 1000 {
			b := binding(tx)
			cond, args := in(b, "paper_id", ids[lo:min(lo+1000, len(ids))])
			if _, err := tx.NewDelete().TableExpr("paper_topics").Where(cond, args...).Exec(b.ctx(ctx)); err != nil {
				return err
			}
		}
		if err := insertFiled(ctx, tx, slices.Values(filed)); err != nil {
			return err
		}
		return recountTopics(ctx, tx)
	})
}

// RecountTopics counts the papers and researchers of every topic again:
// after papers were deleted or their bylines changed, say.
func RecountTopics(ctx context.Context, idb bun.IDB) error {
	return idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return recountTopics(ctx, tx) })
}

func recountTopics(ctx context.Context, tx bun.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE topics SET paper_count =
		(SELECT COUNT(*) FROM paper_topics AS pt WHERE pt.topic_id = topics.id)`)
	if err != nil {
		return err
	}
	return countTopicResearchers(ctx, tx)
}

// maxTopicByline is the longest byline whose authors count towards a
// topic's researchers, as a collaboration's thousands of names would
// fill every list.
const maxTopicByline = 100

// countTopicResearchers writes topic_researchers afresh from the papers
// filed under the topics: for each, the MaxTopicResearchers researchers
// with most papers there. Every topic is counted, not only those that
// gained or lost papers: a filing of a day's papers reaches nearly every
// broad topic, whose papers are all the archive's, and a byline can
// change (researchers merged) without any paper being filed again.
func countTopicResearchers(ctx context.Context, tx bun.Tx) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM topic_researchers"); err != nil {
		return err
	}
	counted := tx.NewSelect().TableExpr("paper_topics AS pt").
		ColumnExpr("pt.topic_id, a.researcher_id, COUNT(DISTINCT a.paper_id) AS n").
		Join("JOIN papers AS p ON p.id = pt.paper_id AND p.author_count <= ?", maxTopicByline).
		Join("JOIN authorships AS a ON a.paper_id = pt.paper_id").
		Where("a.researcher_id IS NOT NULL").GroupExpr("pt.topic_id, a.researcher_id")
	ranked := tx.NewSelect().TableExpr("(?) AS c", counted).
		ColumnExpr("c.topic_id, c.researcher_id, c.n").
		ColumnExpr("ROW_NUMBER() OVER (PARTITION BY c.topic_id ORDER BY c.n DESC, c.researcher_id) AS rank")
	top := tx.NewSelect().TableExpr("(?) AS x", ranked).
		ColumnExpr("x.topic_id, x.rank, x.researcher_id, x.n").Where("x.rank <= ?", MaxTopicResearchers)
	_, err := tx.NewRaw("INSERT INTO topic_researchers (topic_id, rank, researcher_id, paper_count) ?", top).Exec(ctx)
	return err
}

// TopicAssignments reads the topic each paper is filed under at level,
// by paper id.
func TopicAssignments(ctx context.Context, idb bun.IDB, level int) (map[int64]int64, error) {
	var rows []struct {
		PaperID int64 `bun:"paper_id"`
		TopicID int64 `bun:"topic_id"`
	}
	if err := idb.NewSelect().TableExpr("paper_topics").Column("paper_id", "topic_id").
		Where("level = ?", level).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		out[r.PaperID] = r.TopicID
	}
	return out, nil
}

// TopicsByIDs reads topics by id; unknown ids are absent.
func TopicsByIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64]*Topic, error) {
	var rows []*Topic
	b := binding(idb)
	cond, args := in(b, "t.id", ids)
	if err := idb.NewSelect().TableExpr("topics AS t").ColumnExpr(topicColumns).Where(cond, args...).
		Scan(b.ctx(ctx), &rows); err != nil {
		return nil, err
	}
	return keyBy(rows, func(t *Topic) int64 { return t.ID }), nil
}

// TopicsByPaperIDs reads the topics papers are filed under, the broadest
// first.
func TopicsByPaperIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64][]*Topic, error) {
	var rows []withParent[Topic]
	b := binding(idb)
	cond, args := in(b, "pt.paper_id", ids)
	err := idb.NewSelect().TableExpr("paper_topics AS pt").ColumnExpr("pt.paper_id AS parent, "+topicColumns).
		Join("JOIN topics AS t ON t.id = pt.topic_id").Where(cond, args...).
		OrderExpr("pt.paper_id, pt.level").Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupByParent(rows), nil
}

// TopicChildrenByTopicIDs reads the topics within topics, in id order
// (the largest first, as a build numbers them).
func TopicChildrenByTopicIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64][]*Topic, error) {
	var rows []withParent[Topic]
	b := binding(idb)
	cond, args := in(b, "t.parent_id", ids)
	err := idb.NewSelect().TableExpr("topics AS t").ColumnExpr("t.parent_id AS parent, "+topicColumns).
		Where(cond, args...).OrderExpr("t.parent_id, t.id").Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupByParent(rows), nil
}

// TopicCount is a topic with how many of a researcher's papers are
// filed under it.
type TopicCount struct {
	ResearcherID int64 `bun:"researcher_id"`
	Count        int   `bun:"n"`
	Topic
}

// MaxResearcherTopics is the most topics TopicsByResearcherIDs reads of
// a researcher.
const MaxResearcherTopics = 50

// TopicsByResearcherIDs reads the topics of researchers' papers, those
// with most of their papers first (the broader of two with as many
// first), at most MaxResearcherTopics each.
func TopicsByResearcherIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64][]TopicCount, error) {
	var rows []TopicCount
	b := binding(idb)
	cond, args := in(b, "a.researcher_id", ids)
	counted := idb.NewSelect().TableExpr("authorships AS a").
		ColumnExpr("a.researcher_id, pt.topic_id, COUNT(DISTINCT a.paper_id) AS n").
		Join("JOIN paper_topics AS pt ON pt.paper_id = a.paper_id").
		Where(cond, args...).GroupExpr("a.researcher_id, pt.topic_id")
	ranked := idb.NewSelect().TableExpr("(?) AS c", counted).
		ColumnExpr("c.researcher_id, c.topic_id, c.n").
		ColumnExpr("ROW_NUMBER() OVER (PARTITION BY c.researcher_id ORDER BY c.n DESC, c.topic_id) AS rank")
	err := idb.NewSelect().TableExpr("(?) AS r", ranked).
		ColumnExpr("r.researcher_id, r.n, "+topicColumns).
		Join("JOIN topics AS t ON t.id = r.topic_id").
		Where("r.rank <= ?", MaxResearcherTopics).
		OrderExpr("r.researcher_id, r.n DESC, t.level, t.id").Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupBy(rows, func(r *TopicCount) int64 { return r.ResearcherID }, row[TopicCount]), nil
}

// MaxTopicResearchers is the most researchers of a topic that
// topic_researchers holds and TopicResearchersByTopicIDs reads.
const MaxTopicResearchers = 100

// TopicResearcher is a researcher with how many of their papers are
// filed under a topic.
type TopicResearcher struct {
	Count int `bun:"n"`
	Researcher
}

// TopicResearchersByTopicIDs reads the researchers with most papers
// filed under topics, at most MaxTopicResearchers each, most papers
// first, as the topics' last build or filing counted them (bylines of
// more than maxTopicByline authors left out).
func TopicResearchersByTopicIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64][]*TopicResearcher, error) {
	var rows []withParent[TopicResearcher]
	b := binding(idb)
	cond, args := in(b, "tr.topic_id", ids)
	err := idb.NewSelect().TableExpr("topic_researchers AS tr").
		ColumnExpr("tr.topic_id AS parent, tr.paper_count AS n, r.*").
		Join("JOIN researchers AS r ON r.id = tr.researcher_id").
		Where(cond, args...).OrderExpr("tr.topic_id, tr.rank").Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupByParent(rows), nil
}

// TopicPage reads up to n topics within parent (0: the broad topics)
// with an id above after, in id order, and whether more follow.
func TopicPage(ctx context.Context, idb bun.IDB, parent, after int64, n int) ([]*Topic, bool, error) {
	var rows []*Topic
	q := idb.NewSelect().TableExpr("topics AS t").ColumnExpr(topicColumns).
		Where("t.id > ?", after).OrderExpr("t.id").Limit(int64(n + 1))
	if parent == 0 {
		q = q.Where("t.parent_id IS NULL")
	} else {
		q = q.Where("t.parent_id = ?", parent)
	}
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, false, err
	}
	more := len(rows) > n
	return rows[:min(len(rows), n)], more, nil
}

// CountTopics counts the topics within parent (0: the broad topics).
func CountTopics(ctx context.Context, idb bun.IDB, parent int64) (int, error) {
	q := idb.NewSelect().TableExpr("topics")
	if parent == 0 {
		q = q.Where("parent_id IS NULL")
	} else {
		q = q.Where("parent_id = ?", parent)
	}
	n, err := q.Count(ctx)
	return int(n), err
}
