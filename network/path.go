package network

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// Bounds of Path.
const (
	DefaultPathDepth = 6
	MaxPathDepth     = 8
	// PathBudget caps the researchers a path search may visit; hubs make
	// the number reached grow by orders of magnitude per hop.
	PathBudget = 50000
	// pathTies caps the co-author ties one layer of a path search reads.
	pathTies = 10 * PathBudget
)

// pathBudget is PathBudget, which tests lower to take the branch a small
// archive never reaches.
var pathBudget = PathBudget

// layerRead, when a test sets it, is given the frontier of each layer
// that expand reads the co-authors of.
var layerRead func(frontier []int64)

// ErrPathBudget is wrapped by Path's error when the search visited
// PathBudget researchers without finding a path or exhausting the depth:
// a path may exist but was not looked for further. The error says how
// many hops the search ruled out.
var ErrPathBudget = errors.New("collaboration path search gave up: too many researchers within reach")

// Step is one researcher on a collaboration path. PaperIDs are the papers
// they share with the researcher of the step before, in id order; the
// first step has none.
type Step struct {
	ResearcherID int64
	PaperIDs     []int64
}

// side is one end of a bidirectional search: the researchers reached, each
// with the one it was reached from (0 for the end itself), and ties, the
// co-author count of the frontier summed: the rows that widening it reads.
type side struct {
	parent   map[int64]int64
	frontier []int64
	ties     int64
	depth    int
}

// Path returns a shortest co-author path from one researcher to another,
// at most maxDepth hops long (1 to MaxPathDepth), or nil if there is none
// that short. Among equally short paths it picks one the same way every
// time: each researcher is reached through their strongest tie to the
// layer before, and the two searches meet at the lowest id they share,
// reached through its strongest tie to the other side.
// From a researcher to themself the path is the one step, whether or not
// the researcher exists.
//
// It searches from both ends at once, one layer at a time, always widening
// the side whose next layer is the smaller: that of the frontier of fewer
// co-authors in all (researchers.coauthor_count, which the meeting after
// each layer reads), not of fewer researchers, so that a prolific
// researcher at one end, with co-authors by the thousand, is widened only
// when the other side's layers have grown as large. It first reads the ends' counts and
// whether they are tied (PathEndsOf); after each layer it asks whether
// the new frontier is tied to the other side's (see meetAcross), which
// reads no co-author beyond the other frontier: the layer where the
// searches meet, the largest of a search, is never read, nor the last
// layer maxDepth allows. It sends one statement for the ends, two per
// layer and one for the shared papers: at most 2×maxDepth. When the
// search has grown past PathBudget researchers, or the next layer past
// pathTies ties, it returns an error wrapping ErrPathBudget that says
// how many hops it ruled out.
func Path(ctx context.Context, idb bun.IDB, from, to int64, maxDepth int) ([]Step, error) {
	if maxDepth < 1 || maxDepth > MaxPathDepth {
		return nil, &ArgError{"maxDepth", fmt.Sprintf("must be between 1 and %d, got %d", MaxPathDepth, maxDepth)}
	}
	if from == to {
		return []Step{{ResearcherID: from}}, nil
	}
	ends, err := db.PathEndsOf(ctx, idb, from, to)
	if err != nil || ends.Tied {
		return linkOrErr(ctx, idb, []int64{from, to}, err)
	}
	fwd := &side{parent: map[int64]int64{from: 0}, frontier: []int64{from}, ties: ends.FromCount}
	bwd := &side{parent: map[int64]int64{to: 0}, frontier: []int64{to}, ties: ends.ToCount}
	for fwd.depth+bwd.depth+1 < maxDepth {
		s, other := fwd, bwd
		if bwd.ties < fwd.ties {
			s, other = bwd, fwd
		}
		switch {
		case len(s.frontier) == 0:
			return nil, nil
		case len(fwd.parent)+len(bwd.parent) > pathBudget || s.ties > pathTies:
			return nil, fmt.Errorf("%w: there is none of %d hops or fewer", ErrPathBudget, fwd.depth+bwd.depth+1)
		}
		if err := s.expand(ctx, idb); err != nil {
			return nil, err
		}
		meet, err := s.meetAcross(ctx, idb, other)
		if err != nil || meet != 0 {
			ids := slices.Concat(fwd.trail(meet, true), bwd.trail(bwd.parent[meet], false))
			return linkOrErr(ctx, idb, ids, err)
		}
	}
	return nil, nil
}

// linkOrErr is linkPapers of ids, or err when it is not nil.
func linkOrErr(ctx context.Context, idb bun.IDB, ids []int64, err error) ([]Step, error) {
	if err != nil {
		return nil, err
	}
	return linkPapers(ctx, idb, ids)
}

// expand widens s by one layer: the co-authors of its frontier that no
// layer of s holds yet, each reached through its strongest tie. Their
// co-author count is read by the meeting that follows (meetAcross).
func (s *side) expand(ctx context.Context, idb bun.IDB) error {
	// The strongest tie comes first for each co-author, and is kept. A
	// layer of more ties than pathTies is past the budget anyway; the
	// bound keeps it from being read where the counts fall short.
	if layerRead != nil {
		layerRead(s.frontier)
	}
	rows, err := db.CoauthorTies(ctx, idb, s.frontier, pathTies+1)
	if err != nil {
		return err
	}
	if len(rows) > pathTies {
		return ErrPathBudget
	}
	s.depth++
	s.frontier, s.ties = s.frontier[:0:0], 0
	for _, r := range rows {
		if _, ok := s.parent[r.CoauthorID]; ok {
			continue
		}
		s.parent[r.CoauthorID] = r.ResearcherID
		s.frontier = append(s.frontier, r.CoauthorID)
	}
	return nil
}

// meetAcross returns the lowest id of other's frontier tied to s's
// frontier, recording in s its strongest tie there, or 0 if the two
// frontiers are not tied, and then sets s.ties. The search never met
// before, so a tie across is the middle of a shortest path, and only the
// frontiers can be tied: a tie to a researcher other reached earlier
// would have met then. It never reads the co-authors beyond the two
// frontiers that expanding would read (see tieRead); s's count is read
// only when they are not tied, as the next choice of a side needs it.
func (s *side) meetAcross(ctx context.Context, idb bun.IDB, other *side) (int64, error) {
	if len(s.frontier) == 0 || len(other.frontier) == 0 {
		return 0, nil
	}
	m, err := db.CoauthorTieAcross(ctx, idb, s.frontier, other.frontier, tieRead(len(s.frontier), len(other.frontier), other.ties), s.frontier)
	if err != nil {
		return 0, err
	}
	if !m.Found {
		s.ties = m.Ties
		return 0, nil
	}
	s.parent[m.Tie.CoauthorID] = m.Tie.ResearcherID
	return m.Tie.CoauthorID, nil
}

// probeCost is what one probe of a pair in the coauthors table's primary
// key costs, in ties read in a row: a descent of the index, from a list
// bound as an array, against the next entry of a leaf already read, as
// SQLite's CPU time weighs them. Tests change it to take each way of
// reading ties.
var probeCost int64 = 16

// tieRead chooses how to read the ties between a frontier just widened,
// of n researchers, and the other side's, of m researchers and ties
// co-authors in all: the cheapest of reading the other's ties (whose
// number is known), reading the new frontier's (not yet known, so taken
// to be as many a researcher as the other's), and probing each pair.
// Probing costs the same at any size of the archive for frontiers of the
// same size, where the co-authors of a frontier grow with the prolific
// researchers in it: the middle of a path of three hops between two
// researchers of few co-authors probes the pairs of their co-authors,
// and never reads the co-authors of a prolific one among them.
func tieRead(n, m int, ties int64) db.TieRead {
	fromTies := int64(n) * ties / int64(m)
	if int64(n)*int64(m)*probeCost <= min(ties, fromTies) {
		return db.ProbePairs
	}
	if fromTies < ties {
		return db.ReadFrom
	}
	return db.ReadTo
}

// trail returns the researchers from id back to s's end, following
// parents; toward reverses it, to run from s's end to id. An id of 0 gives
// none.
func (s *side) trail(id int64, toward bool) []int64 {
	var ids []int64
	for ; id != 0; id = s.parent[id] {
		ids = append(ids, id)
	}
	if toward {
		slices.Reverse(ids)
	}
	return ids
}

// linkPapers returns the path through ids with the papers each
// consecutive pair shares, read in one statement.
func linkPapers(ctx context.Context, idb bun.IDB, ids []int64) ([]Step, error) {
	rows, err := db.SharedPapers(ctx, idb, ids)
	if err != nil {
		return nil, err
	}
	shared := map[[2]int64][]int64{}
	for _, r := range rows {
		shared[[2]int64{r.A, r.B}] = append(shared[[2]int64{r.A, r.B}], r.PaperID)
	}
	steps := make([]Step, len(ids))
	for i, id := range ids {
		steps[i].ResearcherID = id
		if i > 0 {
			steps[i].PaperIDs = shared[[2]int64{min(id, ids[i-1]), max(id, ids[i-1])}]
		}
	}
	return steps, nil
}
