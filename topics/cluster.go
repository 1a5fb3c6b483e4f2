package topics

import (
	"cmp"
	"errors"
	"math"
	"slices"

	"github.com/papergraph/papergraph/vector"
)

// maxSample is the most vectors the broad topics are fitted to.
const maxSample = 20000

// Hierarchy is a clustering of papers' vectors into broad topics and
// topics within them, numbered as a build stores them: broad topics by
// size, largest first, then the topics within each broad one by size.
type Hierarchy struct {
	// Top and Sub are the topic of each vector at level 0 and 1, as an
	// index of Topics; Sub is -1 for a vector whose broad topic was too
	// small to divide.
	Top, Sub []int
	// Topics are the topics, broad ones first: Topics[i].Parent is the
	// index of a level 1 topic's broad topic, -1 for a broad one.
	Topics []Cluster
}

// Cluster is one topic of a Hierarchy.
type Cluster struct {
	Level    int
	Parent   int
	Size     int
	Centroid []float32
	Name     string
}

// TopK is the number of broad topics of n papers: about a fifth of the
// square root, from 2 to 40, so that a broad topic reads like an arXiv
// subfield.
func TopK(n int) int {
	return min(40, max(2, int(math.Round(math.Sqrt(float64(n))/5))))
}

// SubK is the number of topics within a broad topic of n papers: a
// quarter of the square root, from 2 to 12; none below 40 papers.
func SubK(n int) int {
	if n < 40 {
		return 0
	}
	return min(12, max(2, int(math.Round(math.Sqrt(float64(n))/4))))
}

// maxSubSample is the most vectors a topic within a broad one is
// fitted to: a larger broad topic is divided by an even sample of its
// papers, and each of them then joins the nearest topic within it.
var maxSubSample = 10000

// heldBytes bounds the vectors a build holds at once beyond the broad
// sample: the samples of the broad topics being divided, gathered a group
// of broad topics a reading, so that memory stays the same whatever the
// archive's size or the vectors' length.
var heldBytes = 256 << 20

// assignChunk is how many vectors a reading gathers before assigning
// them to their nearest centroids in parallel.
const assignChunk = 4096

// eachVector reads the vectors to cluster, the same ones in the same
// order at every call, calling fn with each one's index (0, 1, ...) and
// the vector, which fn may keep; an error from fn stops it.
type eachVector func(fn func(i int, v []float32) error) error

// ClusterVectors groups unit vectors vs (in paper id order) into a Hierarchy,
// unnamed. The same vectors give the same Hierarchy.
func ClusterVectors(vs [][]float32) Hierarchy {
	h, _ := cluster(len(vs), func(fn func(int, []float32) error) error {
		for i, v := range vs {
			if err := fn(i, v); err != nil {
				return err
			}
		}
		return nil
	})
	return h
}

// cluster is ClusterVectors of the n vectors each reads, which it reads
// several times rather than holding them: it holds the broad topics'
// sample, a bounded part of the vectors at a time (heldBytes), and a few
// numbers a vector.
func cluster(n int, each eachVector) (Hierarchy, error) {
	h := Hierarchy{Top: make([]int, n), Sub: make([]int, n)}
	if n == 0 {
		return h, nil
	}
	// The broad topics are fitted to an even sample of at most
	// maxSample vectors, and every vector then joins the nearest: as
	// good broad topics at a fixed cost, whatever the archive's size.
	step := (n + maxSample - 1) / maxSample
	sample := make([][]float32, 0, min(n, maxSample))
	if err := each(func(i int, v []float32) error {
		if i%step == 0 {
			sample = append(sample, v)
		}
		return nil
	}); err != nil {
		return h, err
	}
	if len(sample) == 0 {
		return h, errVectorsChanged
	}
	dim := len(sample[0])
	_, centroids := kmeans(sample, TopK(n), 0)
	sample = nil
	top := make([]int, n)
	sums := newSums(len(centroids), dim)
	if err := assignEach(each, top, func(int) [][]float32 { return centroids }, func(i int, v []float32) {
		sums.add(top[i], v)
	}); err != nil {
		return h, err
	}
	centroids = sums.unit()
	order := bySize(top, len(centroids))
	for _, c := range order {
		h.Topics = append(h.Topics, Cluster{Level: 0, Parent: -1, Centroid: centroids[c]})
	}
	rank := make([]int, len(centroids))
	for i, c := range order {
		rank[c] = i
	}
	for i, c := range top {
		h.Top[i] = rank[c]
		h.Topics[rank[c]].Size++
		h.Sub[i] = -1
	}
	subs, err := divide(each, &h, dim)
	if err != nil {
		return h, err
	}
	for t, sub := range subs {
		if sub.centroids == nil {
			continue
		}
		first := len(h.Topics)
		subOrder := bySizes(sub.count)
		subRank := make([]int, len(sub.centroids))
		for r, c := range subOrder {
			subRank[c] = r
			h.Topics = append(h.Topics, Cluster{Level: 1, Parent: t, Centroid: sub.centroids[c], Size: sub.count[c]})
		}
		sub.rank = subRank
		sub.first = first
		subs[t] = sub
	}
	for i, t := range h.Top {
		if s := subs[t]; s.centroids != nil {
			h.Sub[i] = s.first + s.rank[h.Sub[i]]
		}
	}
	return h, nil
}

// errVectorsChanged says the vectors read again were not those read
// first.
var errVectorsChanged = errors.New("topics: the papers' vectors changed during the build: run papergraph topics again")

// division is how a broad topic is divided: its topics' centroids, and
// how many of its vectors each took.
type division struct {
	centroids [][]float32
	count     []int
	rank      []int // topic index → rank by size
	first     int   // the index in Hierarchy.Topics of its first topic
}

// divide divides each broad topic of h large enough into topics, setting
// h.Sub of its vectors to the index of their topic among its topics.
// Broad topics of at most maxSubSample vectors are divided by k-means on
// all of them; larger ones by k-means on an even sample, after which every
// vector joins the nearest topic and the centroids become the means of
// the vectors that joined. The broad topics' vectors are gathered a group
// at a time, a reading of the vectors a group.
func divide(each eachVector, h *Hierarchy, dim int) ([]division, error) {
	subs := make([]division, len(h.Topics))
	steps, held := make([]int, len(h.Topics)), make([]int, len(h.Topics))
	for t, c := range h.Topics {
		steps[t] = (c.Size + maxSubSample - 1) / maxSubSample
		if SubK(c.Size) >= 2 {
			held[t] = (c.Size + steps[t] - 1) / steps[t]
		}
	}
	budget := max(1, heldBytes/(4*dim+32))
	sampled := false
	for lo := 0; lo < len(h.Topics); {
		hi, total := lo, 0
		for hi < len(h.Topics) && (hi == lo || total+held[hi] <= budget) {
			total += held[hi]
			hi++
		}
		vecs, idx := make([][][]float32, hi-lo), make([][]int, hi-lo)
		seen := make([]int, hi-lo)
		err := each(func(i int, v []float32) error {
			t := h.Top[i]
			if t < lo || t >= hi || held[t] == 0 {
				return nil
			}
			if seen[t-lo]%steps[t] == 0 {
				vecs[t-lo], idx[t-lo] = append(vecs[t-lo], v), append(idx[t-lo], i)
			}
			seen[t-lo]++
			return nil
		})
		if err != nil {
			return nil, err
		}
		for t := lo; t < hi; t++ {
			if held[t] == 0 {
				continue
			}
			if len(vecs[t-lo]) != held[t] {
				return nil, errVectorsChanged
			}
			assign, cs := kmeans(vecs[t-lo], SubK(h.Topics[t].Size), uint64(t+1))
			subs[t] = division{centroids: cs, count: make([]int, len(cs))}
			if steps[t] > 1 {
				sampled = true
				continue
			}
			for j, i := range idx[t-lo] {
				h.Sub[i] = assign[j]
				subs[t].count[assign[j]]++
			}
		}
		lo = hi
	}
	if !sampled {
		return subs, nil
	}
	if err := assignSampled(each, h, subs, steps, dim); err != nil {
		return nil, err
	}
	return subs, nil
}

// assignSampled places every paper of a topic divided from a sample
// (steps[t] > 1) in its nearest sub-topic, counts them, and moves each
// such sub-topic's centroid to the mean of its papers.
func assignSampled(each eachVector, h *Hierarchy, subs []division, steps []int, dim int) error {
	sums := make([]sums, len(subs))
	for t := range subs {
		if steps[t] > 1 && subs[t].centroids != nil {
			sums[t] = newSums(len(subs[t].centroids), dim)
		}
	}
	err := assignEach(each, h.Sub, func(i int) [][]float32 {
		if t := h.Top[i]; sums[t] != nil {
			return subs[t].centroids
		}
		return nil
	}, func(i int, v []float32) {
		if t := h.Top[i]; sums[t] != nil {
			sums[t].add(h.Sub[i], v)
			subs[t].count[h.Sub[i]]++
		}
	})
	if err != nil {
		return err
	}
	for t, s := range sums {
		if s != nil {
			subs[t].centroids = s.unit()
		}
	}
	return nil
}

// bySize is the clusters 0..k-1 of assign, largest first, the lower
// index first among equals.
func bySize(assign []int, k int) []int {
	size := make([]int, k)
	for _, c := range assign {
		size[c]++
	}
	return bySizes(size)
}

// bySizes is the clusters of the sizes given, largest first, the lower
// index first among equals.
func bySizes(size []int) []int {
	order := make([]int, len(size))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(size[b], size[a]) })
	return order
}

// sums add up the vectors of k clusters, in the order added, to find
// their means.
type sums [][]float64

func newSums(k, dim int) sums {
	s := make(sums, k)
	for c := range s {
		s[c] = make([]float64, dim)
	}
	return s
}

func (s sums) add(c int, v []float32) {
	for j, x := range v {
		s[c][j] += float64(x)
	}
}

// unit are the clusters' unit means.
func (s sums) unit() [][]float32 {
	out := make([][]float32, len(s))
	for c := range out {
		out[c] = make([]float32, len(s[c]))
		for j := range out[c] {
			out[c][j] = float32(s[c][j])
		}
		vector.Normalize(out[c])
	}
	return out
}

// assignEach reads the vectors and sets assign[i] of each vector i that
// centroidsOf(i) gives centroids for (nil: none) to its nearest, a chunk
// of vectors at a time in parallel; then, in the vectors' order, it calls
// added with each vector read.
func assignEach(each eachVector, assign []int, centroidsOf func(i int) [][]float32, added func(i int, v []float32)) error {
	chunk := make([][]float32, 0, assignChunk)
	lo := 0
	flush := func() {
		parallel(len(chunk), func(j int) {
			if cs := centroidsOf(lo + j); cs != nil {
				assign[lo+j], _ = nearest(chunk[j], cs)
			}
		})
		for j, v := range chunk {
			added(lo+j, v)
		}
		lo += len(chunk)
		chunk = chunk[:0]
	}
	err := each(func(i int, v []float32) error {
		if i != lo+len(chunk) || i >= len(assign) {
			return errVectorsChanged
		}
		chunk = append(chunk, v)
		if len(chunk) == cap(chunk) {
			flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	flush()
	if lo != len(assign) {
		return errVectorsChanged
	}
	return nil
}

// File finds the topic of a new vector v (a unit vector): the nearest
// broad topic's centroid, and within it the nearest of its topics
// (sub -1 when it has none). Indexes are of topics.
func File(topics []Cluster, v []float32) (top, sub int) {
	top, sub = -1, -1
	var bestTop, bestSub float32
	for i, t := range topics {
		if t.Level != 0 {
			continue
		}
		if s := dot(v, t.Centroid); top < 0 || s > bestTop {
			top, bestTop = i, s
		}
	}
	for i, t := range topics {
		if t.Level != 1 || t.Parent != top {
			continue
		}
		if s := dot(v, t.Centroid); sub < 0 || s > bestSub {
			sub, bestSub = i, s
		}
	}
	return top, sub
}
