// Package vector is papergraph's nearest-neighbour index of paper
// embeddings: an inverted-file index (IVF) held in memory, with vectors
// quantised to int8.
//
// Every vector is normalised to unit length, so the score of a pair is
// their cosine similarity. A coarse quantiser (a two-level spherical
// k-means over a sample) splits the vectors into lists of about
// listTarget vectors; a search ranks the lists' centroids against the
// query, scans the nearest lists until it has seen at least Options.Scan
// vectors, keeps the best candidates by an integer dot product of the
// int8 codes, and re-ranks them with the float query against each
// candidate's code and scale. A vector costs Dim bytes of code, 4 of
// scale, 8 of id and an entry in the id map: about Dim + 40 bytes.
//
// An exhaustive scan would cost Dim multiply-adds per vector of the
// archive per query; the lists bound a search's work by Options.Scan
// whatever the archive's size, and the int8 codes hold four times as many
// vectors in memory as float32 would.
package vector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Source yields the vectors to index, each with the id of its paper.
// It stops, returning fn's error, when fn returns one.
type Source func(ctx context.Context, fn func(id int64, v []float32) error) error

// QueryEmbedder turns a query's text into a vector of the index's
// dimension, by the model that embedded the papers.
type QueryEmbedder func(ctx context.Context, text string) ([]float32, error)

// Hit is one paper near a query, with the cosine similarity of its vector
// to the query's (as its int8 code holds it).
type Hit struct {
	ID    int64
	Score float32
}

// Options tune an index. The zero value picks each from the number of
// vectors.
type Options struct {
	// Lists is the number of inverted lists; 0 gives one per listTarget
	// vectors, and a single list (an exhaustive scan) below
	// 2 × listTarget vectors.
	Lists int
	// Scan is the fewest vectors a search scores by their codes; it
	// probes lists nearest first until it has scanned that many. 0 is
	// DefaultScan.
	Scan int
	// Seed seeds the k-means sample and its initial centroids, so that a
	// build of the same vectors gives the same index.
	Seed uint64
}

// listTarget is the number of vectors per list the build aims at: with
// fewer, ranking the centroids outweighs scanning; with more, a search
// scans more of a list that lies mostly far from the query.
const listTarget = 1000

// DefaultScan is Options.Scan's default.
const DefaultScan = 50_000

// ErrDim is the error of a vector whose dimension is not the index's.
var ErrDim = errors.New("vector: dimension mismatch")

// list is one inverted list: its vectors' ids, codes (Dim bytes each, in
// the ids' order) and scales (a code times its scale is the unit vector).
type list struct {
	ids    []int64
	codes  []int8
	scales []float32
}

// Index is an in-memory IVF index. Search and Add may be called from many
// goroutines.
type Index struct {
	dim  int
	scan int
	// centroids are the lists' unit centroids, Dim floats each.
	centroids []float32

	mu    sync.RWMutex
	lists []list
	// at locates an id's vector: list index << 32 | position.
	at map[int64]uint64
}

// Dim is the dimension of the index's vectors.
func (x *Index) Dim() int { return x.dim }

// Len is the number of vectors indexed.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.at)
}

// Lists is the number of inverted lists.
func (x *Index) Lists() int { return len(x.lists) }

// Bytes is the memory the index's vectors take: codes, scales, ids and
// the id map, and the centroids.
func (x *Index) Bytes() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var n int64
	for _, l := range x.lists {
		n += int64(cap(l.codes)) + 4*int64(cap(l.scales)) + 8*int64(cap(l.ids))
	}
	// A Go map entry of 16 bytes with its control byte, at the map's
	// load factor of 7/8.
	n += int64(len(x.at)) * 17 * 8 / 7
	return n + 4*int64(len(x.centroids))
}

// Normalize scales v to unit length in place; a zero vector stays zero.
func Normalize(v []float32) {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// quantize writes v's int8 code into code and returns its scale: the
// largest magnitude maps to ±127.
func quantize(v []float32, code []int8) float32 {
	var m float32
	for _, f := range v {
		m = max(m, f, -f)
	}
	if m == 0 {
		clear(code)
		return 0
	}
	k := 127 / m
	for i, f := range v {
		code[i] = int8(math.Round(float64(f * k)))
	}
	return m / 127
}

// unit is a normalised copy of v, or ErrDim.
func (x *Index) unit(v []float32) ([]float32, error) {
	if len(v) != x.dim {
		return nil, fmt.Errorf("%w: got %d, want %d", ErrDim, len(v), x.dim)
	}
	u := slices.Clone(v)
	Normalize(u)
	return u, nil
}

// nearestCentroid is the list whose centroid is nearest u.
func (x *Index) nearestCentroid(u []float32) int {
	best, bi := float32(math.Inf(-1)), 0
	for c := 0; c < len(x.centroids)/x.dim; c++ {
		if d := dotF(u, x.centroids[c*x.dim:(c+1)*x.dim]); d > best {
			best, bi = d, c
		}
	}
	return bi
}

// Add indexes v as the vector of paper id, replacing the vector it had.
// A new vector joins the list of its nearest centroid; the centroids stay
// those of the build, so an index grown far past its build is best built
// again.
func (x *Index) Add(id int64, v []float32) error {
	u, err := x.unit(v)
	if err != nil {
		return err
	}
	code := make([]int8, x.dim)
	scale := quantize(u, code)
	li := 0
	if len(x.lists) > 1 {
		li = x.nearestCentroid(u)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if at, ok := x.at[id]; ok {
		l, p := &x.lists[at>>32], int(uint32(at))
		copy(l.codes[p*x.dim:], code)
		l.scales[p] = scale
		return nil
	}
	l := &x.lists[li]
	x.at[id] = uint64(li)<<32 | uint64(len(l.ids))
	l.ids = append(l.ids, id)
	l.codes = append(l.codes, code...)
	l.scales = append(l.scales, scale)
	return nil
}

// Vector is paper id's vector as the index holds it (unit length, to the
// precision of its code), and whether the index has it.
func (x *Index) Vector(id int64) ([]float32, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	at, ok := x.at[id]
	if !ok {
		return nil, false
	}
	l, p := &x.lists[at>>32], int(uint32(at))
	v := make([]float32, x.dim)
	for i, c := range l.codes[p*x.dim : (p+1)*x.dim] {
		v[i] = float32(c) * l.scales[p]
	}
	return v, true
}

// sortHits orders hits best first, lower id first among equals.
func sortHits(hs []Hit) {
	slices.SortFunc(hs, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
	})
}
