package db_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestFirstPageScoresAsWhole checks a relevance page read for a search
// ForPage gave its first page, whose candidates may be left unscored past
// those that can reach the page, against the same page of the candidates
// scored whole, on each database: the same candidates (ids, years, more)
// and, for each first page of a common and a rare word, several words, a
// phrase and a prefix, the same papers in the same order with the same
// scores, in as many statements, alone and fused with nearest papers as
// HYBRID fuses them; then the next page, read from the first page's last
// cursor, and a longer page than the candidates were read for, which
// score every candidate again. On SQLite the candidates are
// scored in Go (see goBM25), where candidates are left unscored; the test
// fails if none ever is.
func TestFirstPageScoresAsWhole(t *testing.T) {
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			bdb := dbtest.Open(t, dbtest.NewSeeded(t, kind, scoreSeed()))
			log := &statementLog{}
			bdb.AddQueryHook(log)
			defer db.SetBM25MinMatches(0)()
			left := 0
			for _, q := range []string{"the", "field", "quantum", "monopole", "field theory", `"gauge theory"`, "quan*", "xyzzyplugh"} {
				sq, err := db.ParseSearchQuery(q)
				if err != nil {
					t.Fatal(err)
				}
				s := db.PaperSearch{Query: sq}
				for _, first := range []int{1, 3, 20, 100} {
					a := db.PageArgs{First: first, Order: db.Relevance}
					whole, err := db.SearchCandidates(ctx, bdb, s, true)
					if err != nil {
						t.Fatal(err)
					}
					part, err := db.SearchCandidates(ctx, bdb, s.ForPage(a), true)
					if err != nil {
						t.Fatal(err)
					}
					if part.Unscored() {
						left++
					}
					if !slices.Equal(part.IDs, whole.IDs) || part.More != whole.More || part.Relaxed != whole.Relaxed ||
						!slices.Equal(db.CandidateYears(part), db.CandidateYears(whole)) {
						t.Fatalf("%s, first %d: the candidates differ from those scored whole", q, first)
					}
					log.take()
					want, err := db.SearchPapers(ctx, bdb, s.WithCandidates(whole), a)
					if err != nil {
						t.Fatal(err)
					}
					wantSent := len(log.take())
					got, err := db.SearchPapers(ctx, bdb, s.ForPage(a).WithCandidates(part), a)
					if err != nil {
						t.Fatal(err)
					}
					if sent := len(log.take()); sent != wantSent {
						t.Errorf("%s, first %d: %d statements, want %d", q, first, sent, wantSent)
					}
					checkSamePage(t, q, "first page", got, want)
					if len(want.Items) == 0 {
						continue
					}
					// HYBRID fuses the keyword candidates with the nearest
					// papers: here every tenth candidate, from the last, and
					// papers that are no candidates.
					var near []int64
					var sims []float32
					for i := len(whole.IDs) - 1; i >= 0; i -= 10 {
						near, sims = append(near, whole.IDs[i]), append(sims, float32(i)/float32(len(whole.IDs)))
					}
					near, sims = append(near, 1, 2, 3), append(sims, 0.5, 0.4, 0.3)
					sem, err := db.SemanticCandidates(ctx, bdb, s, near, sims)
					if err != nil {
						t.Fatal(err)
					}
					want, err = db.SearchPapers(ctx, bdb, s.WithCandidates(db.FuseHybrid(sq, whole, sem)), a)
					if err != nil {
						t.Fatal(err)
					}
					got, err = db.SearchPapers(ctx, bdb, s.ForPage(a).WithCandidates(db.FuseHybrid(sq, part, sem)), a)
					if err != nil {
						t.Fatal(err)
					}
					checkSamePage(t, q, "hybrid first page", got, want)
					// The next page, from the first's last cursor, and a
					// longer first page than the candidates were read for.
					last := want.Items[len(want.Items)-1]
					next := db.PageArgs{First: first, Order: db.Relevance,
						After: db.Cursor{Set: true, Key: int64(math.Float64bits(last.Score)), ID: last.ID}}
					longer := db.PageArgs{First: first + 50, Order: db.Relevance}
					for _, b := range []struct {
						name string
						a    db.PageArgs
					}{{"next page", next}, {"longer page", longer}} {
						want, err := db.SearchPapers(ctx, bdb, s.WithCandidates(whole), b.a)
						if err != nil {
							t.Fatal(err)
						}
						got, err := db.SearchPapers(ctx, bdb, s.ForPage(b.a).WithCandidates(part), b.a)
						if err != nil {
							t.Fatal(err)
						}
						checkSamePage(t, q, b.name, got, want)
					}
				}
			}
			if kind == "sqlite" && left == 0 {
				t.Error("no candidates were left unscored")
			}
		})
	}
}

// checkSamePage fails unless got and want hold the same papers, in the
// same order, with the same scores, and agree on the pages around them.
func checkSamePage(t *testing.T, q, name string, got, want db.Page[*db.Paper]) {
	t.Helper()
	same := slices.EqualFunc(got.Items, want.Items, func(x, y *db.Paper) bool { return x.ID == y.ID && x.Score == y.Score })
	if !same || got.HasNext != want.HasNext || got.HasPrev != want.HasPrev {
		t.Errorf("%s, %s: %d papers (next %v), want %d (next %v)", q, name, len(got.Items), got.HasNext, len(want.Items), want.HasNext)
	}
}
