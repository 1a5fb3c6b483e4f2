package topics

import "testing"

// TestSpell: a topic's name spells its words as its papers do: the
// plural or singular its papers use more, the capitals of a name
// ("Higgs", "SU") where a writer chose them, not where a sentence's start
// or a title's style put them; a word only ever capitalised by style in
// the topic is spelled as the rest of the archive spells it.
func TestSpell(t *testing.T) {
	papers := []struct{ title, abstract string }{
		{"Higgs bosons and black holes", "The Higgs boson near black holes. Black holes radiate; theories of them differ."},
		{"Theory of black holes", "Theory is hard. Black holes again, and the SU(2) theory of a black hole."},
		{"A New Perspective On Black Holes", "Higgs fields."},
		{"Gravity waves", "This perspective on waves."},
	}
	h := Hierarchy{Top: []int{0, 0, 0, 1}, Sub: []int{-1, -1, -1, -1},
		Topics: []Cluster{{Level: 0, Parent: -1}, {Level: 0, Parent: -1}}}
	picked := [][]string{{"higg", "black hole", "theory", "su", "perspective"}, {}}
	s := newSpeller(&h, picked)
	for i, p := range papers {
		s.add(i, p.title, p.abstract)
	}
	if got, want := s.name(0, picked[0]), "Higgs, black holes, theory, SU, perspective"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	if got := s.name(1, picked[1]); got != "miscellaneous" {
		t.Errorf("a topic of no terms is named %q, want miscellaneous", got)
	}
}
