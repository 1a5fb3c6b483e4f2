package main

import (
	"cmp"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/papergraph/papergraph/vector"
)

// vectorsResult is what `papergraph-bench vectors` measures.
type vectorsResult struct {
	Papers          int     `json:"papers"`
	Dim             int     `json:"dim"`
	Lists           int     `json:"lists"`
	Scan            int     `json:"scan"`
	BuildSeconds    float64 `json:"buildSeconds"`
	BuildCPUSeconds float64 `json:"buildCpuSeconds"`
	BytesPerPaper   float64 `json:"bytesPerPaper"`
	HeapPerPaper    float64 `json:"heapBytesPerPaper"`
	Queries         int     `json:"queries"`
	P50ms           float64 `json:"p50Ms"`
	P99ms           float64 `json:"p99Ms"`
	CPUms           float64 `json:"cpuMsPerSearch"`
	RecallAt100     float64 `json:"recallAt100"`
	LoadAverage     string  `json:"loadAverage"`
}

func cmdVectors(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("vectors", stderr)
	n := fs.Int("papers", 0, "synthetic vectors to index")
	dim := fs.Int("dim", 256, "their dimension")
	spread := fs.Float64("spread", 1.2, "a vector's distance from its topic, relative to the topic's norm")
	queries := fs.Int("queries", 200, "queries to time")
	truth := fs.Int("truth", 50, "of which the first N are checked against brute force for recall")
	scans := fs.String("scan", "0", "comma-separated numbers of vectors a search scans, each measured on the one build (0: the index's default)")
	lists := fs.Int("lists", 0, "inverted lists (0: the index's default)")
	seed := fs.Uint64("seed", 1, "seed of the vectors and the build")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n <= 0 || fs.NArg() > 0 {
		return errors.New("vectors needs --papers N and no other arguments")
	}
	src := vector.Synthetic(*n, *dim, *spread, *seed)
	res := vectorsResult{Papers: *n, Dim: *dim, LoadAverage: loadAverage("/proc")}
	before := heapInUse()
	start := time.Now()
	scanList, err := intList(*scans)
	if err != nil {
		return fmt.Errorf("--scan: %w", err)
	}
	cpu0 := cpuTime()
	x, err := vector.Build(ctx, src, *dim, vector.Options{Lists: *lists, Seed: *seed})
	if err != nil {
		return err
	}
	res.BuildSeconds = time.Since(start).Seconds()
	res.BuildCPUSeconds = (cpuTime() - cpu0).Seconds()
	res.HeapPerPaper = float64(heapInUse()-before) / float64(*n)
	res.BytesPerPaper = float64(x.Bytes()) / float64(*n)
	res.Lists = x.Lists()
	qs := vector.Queries(*queries, *n, *dim, *spread, *seed)
	res.Queries = len(qs)
	var want []map[int64]bool
	if t := min(*truth, len(qs)); t > 0 {
		if want, err = bruteForce(ctx, src, qs[:t], 100); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(stdout)
	for _, sc := range scanList {
		x.SetScan(sc)
		res.Scan = cmp.Or(sc, vector.DefaultScan)
		if err := measureSearches(x, qs, want, &res); err != nil {
			return err
		}
		res.LoadAverage = loadAverage("/proc")
		fmt.Fprintf(stderr, "%d papers, dim %d, %d lists, scan %d: build %.1f s (CPU %.1f s), %.0f B/paper (heap %.0f), top-100 p50 %.2f ms p99 %.2f ms (CPU %.2f ms), recall@100 %.3f, load average %s\n",
			res.Papers, res.Dim, res.Lists, res.Scan, res.BuildSeconds, res.BuildCPUSeconds, res.BytesPerPaper, res.HeapPerPaper, res.P50ms, res.P99ms, res.CPUms, res.RecallAt100, res.LoadAverage)
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return nil
}

// measureSearches times qs' top-100 searches on x into res, and their
// recall against want, the true neighbours of qs' first queries.
func measureSearches(x *vector.Index, qs [][]float32, want []map[int64]bool, res *vectorsResult) error {
	cpu0 := cpuTime()
	got, lat, err := timeSearches(x, qs)
	if err != nil {
		return err
	}
	res.CPUms = float64((cpuTime() - cpu0).Microseconds()) / 1000 / float64(len(qs))
	slices.Sort(lat)
	res.P50ms = float64(percentile(lat, 0.5).Microseconds()) / 1000
	res.P99ms = float64(percentile(lat, 0.99).Microseconds()) / 1000
	if len(want) > 0 {
		res.RecallAt100 = meanRecall(got[:len(want)], want)
	}
	return nil
}

// intList is a comma-separated list of integers.
func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// timeSearches runs each query's top-100 search in turn and returns the
// hits and each search's latency.
func timeSearches(x *vector.Index, qs [][]float32) ([][]vector.Hit, []time.Duration, error) {
	got := make([][]vector.Hit, len(qs))
	lat := make([]time.Duration, len(qs))
	for i, q := range qs {
		t := time.Now()
		hs, err := x.Search(q, 100)
		if err != nil {
			return nil, nil, err
		}
		lat[i] = time.Since(t)
		got[i] = hs
	}
	return got, lat, nil
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapInUse is the heap in use after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// scored is a vector's score against one query, for bruteForce's heaps.
type scored struct {
	id    int64
	score float64
}

type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(v any)        { *h = append(*h, v.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// bruteForce is each query's k nearest vectors of src by float cosine,
// in one pass over src.
func bruteForce(ctx context.Context, src vector.Source, qs [][]float32, k int) ([]map[int64]bool, error) {
	units := make([][]float64, len(qs))
	for i, q := range qs {
		units[i] = unit64(q)
	}
	heaps := make([]minHeap, len(qs))
	err := src(ctx, func(id int64, v []float32) error {
		u := unit64(v)
		for i, q := range units {
			var s float64
			for j, f := range q {
				s += f * u[j]
			}
			h := &heaps[i]
			if h.Len() < k {
				heap.Push(h, scored{id, s})
			} else if s > (*h)[0].score {
				(*h)[0] = scored{id, s}
				heap.Fix(h, 0)
			}
		}
		return nil
	})
	out := make([]map[int64]bool, len(qs))
	for i, h := range heaps {
		out[i] = map[int64]bool{}
		for _, s := range h {
			out[i][s.id] = true
		}
	}
	return out, err
}

func unit64(v []float32) []float64 {
	u := make([]float64, len(v))
	var s float64
	for i, f := range v {
		u[i] = float64(f)
		s += u[i] * u[i]
	}
	if s > 0 {
		for i := range u {
			u[i] /= math.Sqrt(s)
		}
	}
	return u
}

// meanRecall is the mean share of each query's true neighbours found.
func meanRecall(got [][]vector.Hit, want []map[int64]bool) float64 {
	var sum float64
	for i, w := range want {
		n := 0
		for _, h := range got[i] {
			if w[h.ID] {
				n++
			}
		}
		sum += float64(n) / float64(len(w))
	}
	return sum / float64(len(want))
}
