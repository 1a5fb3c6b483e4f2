package topics

import (
	"cmp"
	"math"
	"slices"
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

// ClusterVectors groups unit vectors vs (in paper id order) into a Hierarchy,
// unnamed. The same vectors give the same Hierarchy.
func ClusterVectors(vs [][]float32) Hierarchy {
	h := Hierarchy{Top: make([]int, len(vs)), Sub: make([]int, len(vs))}
	if len(vs) == 0 {
		return h
	}
	// The broad topics are fitted to an even sample of at most
	// maxSample vectors, and every vector then joins the nearest: as
	// good broad topics at a fixed cost, whatever the archive's size.
	sample := vs
	if len(vs) > maxSample {
		step := (len(vs) + maxSample - 1) / maxSample
		sample = make([][]float32, 0, maxSample)
		for i := 0; i < len(vs); i += step {
			sample = append(sample, vs[i])
		}
	}
	_, centroids := kmeans(sample, TopK(len(vs)), 0)
	top := make([]int, len(vs))
	for i := range top {
		top[i] = -1
	}
	assignAll(vs, centroids, top)
	centroids = means(vs, top, len(centroids), len(vs[0]))
	order := bySize(top, len(centroids))
	for _, c := range order {
		h.Topics = append(h.Topics, Cluster{Level: 0, Parent: -1, Centroid: centroids[c]})
	}
	rank := make([]int, len(centroids))
	for i, c := range order {
		rank[c] = i
	}
	members := make([][]int, len(order))
	for i, c := range top {
		h.Top[i] = rank[c]
		h.Topics[rank[c]].Size++
		members[rank[c]] = append(members[rank[c]], i)
	}
	for i := range h.Sub {
		h.Sub[i] = -1
	}
	for t, idx := range members {
		k := SubK(len(idx))
		if k < 2 {
			continue
		}
		sub := make([][]float32, len(idx))
		for j, i := range idx {
			sub[j] = vs[i]
		}
		assign, cs := kmeans(sub, k, uint64(t+1))
		first := len(h.Topics)
		subOrder := bySize(assign, len(cs))
		subRank := make([]int, len(cs))
		for r, c := range subOrder {
			subRank[c] = r
			h.Topics = append(h.Topics, Cluster{Level: 1, Parent: t, Centroid: cs[c]})
		}
		for j, c := range assign {
			h.Sub[idx[j]] = first + subRank[c]
			h.Topics[first+subRank[c]].Size++
		}
	}
	return h
}

// bySize is the clusters 0..k-1 of assign, largest first, the lower
// index first among equals.
func bySize(assign []int, k int) []int {
	size := make([]int, k)
	for _, c := range assign {
		size[c]++
	}
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(size[b], size[a]) })
	return order
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
