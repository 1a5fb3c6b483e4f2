package topics

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/papergraph/papergraph/vector"
)

// blobs are n unit vectors of dim numbers around a few random centres.
func blobs(n, dim int) [][]float32 {
	rng := rand.New(rand.NewPCG(1, 2))
	centres := make([][]float32, 6)
	for c := range centres {
		centres[c] = make([]float32, dim)
		for j := range centres[c] {
			centres[c][j] = float32(rng.NormFloat64())
		}
	}
	vs := make([][]float32, n)
	for i := range vs {
		c := centres[rng.IntN(len(centres))]
		vs[i] = make([]float32, dim)
		for j := range vs[i] {
			vs[i][j] = c[j] + float32(0.6*rng.NormFloat64())
		}
		vector.Normalize(vs[i])
	}
	return vs
}

// TestClusterSampledDivision: broad topics larger than maxSubSample are
// divided by topics fitted to a sample, which every paper of theirs then
// joins; the result is a whole hierarchy (every vector in a broad topic
// and, when it is divided, in one of its topics, the sizes and order
// right, each divided topic's centroid the mean of its vectors), and it
// is the same whether the broad topics' vectors are gathered in one
// reading or a few.
func TestClusterSampledDivision(t *testing.T) {
	defer func(s, b int) { maxSubSample, heldBytes = s, b }(maxSubSample, heldBytes)
	vs := blobs(3000, 16)
	maxSubSample = 100
	one := ClusterVectors(vs)
	heldBytes = 300 * (4*16 + 32) // a few broad topics a reading
	few := ClusterVectors(vs)
	if !reflect.DeepEqual(one, few) {
		t.Fatal("gathering the broad topics' vectors in several readings changed the topics")
	}
	h := one
	if len(h.Top) != len(vs) || len(h.Sub) != len(vs) {
		t.Fatalf("%d and %d assignments for %d vectors", len(h.Top), len(h.Sub), len(vs))
	}
	size := make([]int, len(h.Topics))
	members := make([][][]float32, len(h.Topics))
	divided := 0
	for i := range vs {
		top, sub := h.Top[i], h.Sub[i]
		if h.Topics[top].Level != 0 {
			t.Fatalf("vector %d filed under topic %d of level %d as its broad topic", i, top, h.Topics[top].Level)
		}
		size[top]++
		if sub < 0 {
			continue
		}
		if h.Topics[sub].Level != 1 || h.Topics[sub].Parent != top {
			t.Fatalf("vector %d in topic %d, not within its broad topic %d", i, sub, top)
		}
		size[sub]++
		members[sub] = append(members[sub], vs[i])
	}
	for i, c := range h.Topics {
		if c.Size != size[i] {
			t.Errorf("topic %d says %d vectors, has %d", i, c.Size, size[i])
		}
		if i > 0 && c.Level == h.Topics[i-1].Level && c.Parent == h.Topics[i-1].Parent && c.Size > h.Topics[i-1].Size {
			t.Errorf("topic %d (%d vectors) after a smaller one", i, c.Size)
		}
		if c.Level != 1 {
			continue
		}
		divided++
		mean := means(members[i], make([]int, len(members[i])), 1, 16)[0]
		for j := range mean {
			if math.Abs(float64(mean[j]-c.Centroid[j])) > 1e-6 {
				t.Fatalf("topic %d's centroid is not the mean of its vectors", i)
			}
		}
	}
	if divided == 0 {
		t.Fatal("no broad topic was divided")
	}
}
