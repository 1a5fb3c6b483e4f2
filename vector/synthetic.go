package vector

import (
	"context"
	"math"
	"math/rand/v2"
)

// Synthetic is a Source of n vectors of dimension dim shaped like text
// embeddings of an archive: fields (one per 50,000 vectors, at least 4)
// are random unit directions; topics (one per 500 vectors, at least 8)
// are a field's direction plus Gaussian noise of norm 0.8; a vector is
// its topic's direction plus Gaussian noise whose norm is spread. Papers
// of a topic are then nearest each other, then those of its field. ids
// are 1 to n. The same seed gives the same vectors.
func Synthetic(n, dim int, spread float64, seed uint64) Source {
	return synthetic(n, n, dim, spread, seed, 1)
}

// synthetic is Synthetic's n vectors of a stream, drawn from the topics
// of a corpus of the given size.
func synthetic(n, corpus, dim int, spread float64, seed, stream uint64) Source {
	return func(ctx context.Context, fn func(id int64, v []float32) error) error {
		topics := topicsOf(corpus, dim, seed)
		rng := rand.New(rand.NewPCG(seed, stream))
		sd := spread / math.Sqrt(float64(dim))
		v := make([]float32, dim)
		for i := range n {
			if i%4096 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			t := topics[rng.IntN(len(topics))]
			for j := range v {
				v[j] = t[j] + float32(rng.NormFloat64()*sd)
			}
			if err := fn(int64(i+1), v); err != nil {
				return err
			}
		}
		return nil
	}
}

// topicsOf is the unit topic directions of a Synthetic corpus of n.
func topicsOf(n, dim int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 0))
	fields := make([][]float32, max(4, n/50_000))
	for i := range fields {
		fields[i] = gaussian(rng, dim, 1)
		Normalize(fields[i])
	}
	topics := make([][]float32, max(8, n/500))
	sd := 0.8 / math.Sqrt(float64(dim))
	for i := range topics {
		f := fields[i%len(fields)]
		t := gaussian(rng, dim, sd)
		for j := range t {
			t[j] += f[j]
		}
		Normalize(t)
		topics[i] = t
	}
	return topics
}

// Queries are n query vectors for a Synthetic source of the same dim,
// spread and seed: each near a topic of the source's.
func Queries(n, corpus, dim int, spread float64, seed uint64) [][]float32 {
	var out [][]float32
	_ = synthetic(n, corpus, dim, spread, seed, 2)(context.Background(), func(_ int64, v []float32) error {
		out = append(out, append([]float32(nil), v...))
		return nil
	})
	return out
}

// gaussian is a vector of dim independent normal components of standard
// deviation sd.
func gaussian(rng *rand.Rand, dim int, sd float64) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * sd)
	}
	return v
}
