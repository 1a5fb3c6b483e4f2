package vector

import (
	"container/heap"

	"slices"
)

// Search returns the k vectors nearest q, best first. It scans the lists
// nearest q until Options.Scan vectors are scanned, keeps the
// rerankFactor × k best by their int8 codes and orders those by the float
// query against their codes.
func (x *Index) Search(q []float32, k int) ([]Hit, error) {
	u, err := x.unit(q)
	if err != nil || k <= 0 {
		return nil, err
	}
	qc := make([]int8, x.dim)
	quantize(u, qc)
	x.mu.RLock()
	defer x.mu.RUnlock()
	pool := &candHeap{}
	keep := max(rerankFactor*k, rerankMin)
	scanned := 0
	for _, li := range x.probeOrder(u) {
		l := &x.lists[li]
		for p, id := range l.ids {
			s := dotI8(qc, l.codes[p*x.dim:(p+1)*x.dim]) * l.scales[p]
			if len(*pool) < keep {
				heap.Push(pool, cand{id: id, list: int32(li), pos: int32(p), score: s})
			} else if s > (*pool)[0].score {
				(*pool)[0] = cand{id: id, list: int32(li), pos: int32(p), score: s}
				heap.Fix(pool, 0)
			}
		}
		if scanned += len(l.ids); scanned >= x.scan {
			break
		}
	}
	hits := make([]Hit, len(*pool))
	for i, c := range *pool {
		l := &x.lists[c.list]
		hits[i] = Hit{ID: c.id, Score: dotF8(u, l.codes[int(c.pos)*x.dim:(int(c.pos)+1)*x.dim]) * l.scales[c.pos]}
	}
	sortHits(hits)
	return hits[:min(k, len(hits))], nil
}

// SetScan sets Options.Scan of later searches: the fewest vectors a
// search scans (DefaultScan when n <= 0).
func (x *Index) SetScan(n int) {
	if n <= 0 {
		n = DefaultScan
	}
	x.mu.Lock()
	x.scan = n
	x.mu.Unlock()
}

// rerankFactor and rerankMin size the pool a search re-ranks: the int8
// query's rounding moves a score by about 1/127 of it, which reorders
// neighbours of near scores only, so a pool a few times k holds the k
// best by the float query.
const (
	rerankFactor = 3
	rerankMin    = 64
)

// probeOrder is the lists' indexes, the nearest u first.
func (x *Index) probeOrder(u []float32) []int {
	n := len(x.lists)
	order := make([]int, n)
	if n == 1 {
		return order
	}
	sims := make([]float32, n)
	for c := range n {
		order[c] = c
		sims[c] = dotF(u, x.centroids[c*x.dim:(c+1)*x.dim])
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case sims[a] > sims[b]:
			return -1
		case sims[a] < sims[b]:
			return 1
		}
		return a - b
	})
	return order
}

// cand is a vector of the re-rank pool, scored by its code.
type cand struct {
	id        int64
	list, pos int32
	score     float32
}

// candHeap is a min-heap of the pool: its root is the worst kept.
type candHeap []cand

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(v any)        { *h = append(*h, v.(cand)) }
func (h *candHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// dotF is the dot product of two float vectors of one length.
func dotF(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// dotF8 is the dot product of a float vector and an int8 code.
func dotF8(a []float32, b []int8) float32 {
	b = b[:len(a)]
	var s float32
	for i, f := range a {
		s += f * float32(b[i])
	}
	return s
}

// dotI8 is the dot product of two int8 codes of one length, times the
// query code's scale of 1/127 of its largest component set aside: the
// caller multiplies by the stored code's scale, and the query's common
// factor orders nothing.
func dotI8(a, b []int8) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += int32(aa[0])*int32(bb[0]) + int32(aa[4])*int32(bb[4])
		s1 += int32(aa[1])*int32(bb[1]) + int32(aa[5])*int32(bb[5])
		s2 += int32(aa[2])*int32(bb[2]) + int32(aa[6])*int32(bb[6])
		s3 += int32(aa[3])*int32(bb[3]) + int32(aa[7])*int32(bb[7])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return float32(s0 + s1 + s2 + s3)
}
