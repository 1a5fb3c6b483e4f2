package vector

import (
	"context"
	"hash/fnv"
	"strings"
	"unicode"
)

// HashedWords is a deterministic stand-in for a text embedding model, for
// tests and for trying the semantic search without one: the sum of one
// pseudo-random ±1 vector of dimension dim per word of text (lower-cased,
// split at anything not a letter or digit). Texts sharing words are near;
// it knows no synonyms.
func HashedWords(text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64() | 1
		for i := range v {
			// xorshift64: a word's components, from its hash.
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v[i] += float32(int(x&1)*2 - 1)
		}
	}
	return v
}

// HashedEmbedder is HashedWords of dimension dim as a QueryEmbedder.
func HashedEmbedder(dim int) QueryEmbedder {
	return func(_ context.Context, text string) ([]float32, error) { return HashedWords(text, dim), nil }
}
