package db

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestVectorTokensAreSearchWords: on ASCII text the importer's tokens are
// searchText's words (the one definition of a word that queries and both
// indexes share), but for the scientific-notation cut, which splits a word
// in two and never changes its letters.
func TestVectorTokensAreSearchWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "0015eeEaxZ .-_/:'\n+"
	texts := []string{"The 1e5abc X-ray: 12E34e56 of ABC abc_0x1F, 007e1 5e", "", "   ", "ABC"}
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		var got []string
		eachVectorToken(strings.ToLower(text), func(tok string) bool {
			got = append(got, tok)
			return true
		})
		var want []string
		for _, w := range searchText(text) {
			if cut := scientificPrefix(w); cut > 0 && cut < len(w) {
				want = append(want, w[:cut], w[cut:])
			} else {
				want = append(want, w)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q: tokens %q, searchText's words cut %q", text, got, want)
		}
	}
}
