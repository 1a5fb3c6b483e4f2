package db_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// take returns the statements sent since the last take.
func (l *statementLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.text
	l.text = nil
	return s
}

// TestGoBM25MatchesFTS5 checks the candidates' scores computed in Go
// (db.SearchCandidates on SQLite) against FTS5's own bm25 of the same
// candidates: the same candidates with the same scores, to the bit, for
// single words common and rare, several words, phrases and prefixes, over
// three years of the demo set, whose texts hold TeX markup and letters
// outside ASCII; and again after the index changes (an insert, an update
// of a text, a delete), which the counts cached of the phrases must
// follow. A query with a word outside ASCII is left to FTS5.
func TestGoBM25MatchesFTS5(t *testing.T) {
	ctx := context.Background()
	bdb := dbtest.Open(t, dbtest.NewSeeded(t, "sqlite", pscp1992to94))
	log := &statementLog{}
	bdb.AddQueryHook(log)
	queries := []string{"the", "field", "quantum", "monopole", "field theory", "of the", `"string theory"`, `"the"`,
		"th*", "quan*", "hep-th*", "gauge the*", `"gauge theory" lattice`, "the the", "xyzzyplugh"}
	check := func(when string) {
		t.Helper()
		for _, q := range queries {
			sq, err := db.ParseSearchQuery(q)
			if err != nil {
				t.Fatal(err)
			}
			s := db.PaperSearch{Query: sq}
			log.take()
			got, err := db.SearchCandidates(ctx, bdb, s, true)
			if err != nil {
				t.Fatal(err)
			}
			if sent := log.take(); len(sent) == 0 || strings.Contains(sent[0], "bm25(") {
				t.Fatalf("%s %s: the candidates were scored by FTS5", q, when)
			}
			restore := db.SetGoBM25(false)
			want, err := db.SearchCandidates(ctx, bdb, s, true)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.IDs, want.IDs) || got.Relaxed != want.Relaxed || len(got.IDs) == 0 && q != "xyzzyplugh" {
				t.Errorf("%s %s: %d candidates, want %d", q, when, len(got.IDs), len(want.IDs))
				continue
			}
			gs, ws := db.CandidateScores(got), db.CandidateScores(want)
			for i := range gs {
				if gs[i] != ws[i] {
					t.Errorf("%s %s: paper %d scores %v, FTS5 %v", q, when, got.IDs[i], gs[i], ws[i])
					break
				}
			}
		}
	}
	check("at first")
	check("with the counts cached")
	var top db.Paper
	if err := bdb.NewSelect().Model(&top).Where("arxiv_id IS NOT NULL").Order("citation_count DESC", "id").Limit(1).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	added := &db.Paper{Title: "Field theory of the quantum monopole", Abstract: "The field, the field, the field.", ArxivID: "9999.00001", CitationCount: 500}
	if _, err := bdb.NewInsert().Model(added).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	check("after an insert")
	if _, err := bdb.NewRaw("UPDATE papers SET abstract = 'A field theory of the gauge theory on the lattice.' WHERE id = ?", top.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	check("after an update")
	if _, err := bdb.NewDelete().Model(added).WherePK().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	check("after a delete")
	// A word outside ASCII: FTS5's tokenizer, not Go's tables, says how
	// the index splits it.
	sq, err := db.ParseSearchQuery("ελλάδα")
	if err != nil {
		t.Fatal(err)
	}
	log.take()
	if _, err := db.SearchCandidates(ctx, bdb, db.PaperSearch{Query: sq}, true); err != nil {
		t.Fatal(err)
	}
	if sent := log.take(); len(sent) != 1 || !strings.Contains(sent[0], "bm25(") {
		t.Errorf("a word outside ASCII: sent %d statements, want FTS5's bm25 alone", len(sent))
	}
}
