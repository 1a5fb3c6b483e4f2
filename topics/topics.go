// Package topics groups the archive's papers into named topics without a
// language model: it clusters the papers' embeddings (package embed) by
// k-means into broad topics and topics within each, names each by the
// words most particular to its papers' titles and abstracts, and files
// papers added since under the nearest topic. See docs/topics.md.
package topics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/vector"
)

// MinPapers is the fewest papers with an embedding that are grouped into
// topics.
const MinPapers = 20

// textPage is how many papers' texts a statement reads while naming:
// enough that the statements are few, few enough that a page's texts
// take little memory.
const textPage = 2000

// ErrTooFewPapers says the archive has too few papers with an embedding
// to group into topics.
var ErrTooFewPapers = fmt.Errorf("topics need at least %d papers with an embedding: run papergraph embed", MinPapers)

// Options shape an Update.
type Options struct {
	// Rebuild clusters the archive again even where filing new papers
	// into the topics there would do.
	Rebuild bool
}

// Summary is what an Update did.
type Summary struct {
	Model   string
	Built   bool // the topics were built afresh, not only added to
	Topics  int  // topics in the archive
	Papers  int  // papers built into topics, or filed into them
	Elapsed time.Duration
}

// Update brings the topics up to date with the papers' embeddings under
// the active model. It builds them afresh when there are none, when they
// were built from another model, when the archive has twice the papers
// they were built from, or when o says so; otherwise it files only the
// papers that are new or whose text changed, each under the nearest
// topic, leaving every other paper where it was.
func Update(ctx context.Context, idb bun.IDB, o Options) (Summary, error) {
	start := time.Now()
	m, err := db.ActiveEmbeddingModel(ctx, idb)
	if errors.Is(err, db.ErrNoEmbeddingModel) {
		return Summary{}, ErrTooFewPapers
	}
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Model: m.Name}
	b, err := db.GetTopicBuild(ctx, idb)
	if err != nil {
		return sum, err
	}
	n, err := db.CountPaperVectors(ctx, idb, m.Name)
	if err != nil {
		return sum, err
	}
	if o.Rebuild || b == nil || b.Model != m.Name || n >= 2*b.Papers {
		sum.Built = true
		sum.Topics, sum.Papers, err = build(ctx, idb, m.Name, int(n))
	} else {
		sum.Topics, sum.Papers, err = fileNew(ctx, idb, m.Name)
	}
	sum.Elapsed = time.Since(start)
	return sum, err
}

// build clusters the n papers with a vector under model and replaces the
// topics with the clusters. It reads the vectors several times rather
// than holding them all (see cluster), and keeps only each paper's id,
// text hash and topics, so that its memory barely grows with the archive.
func build(ctx context.Context, idb bun.IDB, model string, n int) (topics, papers int, err error) {
	if n < MinPapers {
		return 0, 0, ErrTooFewPapers
	}
	ids, hashes := make([]int64, 0, n), make([]int64, 0, n)
	first := true
	each := func(fn func(i int, v []float32) error) error {
		i := 0
		err := db.EachVectorToFile(ctx, idb, model, true, func(id, hash int64, v []float32) error {
			if first {
				if i >= n {
					return errVectorsChanged
				}
				ids, hashes = append(ids, id), append(hashes, hash)
			} else if i >= len(ids) || ids[i] != id || hashes[i] != hash {
				return errVectorsChanged
			}
			vector.Normalize(v)
			if err := fn(i, v); err != nil {
				return err
			}
			i++
			return nil
		})
		if err == nil && i != n {
			err = errVectorsChanged
		}
		first = false
		return err
	}
	h, err := cluster(n, each)
	if err != nil {
		return 0, 0, err
	}
	if err := nameTopics(ctx, idb, model, ids, &h); err != nil {
		return 0, 0, err
	}
	rows := make([]db.Topic, len(h.Topics))
	for i, t := range h.Topics {
		rows[i] = db.Topic{ID: int64(i + 1), Level: t.Level, Name: t.Name, PaperCount: t.Size, Model: model,
			Centroid: db.EncodeVector(t.Centroid)}
		if t.Parent >= 0 {
			rows[i].ParentID = int64(t.Parent + 1)
		}
	}
	filed := func(yield func(db.PaperTopic) bool) {
		for i, id := range ids {
			if !yield(db.PaperTopic{PaperID: id, TopicID: int64(h.Top[i] + 1), Level: 0, TextHash: hashes[i]}) {
				return
			}
			if s := h.Sub[i]; s >= 0 && !yield(db.PaperTopic{PaperID: id, TopicID: int64(s + 1), Level: 1, TextHash: hashes[i]}) {
				return
			}
		}
	}
	b := &db.TopicBuild{Model: model, Papers: int64(len(ids)), BuiltAt: time.Now().UTC()}
	return len(rows), len(ids), db.SaveTopics(ctx, idb, b, rows, filed)
}

// nameTopics names the topics of h from the titles and abstracts of the
// papers ids (in id order, as h's vectors): a first reading picks the
// terms of each name, a second spells their words as the topic's papers
// do.
func nameTopics(ctx context.Context, idb bun.IDB, model string, ids []int64, h *Hierarchy) error {
	nm := newNamer(h)
	if err := eachText(ctx, idb, model, ids, nm.add); err != nil {
		return err
	}
	nm.pick()
	// Only the terms picked are kept: the namer, with its counts of
	// every term of every topic, is not used again, and its memory goes
	// before the second reading.
	picked := nm.picked
	sp := newSpeller(h, picked)
	if err := eachText(ctx, idb, model, ids, sp.add); err != nil {
		return err
	}
	for i := range h.Topics {
		h.Topics[i].Name = sp.name(i, picked[i])
	}
	return nil
}

// eachText calls fn with the index in ids, title and abstract of each of
// the papers ids, read a page at a time.
func eachText(ctx context.Context, idb bun.IDB, model string, ids []int64, fn func(i int, title, abstract string)) error {
	var after int64
	for {
		page, err := db.PaperTexts(ctx, idb, model, after, textPage)
		if err != nil || len(page) == 0 {
			return err
		}
		after = page[len(page)-1].ID
		for _, p := range page {
			if i, ok := slices.BinarySearch(ids, p.ID); ok {
				fn(i, p.Title, p.Abstract)
			}
		}
	}
}

// fileNew files the papers new or changed since they were filed under
// the nearest topics, in one transaction.
func fileNew(ctx context.Context, idb bun.IDB, model string) (topics, papers int, err error) {
	rows, err := db.TopicCentroids(ctx, idb)
	if err != nil || len(rows) == 0 {
		return 0, 0, err
	}
	cs := make([]Cluster, len(rows))
	index := make(map[int64]int, len(rows))
	for i, r := range rows {
		index[r.ID] = i
	}
	for i, r := range rows {
		v, err := db.DecodeVector(r.Centroid)
		if err != nil {
			return 0, 0, err
		}
		cs[i] = Cluster{Level: r.Level, Parent: -1, Centroid: v, Name: r.Name}
		if r.ParentID != 0 {
			cs[i].Parent = index[r.ParentID]
		}
	}
	var filed []db.PaperTopic
	err = db.EachVectorToFile(ctx, idb, model, false, func(id, hash int64, v []float32) error {
		vector.Normalize(v)
		if len(v) != len(cs[0].Centroid) {
			return fmt.Errorf("topics: a vector of %d numbers for centroids of %d: run papergraph topics --rebuild", len(v), len(cs[0].Centroid))
		}
		top, sub := File(cs, v)
		filed = append(filed, db.PaperTopic{PaperID: id, TopicID: rows[top].ID, Level: 0, TextHash: hash})
		if sub >= 0 {
			filed = append(filed, db.PaperTopic{PaperID: id, TopicID: rows[sub].ID, Level: 1, TextHash: hash})
		}
		papers++
		return nil
	})
	if err != nil {
		return len(rows), papers, err
	}
	// Deleted papers left the topics by cascade; the recount sees them
	// out even when there is nothing new to file.
	if len(filed) == 0 {
		return len(rows), 0, db.RecountTopics(ctx, idb)
	}
	return len(rows), papers, db.FilePapers(ctx, idb, filed)
}
