package db

import (
	"context"
	"math"
	"slices"

	"github.com/uptrace/bun"
)

// SemanticCandidates are the papers of ids, a vector index's nearest to a
// query (nearest first, sims their similarities), that s's filters keep,
// read in one statement with their dates: Candidates in ids' order,
// scored by similarity, for a semantic relevance page, its count and its
// facets (see WithCandidates). s's query is not matched.
func SemanticCandidates(ctx context.Context, idb bun.IDB, s PaperSearch, ids []int64, sims []float32) (Candidates, error) {
	c := Candidates{scored: true}
	if len(ids) == 0 {
		return c, nil
	}
	s.IDs = ids
	b := binding(idb)
	cond, args := s.conditions(b, idb)
	var rows []candidate
	err := idb.NewRaw("SELECT p.id, "+yearSQL(IsPostgres(idb), "p.published")+" AS year, 0.0 AS score FROM papers AS p WHERE 1 = 1"+cond, args...).Scan(b.ctx(ctx), &rows)
	if err != nil {
		return c, err
	}
	kept := make(map[int64]candidate, len(rows))
	for _, r := range rows {
		kept[r.ID] = r
	}
	for i, id := range ids {
		if r, ok := kept[id]; ok {
			r.Score = float64(sims[i])
			c.rows = append(c.rows, r)
			c.IDs = append(c.IDs, id)
		}
	}
	return c, nil
}

// HasCandidates reports whether s reads its candidates from those
// WithCandidates gave it.
func (s PaperSearch) HasCandidates() bool { return s.cand != nil }

// FusionK is reciprocal rank fusion's constant: a paper ranked r in a
// list scores 1 / (FusionK + r), so that the first few places of a list
// do not outweigh a paper ranked well in every list.
const FusionK = 60

// Related is what a paper's citations say of the papers like it, most
// alike first: the papers cited together with it (co-citation, by the
// number of papers citing both) and those sharing its references
// (bibliographic coupling, by the number shared).
type Related struct {
	CoCited, Coupled []int64
}

// relatedCiting is the most citing papers of a paper whose references
// co-citation reads, the newest; relatedShared is the most citations a
// reference may have to couple the papers citing it. They bound the rows
// RelatedByPaperIDs reads per paper to relatedCiting times a reference
// list, and a reference list times relatedShared: a paper cited
// thousands of times, and a reference every paper of a field cites, would
// otherwise read their whole neighbourhood.
const (
	relatedCiting = 200
	relatedShared = 1000
)

// RelatedByPaperIDs reads the co-cited and the coupled papers of each of
// ids, at most n of each kind, in one statement.
func RelatedByPaperIDs(ctx context.Context, idb bun.IDB, ids []int64, n int) (map[int64]Related, error) {
	b := binding(idb)
	cited, args1 := in(b, "cited_id", ids)
	citing, args2 := in(b, "m.citing_id", ids)
	q := `SELECT parent, other, kind FROM (
	  SELECT parent, other, kind, ROW_NUMBER() OVER (PARTITION BY parent, kind ORDER BY n DESC, other) AS rk FROM (
	    SELECT c.cited_id AS parent, r.cited_id AS other, 0 AS kind, COUNT(*) AS n
	    FROM (SELECT cited_id, citing_id, ROW_NUMBER() OVER (PARTITION BY cited_id ORDER BY citing_published DESC, citing_id DESC) AS cn
	          FROM paper_references WHERE ` + cited + `) AS c
	    JOIN paper_references AS r ON r.citing_id = c.citing_id
	    WHERE c.cn <= ? AND r.cited_id IS NOT NULL AND r.cited_id <> c.cited_id
	    GROUP BY c.cited_id, r.cited_id
	    UNION ALL
	    SELECT m.citing_id, r.citing_id, 1, COUNT(*)
	    FROM paper_references AS m
	    JOIN papers AS ref ON ref.id = m.cited_id AND ref.citation_count <= ?
	    JOIN paper_references AS r ON r.cited_id = m.cited_id
	    WHERE ` + citing + ` AND r.citing_id <> m.citing_id
	    GROUP BY m.citing_id, r.citing_id
	  ) AS t
	) AS x WHERE rk <= ? ORDER BY parent, kind, rk`
	args := append(append(append(args1, relatedCiting), relatedShared), args2...)
	args = append(args, n)
	var rows []struct {
		Parent int64 `bun:"parent"`
		Other  int64 `bun:"other"`
		Kind   int   `bun:"kind"`
	}
	if err := idb.NewRaw(q, args...).Scan(b.ctx(ctx), &rows); err != nil {
		return nil, err
	}
	out := map[int64]Related{}
	for _, r := range rows {
		rel := out[r.Parent]
		if r.Kind == 0 {
			rel.CoCited = append(rel.CoCited, r.Other)
		} else {
			rel.Coupled = append(rel.Coupled, r.Other)
		}
		out[r.Parent] = rel
	}
	return out, nil
}

// PaperIDsByResearcherIDs reads the ids of researchers' papers, at most
// n of each, their most cited first, in one statement.
func PaperIDsByResearcherIDs(ctx context.Context, idb bun.IDB, ids []int64, n int) (map[int64][]int64, error) {
	b := binding(idb)
	cond, args := in(b, "a.researcher_id", ids)
	return idLists(ctx, idb, b, `SELECT parent AS k, paper AS v FROM (
	  SELECT a.researcher_id AS parent, a.paper_id AS paper,
	    ROW_NUMBER() OVER (PARTITION BY a.researcher_id ORDER BY p.citation_count DESC, p.id) AS rk
	  FROM authorships AS a JOIN papers AS p ON p.id = a.paper_id WHERE `+cond+`
	) AS x WHERE rk <= ? ORDER BY parent, rk`, append(args, n)...)
}

// ResearcherIDsByPaperIDs reads the researchers of papers' bylines, in
// one statement; a byline of more than maxAuthors is left out, as a
// collaboration's papers say little of whom each member works like.
func ResearcherIDsByPaperIDs(ctx context.Context, idb bun.IDB, ids []int64, maxAuthors int) (map[int64][]int64, error) {
	b := binding(idb)
	cond, args := in(b, "a.paper_id", ids)
	return idLists(ctx, idb, b, `SELECT a.paper_id AS k, a.researcher_id AS v FROM authorships AS a
	  WHERE `+cond+` AND a.researcher_id IS NOT NULL
	  AND (SELECT COUNT(*) FROM authorships AS o WHERE o.paper_id = a.paper_id) <= ?
	  ORDER BY a.paper_id, a.position`, append(args, maxAuthors)...)
}

// idLists runs q, bound by b, whose rows are an id k and an id v of its
// list, and returns each k's list in the order of the rows.
func idLists(ctx context.Context, idb bun.IDB, b *bound, q string, args ...any) (map[int64][]int64, error) {
	var rows []struct {
		K int64 `bun:"k"`
		V int64 `bun:"v"`
	}
	err := idb.NewRaw(q, args...).Scan(b.ctx(ctx), &rows)
	out := map[int64][]int64{}
	for _, r := range rows {
		out[r.K] = append(out[r.K], r.V)
	}
	return out, err
}

// hybridSemanticWeight is what a semantic rank counts in a hybrid
// fusion, a keyword rank counting 1: on the demo set's query sets the
// vectors alone find fewer papers than the relaxed keyword ranking, and
// an equal weight let their near misses push keyword hits off the first
// page.
const hybridSemanticWeight = 0.5

// FuseHybrid fuses the keyword candidates kw of q and the semantic
// candidates sem (see SemanticCandidates) by weighted reciprocal rank
// fusion. The papers matching every word of q come first, in kw's order,
// as a search by keyword gives them: a query of a paper's own title
// words finds it first whatever its neighbours by meaning. The others
// score 1 / (FusionK + rank) in each list: in kw times the share of q's
// words they match (see relaxed) and in sem times
// hybridSemanticWeight. More when either has more.
func FuseHybrid(q SearchQuery, kw, sem Candidates) Candidates {
	_, optional, _, _ := q.relaxed()
	words := float64(max(len(optional), 1))
	out := Candidates{scored: true, More: kw.More || sem.More}
	at := map[int64]int{}
	add := func(c candidate, s float64) {
		i, ok := at[c.ID]
		if !ok {
			i = len(out.rows)
			at[c.ID] = i
			out.rows = append(out.rows, candidate{ID: c.ID, Year: c.Year})
		}
		out.rows[i].Score += s
	}
	ranked := slices.Clone(kw.rows)
	slices.SortStableFunc(ranked, relevanceLess)
	for r, c := range ranked {
		share := 1.0
		if kw.Relaxed {
			// A relaxed candidate's score is the number of words it
			// matches plus a fraction (see relaxedCandidates).
			share = min(math.Floor(c.Score)/words, 1)
		}
		s := share / float64(FusionK+r+1)
		if share == 1 {
			// Above any fused score, which is below 2 / FusionK, in kw's order.
			s += float64(len(ranked) - r)
		}
		add(c, s)
	}
	ranked = slices.Clone(sem.rows)
	slices.SortStableFunc(ranked, relevanceLess)
	for r, c := range ranked {
		add(c, hybridSemanticWeight/float64(FusionK+r+1))
	}
	slices.SortStableFunc(out.rows, relevanceLess)
	out.IDs = make([]int64, len(out.rows))
	for i, r := range out.rows {
		out.IDs[i] = r.ID
	}
	return out
}
