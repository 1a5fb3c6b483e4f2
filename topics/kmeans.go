package topics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// seed fixes the clustering's random choices, so that the same vectors
// give the same topics.
const seed = 20261205

// maxRounds bounds the rounds of k-means; it stops earlier when no point
// changes cluster.
const maxRounds = 30

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// nearest is the index of the centroid most alike v, the first of equals.
func nearest(v []float32, centroids [][]float32) (int, float32) {
	best, bestSim := 0, float32(math.Inf(-1))
	for c, m := range centroids {
		if s := dot(v, m); s > bestSim {
			best, bestSim = c, s
		}
	}
	return best, bestSim
}

// kmeans clusters unit vectors vs into k groups by cosine (spherical
// k-means, seeded by k-means++ from a generator seeded with salt). It
// returns each vector's cluster and the clusters' unit centroids. The
// same vectors in the same order give the same clusters: the random
// choices are seeded, the assignment of each vector depends on it alone
// (so it may run in parallel), and centroids are summed in vector order.
func kmeans(vs [][]float32, k int, salt uint64) ([]int, [][]float32) {
	n := len(vs)
	if k > n {
		k = n
	}
	assign := make([]int, n)
	if k <= 1 || n == 0 {
		if n == 0 {
			return assign, nil
		}
		return assign, means(vs, assign, 1, len(vs[0]))
	}
	rng := rand.New(rand.NewPCG(seed, salt))
	centroids := seedCentroids(vs, k, rng)
	for i := range assign {
		assign[i] = -1
	}
	dim := len(vs[0])
	for round := 0; round < maxRounds; round++ {
		// Rounds past the first that move fewer than one vector in a
		// thousand change no topic a reader would notice.
		if changed := assignAll(vs, centroids, assign); round > 0 && changed <= n/1000 {
			break
		}
		counts := make([]int, k)
		for _, c := range assign {
			counts[c]++
		}
		for c := range centroids {
			if counts[c] == 0 {
				// An empty cluster takes the vector least like its own
				// centroid, the first of equals.
				far, farSim := 0, float32(math.Inf(1))
				for i, v := range vs {
					if s := dot(v, centroids[assign[i]]); s < farSim && counts[assign[i]] > 1 {
						far, farSim = i, s
					}
				}
				counts[assign[far]]--
				assign[far] = c
				counts[c]++
			}
		}
		centroids = means(vs, assign, k, dim)
	}
	return assign, centroids
}

// means are the unit means of the k clusters of assign, summed in vector
// order.
func means(vs [][]float32, assign []int, k, dim int) [][]float32 {
	s := newSums(k, dim)
	for i, v := range vs {
		s.add(assign[i], v)
	}
	return s.unit()
}

// seedCentroids picks k starting centroids by k-means++: each next one a
// vector drawn with probability growing with its distance from those
// picked.
func seedCentroids(vs [][]float32, k int, rng *rand.Rand) [][]float32 {
	n := len(vs)
	pick := func(i int) []float32 { return append([]float32(nil), vs[i]...) }
	centroids := [][]float32{pick(rng.IntN(n))}
	dist := make([]float64, n)
	for i, v := range vs {
		dist[i] = distance(v, centroids[0])
	}
	for len(centroids) < k {
		var total float64
		for _, d := range dist {
			total += d
		}
		next := 0
		if total > 0 {
			r := rng.Float64() * total
			for i, d := range dist {
				if r -= d; r <= 0 {
					next = i
					break
				}
				next = i
			}
		} else {
			next = rng.IntN(n)
		}
		c := pick(next)
		centroids = append(centroids, c)
		for i, v := range vs {
			dist[i] = min(dist[i], distance(v, c))
		}
	}
	return centroids
}

// distance is the squared distance of two unit vectors, 2 - 2 cos.
func distance(a, b []float32) float64 {
	return max(0, 2-2*float64(dot(a, b)))
}

// assignAll puts every vector in the cluster of its nearest centroid,
// in parallel, and returns how many changed cluster.
func assignAll(vs [][]float32, centroids [][]float32, assign []int) int {
	var changed atomic.Int64
	parallel(len(vs), func(i int) {
		if c, _ := nearest(vs[i], centroids); c != assign[i] {
			assign[i] = c
			changed.Add(1)
		}
	})
	return int(changed.Load())
}

// parallel calls fn(i) for i from 0 to n-1, split in contiguous ranges
// over the cores; fn of different i must not write the same memory.
func parallel(n int, fn func(i int)) {
	workers := max(1, runtime.GOMAXPROCS(0))
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
