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
// three years of the demo set (the first alone under -short), whose texts
// hold TeX markup and letters outside ASCII; and again after the index changes (an insert, an update
// of a text, a delete), which the counts cached of the phrases must
// follow. A query with a word outside ASCII is left to FTS5, as is one
// of few matches once its counts are cached.
func TestGoBM25MatchesFTS5(t *testing.T) {
	ctx := context.Background()
	bdb := dbtest.Open(t, dbtest.NewSeeded(t, "sqlite", scoreSeed()))
	log := &statementLog{}
	bdb.AddQueryHook(log)
	// Past its first request, a query of few matches is scored by FTS5.
	for i, want := range []bool{false, true} {
		sq, err := db.ParseSearchQuery("monopole")
		if err != nil {
			t.Fatal(err)
		}
		log.take()
		if _, err := db.SearchCandidates(ctx, bdb, db.PaperSearch{Query: sq}, true); err != nil {
			t.Fatal(err)
		}
		if sent := log.take(); len(sent) != 1 || strings.Contains(sent[0], "bm25(") != want {
			t.Errorf("a rare word, request %d: sent %d statements, want 1 (by FTS5's bm25: %v)", i+1, len(sent), want)
		}
	}
	defer db.SetBM25MinMatches(0)()
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

// TestIndexTokens checks the tokens the Go scorer counts against the
// text the index is given (search_fold) split as unicode61 splits it, for
// the texts of three years of the demo set and some of TeX markup,
// combining marks and broken UTF-8.
func TestIndexTokens(t *testing.T) {
	ctx := context.Background()
	bdb := dbtest.Open(t, dbtest.NewSeeded(t, "sqlite", pscp1992to94))
	var texts []string
	if err := bdb.NewRaw("SELECT title FROM papers UNION ALL SELECT abstract FROM papers WHERE abstract IS NOT NULL").Scan(ctx, &texts); err != nil {
		t.Fatal(err)
	}
	texts = append(texts, "Kucha\\v{r} and G{\\\"o}del", "Schro\u0308dinger", "a \u0301 b", "x\u0301y", "bad \xff byte\xc3", "Łódź, Ørsted", "x² + α", "ΑΒΓ İstanbul")
	for _, s := range texts {
		want := strings.FieldsFunc(db.IndexFold(s), func(r rune) bool {
			return r < 0x80 && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
		})
		got := db.IndexTokens(s)
		for i := range want {
			want[i] = strings.ToLower(want[i])
		}
		for i := range got {
			got[i] = strings.ToLower(got[i])
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: tokens %q, want %q", s, got, want)
		}
	}
}
