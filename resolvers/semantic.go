package resolvers

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/vector"
)

// CodeSemanticUnavailable is a SEMANTIC search while no paper has an
// embedding or while the vector index is being built.
const CodeSemanticUnavailable = "SEMANTIC_UNAVAILABLE"

// The sizes of the semantic lists.
const (
	// SemanticCandidates is how many of a query's nearest papers a
	// SEMANTIC or HYBRID search reads, before its filters.
	SemanticCandidates = db.RelevanceCandidates
	// MaxRelated and DefaultRelated bound Paper.related, MaxSimilar and
	// DefaultSimilar Researcher.similar.
	MaxRelated     = 50
	DefaultRelated = 10
	MaxSimilar     = 50
	DefaultSimilar = 10
	// relatedPool is how many papers of each ranking Paper.related fuses.
	relatedPool = 50
	// similarPapers is how many of a researcher's papers, the most cited,
	// make the mean embedding Researcher.similar searches near, and
	// similarPool how many papers nearest it lead to researchers.
	similarPapers = 50
	similarPool   = 100
	// similarByline is the longest byline whose authors
	// Researcher.similar counts.
	similarByline = 100
)

type vectorsKey struct{}

// WithVectors makes live the vector index of the requests under ctx:
// their SEMANTIC and HYBRID searches, Paper.related and
// Researcher.similar read it. Without it they see no embeddings.
func WithVectors(ctx context.Context, live *vector.Live) context.Context {
	return context.WithValue(ctx, vectorsKey{}, live)
}

func vectorsFrom(ctx context.Context) *vector.Live {
	l, _ := ctx.Value(vectorsKey{}).(*vector.Live)
	return l
}

// ModeOf is a search's mode argument, HYBRID when absent.
func ModeOf(m *model.SearchMode) model.SearchMode {
	if m == nil {
		return model.SearchModeHybrid
	}
	return *m
}

// semanticUnavailable is the error of a SEMANTIC search the index cannot
// answer yet (err is vector.ErrBuilding or vector.ErrNoVectors).
func semanticUnavailable(err error) error {
	return &gqlerror.Error{Message: "mode: " + err.Error(), Err: err,
		Extensions: map[string]any{"code": CodeSemanticUnavailable, "argument": "mode"}}
}

// SemanticSearch applies mode to s, a search for text in order, and
// returns the search that answers it:
//
//   - KEYWORD, no query, or HYBRID in an order other than relevance (or
//     with no index ready): s as it is.
//   - SEMANTIC in relevance order: s whose candidates are the
//     SemanticCandidates nearest papers its filters keep (a statement),
//     ranked by similarity.
//   - SEMANTIC in another order: the nearest papers as s's ids, by the
//     filters alone (no statement here).
//   - HYBRID in relevance order: s whose candidates are the keyword
//     candidates and the nearest papers, fused by weighted reciprocal
//     rank, the papers matching every word first (db.FuseHybrid; two
//     statements, three when the keyword side is relaxed).
//
// A SEMANTIC search with no index ready is a CodeSemanticUnavailable error.
// The export of search results shares it, so both apply modes alike.
func SemanticSearch(ctx context.Context, idb bun.IDB, s db.PaperSearch, text string, order db.PaperOrder, mode model.SearchMode) (db.PaperSearch, error) {
	if s.Query.IsZero() || mode == model.SearchModeKeyword || (mode == model.SearchModeHybrid && order != db.Relevance) {
		return s, nil
	}
	hits, err := vectorsFrom(ctx).SearchText(ctx, text, SemanticCandidates)
	switch {
	case errors.Is(err, vector.ErrBuilding) || errors.Is(err, vector.ErrNoVectors):
		if mode == model.SearchModeHybrid {
			return s, nil
		}
		return s, semanticUnavailable(err)
	case err != nil:
		return s, err
	}
	ids := make([]int64, len(hits))
	sims := make([]float32, len(hits))
	for i, h := range hits {
		ids[i], sims[i] = h.ID, h.Score
	}
	if order != db.Relevance {
		s.Query, s.IDs = db.SearchQuery{}, ids
		return s, nil
	}
	sem, err := db.SemanticCandidates(ctx, idb, s, ids, sims)
	if err != nil || mode == model.SearchModeSemantic {
		return s.WithCandidates(sem), err
	}
	kw, err := db.SearchCandidates(ctx, idb, s, true)
	return s.WithCandidates(db.FuseHybrid(s.Query, kw, sem)), err
}

// fuseRanks fuses rankings of ids (best first) by reciprocal rank: an id
// scores the sum of 1 / (db.FusionK + rank) over the rankings that hold
// it. It returns the n best, leaving out skip.
func fuseRanks(skip int64, n int, rankings ...[]int64) []int64 {
	score := map[int64]float64{}
	for _, r := range rankings {
		for i, id := range r {
			if id != skip {
				score[id] += 1 / float64(db.FusionK+i+1)
			}
		}
	}
	return topScored(score, n)
}

// topScored is the n ids of highest score, lower id first among equals.
func topScored[S float32 | float64](score map[int64]S, n int) []int64 {
	ids := make([]int64, 0, len(score))
	for id := range score {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int64) int { return cmp.Or(cmp.Compare(score[b], score[a]), cmp.Compare(a, b)) })
	return ids[:min(n, len(ids))]
}

// readRelated reads Paper.related for papers: their co-cited and coupled
// papers (a statement) fused with their nearest by embedding (from the
// index, no statement), then the papers (a statement, through the papers
// loader).
func (l *Loaders) readRelated(ctx context.Context, idb bun.IDB, ids []int64, n int) (map[int64][]*db.Paper, error) {
	if n == 0 {
		return nil, nil
	}
	graph, err := db.RelatedByPaperIDs(ctx, idb, ids, relatedPool)
	if err != nil {
		return nil, err
	}
	live := vectorsFrom(ctx)
	vecs, _ := live.Vectors(ids) // none while the index is not ready
	lists := map[int64][]int64{}
	var all []int64
	for _, id := range ids {
		var near []int64
		if v, ok := vecs[id]; ok {
			hits, err := live.Search(v, relatedPool+1)
			if err != nil {
				return nil, err
			}
			for _, h := range hits {
				near = append(near, h.ID)
			}
		}
		g := graph[id]
		lists[id] = fuseRanks(id, n, near, g.CoCited, g.Coupled)
		all = append(all, lists[id]...)
	}
	return readEach(ctx, l.papers, lists, all)
}

// readSimilar reads Researcher.similar for researchers: their most cited
// papers (a statement), the papers nearest the mean embedding of each
// one's (from the index), the authors of those (a statement), then the
// researchers (a statement, through the researchers loader). A
// researcher scores the similarity of the nearest paper they wrote: a sum
// over their papers would put the prolific first, whatever they write.
// No statement while the index is not ready.
func (l *Loaders) readSimilar(ctx context.Context, idb bun.IDB, ids []int64, n int) (map[int64][]*db.Researcher, error) {
	live := vectorsFrom(ctx)
	if n == 0 || !live.Ready() {
		return nil, nil
	}
	papers, err := db.PaperIDsByResearcherIDs(ctx, idb, ids, similarPapers)
	if err != nil {
		return nil, err
	}
	near := map[int64][]vector.Hit{}
	var hitIDs []int64
	for _, id := range ids {
		mean := meanVector(live, papers[id])
		if mean == nil {
			continue
		}
		if near[id], err = live.Search(mean, similarPool); err != nil {
			return nil, err
		}
		for _, h := range near[id] {
			hitIDs = append(hitIDs, h.ID)
		}
	}
	if len(hitIDs) == 0 {
		return nil, nil
	}
	authors, err := db.ResearcherIDsByPaperIDs(ctx, idb, uniq(hitIDs), similarByline)
	if err != nil {
		return nil, err
	}
	lists := map[int64][]int64{}
	var all []int64
	for id, hits := range near {
		score := map[int64]float32{}
		for _, h := range hits {
			for _, a := range authors[h.ID] {
				if old, ok := score[a]; a != id && (!ok || h.Score > old) {
					score[a] = h.Score
				}
			}
		}
		lists[id] = topScored(score, n)
		all = append(all, lists[id]...)
	}
	return readEach(ctx, l.researchers, lists, all)
}

// meanVector is the mean of the indexed vectors of papers, nil when none
// has one.
func meanVector(live *vector.Live, papers []int64) []float32 {
	vs, _ := live.Vectors(papers)
	var mean []float32
	for _, v := range vs {
		if mean == nil {
			mean = make([]float32, len(v))
		}
		for i, f := range v {
			mean[i] += f
		}
	}
	return mean
}

// readEach reads the rows of all through ld in one statement and returns
// each parent's list of them in its order, leaving out rows gone since.
func readEach[T any](ctx context.Context, ld *loader[int64, *T], lists map[int64][]int64, all []int64) (map[int64][]*T, error) {
	all = uniq(all)
	rows, err := ld.read(ctx, all)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*T, len(all))
	for i, id := range all {
		byID[id] = rows[i]
	}
	out := make(map[int64][]*T, len(lists))
	for parent, ids := range lists {
		for _, id := range ids {
			if x := byID[id]; x != nil {
				out[parent] = append(out[parent], x)
			}
		}
	}
	return out, nil
}

func paperRelated(ctx context.Context, id int64, first *int) ([]*model.Paper, error) {
	n, err := countArg("first", first, DefaultRelated, MaxRelated)
	if err != nil {
		return nil, err
	}
	ps, err := loaders(ctx).related.load(ctx, countKey[int64]{parent: id, n: n})
	return wrapAll(ps, wrapPaper), err
}

func researcherSimilar(ctx context.Context, id int64, first *int) ([]*model.Researcher, error) {
	n, err := countArg("first", first, DefaultSimilar, MaxSimilar)
	if err != nil {
		return nil, err
	}
	rs, err := loaders(ctx).similar.load(ctx, countKey[int64]{parent: id, n: n})
	return wrapAll(rs, wrapResearcher), err
}

// semanticSteps are the look-ahead steps of Paper.related and
// Researcher.similar.
func semanticSteps() map[string]step {
	return map[string]step{
		"Paper.related": follow(func(l *Loaders) *loader[countKey[int64], []*db.Paper] { return l.related },
			func(args map[string]any) (func(*db.Paper) (countKey[int64], bool), error) {
				n, err := countArg("first", intArgs(args, "first")[0], DefaultRelated, MaxRelated)
				return keyOfEach(func(p *db.Paper) countKey[int64] { return countKey[int64]{parent: p.ID, n: n} }), err
			}, "Paper", appendItems[countKey[int64], *db.Paper]),
		"Researcher.similar": follow(func(l *Loaders) *loader[countKey[int64], []*db.Researcher] { return l.similar },
			func(args map[string]any) (func(*db.Researcher) (countKey[int64], bool), error) {
				n, err := countArg("first", intArgs(args, "first")[0], DefaultSimilar, MaxSimilar)
				return keyOfEach(func(r *db.Researcher) countKey[int64] { return countKey[int64]{parent: r.ID, n: n} }), err
			}, "Researcher", appendItems[countKey[int64], *db.Researcher]),
	}
}
