package vector

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// flat is the vectors a build has read, before they are split into lists.
type flat struct {
	dim    int
	ids    []int64
	codes  []int8
	scales []float32
}

// read collects src's vectors, normalised and quantised.
func read(ctx context.Context, src Source) (*flat, error) {
	f := &flat{}
	var code []int8
	err := src(ctx, func(id int64, v []float32) error {
		if f.dim == 0 {
			if len(v) == 0 {
				return fmt.Errorf("%w: an empty vector", ErrDim)
			}
			f.dim, code = len(v), make([]int8, len(v))
		}
		if len(v) != f.dim {
			return fmt.Errorf("%w: paper %d has %d, the first had %d", ErrDim, id, len(v), f.dim)
		}
		u := make([]float32, len(v))
		copy(u, v)
		Normalize(u)
		f.scales = append(f.scales, quantize(u, code))
		f.codes = append(f.codes, code...)
		f.ids = append(f.ids, id)
		return nil
	})
	return f, err
}

// decode writes vector i of f into v.
func (f *flat) decode(i int, v []float32) {
	s := f.scales[i]
	for j, c := range f.codes[i*f.dim : (i+1)*f.dim] {
		v[j] = float32(c) * s
	}
}

// New is an empty index of vectors of dimension dim, a single list that
// Add fills: for an archive with no embeddings yet, to be built again
// once it has them.
func New(dim int, opts Options) *Index {
	x := &Index{dim: dim, scan: opts.Scan, at: map[int64]uint64{}, lists: make([]list, 1)}
	if x.scan <= 0 {
		x.scan = DefaultScan
	}
	return x
}

// Build reads every vector of src and indexes them. dim is the dimension
// expected, or 0 to take the first vector's.
func Build(ctx context.Context, src Source, dim int, opts Options) (*Index, error) {
	f, err := read(ctx, src)
	if err != nil {
		return nil, err
	}
	if f.dim == 0 {
		f.dim = dim
	}
	if dim != 0 && f.dim != dim {
		return nil, fmt.Errorf("%w: the vectors have %d, want %d", ErrDim, f.dim, dim)
	}
	x := New(f.dim, opts)
	n := len(f.ids)
	nlist := opts.Lists
	if nlist <= 0 {
		nlist = n / listTarget
		if nlist < 2 {
			nlist = 1
		}
	}
	nlist = min(nlist, max(n, 1))
	assign := make([]int32, n)
	if nlist > 1 {
		g, err := train(ctx, f, nlist, opts.Seed)
		if err != nil {
			return nil, err
		}
		x.centroids = g.leaves
		x.lists = make([]list, len(x.centroids)/f.dim)
		assignAll(f, g, assign)
	}
	x.fill(f, assign)
	return x, ctx.Err()
}

// fill moves f's vectors into the lists assign names, freeing f's arrays.
func (x *Index) fill(f *flat, assign []int32) {
	counts := make([]int, len(x.lists))
	for _, a := range assign {
		counts[a]++
	}
	for i, c := range counts {
		x.lists[i] = list{ids: make([]int64, 0, c), codes: make([]int8, 0, c*x.dim), scales: make([]float32, 0, c)}
	}
	x.at = make(map[int64]uint64, len(f.ids))
	for i, id := range f.ids {
		if at, dup := x.at[id]; dup { // a later vector of a paper replaces its first
			l, p := &x.lists[at>>32], int(uint32(at))
			copy(l.codes[p*x.dim:(p+1)*x.dim], f.codes[i*x.dim:(i+1)*x.dim])
			l.scales[p] = f.scales[i]
			continue
		}
		l := &x.lists[assign[i]]
		x.at[id] = uint64(assign[i])<<32 | uint64(len(l.ids))
		l.ids = append(l.ids, id)
		l.codes = append(l.codes, f.codes[i*x.dim:(i+1)*x.dim]...)
		l.scales = append(l.scales, f.scales[i])
	}
	*f = flat{dim: f.dim}
}

// kmeansIters is the number of Lloyd iterations of each k-means.
const kmeansIters = 8

// samplePerList is the sample a build trains on, per list.
const samplePerList = 40

// train is the unit centroids of nlist lists of f's vectors (about; the
// second level rounds): a spherical k-means of sqrt(nlist) centroids over
// a sample, then one of each centroid's share of the lists over the
// sample's vectors nearest it. Two levels cost sample × 2 sqrt(nlist)
// dot products per iteration where one would cost sample × nlist.
func train(ctx context.Context, f *flat, nlist int, seed uint64) (*groups, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	n := len(f.ids)
	m := min(n, nlist*samplePerList)
	sample := make([]float32, m*f.dim)
	for i, j := range rng.Perm(n)[:m] {
		f.decode(j, sample[i*f.dim:(i+1)*f.dim])
	}
	k1 := max(1, int(math.Round(math.Sqrt(float64(nlist)))))
	top := kmeans(sample, f.dim, k1, rng)
	members := make([][]float32, k1)
	for i := range m {
		v := sample[i*f.dim : (i+1)*f.dim]
		c := nearest(v, top, f.dim)
		members[c] = append(members[c], v...)
	}
	g := &groups{dim: f.dim}
	for c, mem := range members {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cnt := len(mem) / f.dim
		if cnt == 0 {
			continue
		}
		k2 := max(1, int(math.Round(float64(nlist)*float64(cnt)/float64(m))))
		g.centres = append(g.centres, top[c*f.dim:(c+1)*f.dim]...)
		g.from = append(g.from, len(g.leaves)/f.dim)
		g.leaves = append(g.leaves, kmeans(mem, f.dim, min(k2, cnt), rng)...)
	}
	g.from = append(g.from, len(g.leaves)/f.dim)
	return g, nil
}

// groups are the lists' centroids (leaves) as train made them: the
// leaves of group i, leaves from[i] to from[i+1], are the k-means of the
// sample's vectors nearest centre i.
type groups struct {
	dim     int
	centres []float32
	from    []int
	leaves  []float32
}

// groupProbe is the number of groups, nearest first, whose leaves
// assignment compares a vector with: a vector near the border of two
// groups may be nearest a leaf of the other.
const groupProbe = 3

// nearest is the leaf nearest v among those of its groupProbe nearest
// groups.
func (g *groups) nearest(v []float32) int {
	var best [groupProbe]int
	var sims [groupProbe]float32
	for i := range sims {
		sims[i], best[i] = float32(math.Inf(-1)), -1
	}
	for c := 0; c < len(g.from)-1; c++ {
		d := dotF(v, g.centres[c*g.dim:(c+1)*g.dim])
		for i := range sims {
			if d > sims[i] {
				copy(sims[i+1:], sims[i:len(sims)-1])
				copy(best[i+1:], best[i:len(best)-1])
				sims[i], best[i] = d, c
				break
			}
		}
	}
	bs, bi := float32(math.Inf(-1)), 0
	for _, c := range best {
		if c < 0 {
			continue
		}
		for l := g.from[c]; l < g.from[c+1]; l++ {
			if d := dotF(v, g.leaves[l*g.dim:(l+1)*g.dim]); d > bs {
				bs, bi = d, l
			}
		}
	}
	return bi
}

// kmeans is k unit centroids of the vectors in vs (dim floats each) by
// spherical k-means: a vector joins the centroid of highest dot product,
// a centroid is its members' normalised mean, and one left empty takes a
// random vector.
func kmeans(vs []float32, dim, k int, rng *rand.Rand) []float32 {
	n := len(vs) / dim
	cs := make([]float32, k*dim)
	for i, j := range rng.Perm(n)[:k] {
		copy(cs[i*dim:(i+1)*dim], vs[j*dim:(j+1)*dim])
	}
	sums := make([]float32, k*dim)
	counts := make([]int, k)
	for range kmeansIters {
		clear(sums)
		clear(counts)
		for i := range n {
			v := vs[i*dim : (i+1)*dim]
			c := nearest(v, cs, dim)
			counts[c]++
			s := sums[c*dim : (c+1)*dim]
			for j, f := range v {
				s[j] += f
			}
		}
		for c := range k {
			if counts[c] == 0 {
				j := rng.IntN(n)
				copy(sums[c*dim:(c+1)*dim], vs[j*dim:(j+1)*dim])
			}
			Normalize(sums[c*dim : (c+1)*dim])
		}
		cs, sums = sums, cs
	}
	return cs
}

// nearest is the index of the centroid in cs of highest dot product
// with v.
func nearest(v, cs []float32, dim int) int {
	best, bi := float32(math.Inf(-1)), 0
	for c := 0; c < len(cs)/dim; c++ {
		if d := dotF(v, cs[c*dim:(c+1)*dim]); d > best {
			best, bi = d, c
		}
	}
	return bi
}

// assignAll sets assign[i] to the list nearest f's vector i, over
// GOMAXPROCS goroutines. The nearest of all centroids is found through
// their grouping: a vector is compared with sqrt(lists) group centres,
// then with the centroids of its nearest groups.
func assignAll(f *flat, g *groups, assign []int32) {
	workers := runtime.GOMAXPROCS(0)
	n := len(f.ids)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := make([]float32, f.dim)
			for i := w; i < n; i += workers {
				f.decode(i, v)
				assign[i] = int32(g.nearest(v))
			}
		}()
	}
	wg.Wait()
}
