package db

import (
	"slices"
	"testing"
)

// TestFuseHybrid: the papers matching every word of the query come first
// in keyword order, whatever the vectors say; the others are fused, a
// keyword rank weighed by the share of the words matched and a semantic
// rank by hybridSemanticWeight.
func TestFuseHybrid(t *testing.T) {
	q, err := ParseSearchQuery("rotating black hole entropy")
	if err != nil {
		t.Fatal(err)
	}
	rows := func(scores map[int64]float64) []candidate {
		var out []candidate
		for id, s := range scores {
			out = append(out, candidate{ID: id, Score: s})
		}
		return out
	}
	// A relaxed candidate scores its words matched plus a fraction.
	relaxed := Candidates{Relaxed: true, rows: rows(map[int64]float64{1: 4.2, 2: 4.6, 3: 2.9, 4: 2.8, 5: 3.1})}
	sem := Candidates{rows: rows(map[int64]float64{9: 0.9, 4: 0.8, 3: 0.7, 1: 0.1})}
	tests := []struct {
		name    string
		kw, sem Candidates
		want    []int64
	}{
		// 2 and 1 match all four words; 4 and 3 match two and are found by
		// the vectors too; 9 by the vectors alone, first there.
		{"relaxed", relaxed, sem, []int64{2, 1, 4, 3, 5, 9}},
		// A strict keyword side matched every word: its order stands.
		{"strict", Candidates{rows: rows(map[int64]float64{7: 0.3, 8: 0.5})}, sem, []int64{8, 7, 9, 4, 3, 1}},
		{"no vectors", relaxed, Candidates{}, []int64{2, 1, 5, 3, 4}},
	}
	for _, tt := range tests {
		got := FuseHybrid(q, tt.kw, tt.sem)
		if !slices.Equal(got.IDs, tt.want) {
			t.Errorf("%s: fused %v, want %v", tt.name, got.IDs, tt.want)
		}
	}
}
