package embed

import (
	"context"
	"math"
	"slices"
)

// LearnOptions shape the built-in model; the zero value takes the
// defaults.
type LearnOptions struct {
	Dim      int // vector length (default 160)
	MaxWords int // vocabulary size at most (default 30000)
	MinDF    int // documents a word must be in to be learned (default 2)
	Window   int // words either side that count as co-occurring (default 4)
}

func (o LearnOptions) withDefaults() LearnOptions {
	if o.Dim <= 0 {
		o.Dim = 160
	}
	if o.MaxWords <= 0 {
		o.MaxWords = 30000
	}
	if o.MinDF <= 0 {
		o.MinDF = 2
	}
	if o.Window <= 0 {
		o.Window = 4
	}
	return o
}

// Learn learns the built-in model from texts: the positive pointwise
// mutual information (PPMI) of the vocabulary's words co-occurring within
// a window, reduced by a truncated SVD to Dim dimensions, gives each word
// a vector in which words used alike lie close. Learn is deterministic: the
// same texts give the same model.
func Learn(ctx context.Context, texts []string, o LearnOptions) (*Model, error) {
	o = o.withDefaults()
	docs := make([][]string, len(texts))
	for i, t := range texts {
		docs[i] = words(t, nil)
	}
	vocab, idf := vocabulary(docs, o.MinDF, o.MaxWords)
	if err := checkLearnable(len(vocab), o.Dim); err != nil {
		return nil, err
	}
	dim := min(o.Dim, len(vocab)/2)
	index := make(map[string]int32, len(vocab))
	for i, w := range vocab {
		index[w] = int32(i)
	}
	pairs := cooccurrences(docs, index, o.Window)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := ppmi(pairs, len(vocab))
	vecs, err := truncatedSVD(ctx, m, dim)
	if err != nil {
		return nil, err
	}
	return &Model{dim: dim, docs: len(texts), vocab: vocab, index: index, idf: idf, vecs: vecs}, nil
}

// pairCounts are co-occurrence counts by pair, keys (a<<32 | b) with
// a < b, in order.
type pairCounts struct {
	keys   []uint64
	counts []float32
}

// cooccurrences counts, for each pair of vocabulary words, how often they
// stand within window words of each other (skipping the words outside the
// vocabulary). Pairs gather in a buffer that is sorted and merged into the
// counts when full, which bounds the memory by the distinct pairs.
func cooccurrences(docs [][]string, index map[string]int32, window int) pairCounts {
	const bufSize = 1 << 22
	var acc pairCounts
	buf := make([]uint64, 0, bufSize)
	ids := make([]int32, 0, 256)
	for _, d := range docs {
		ids = ids[:0]
		for _, w := range d {
			if j, ok := index[w]; ok {
				ids = append(ids, j)
			}
		}
		for i, a := range ids {
			for _, b := range ids[i+1 : min(len(ids), i+1+window)] {
				if a == b {
					continue
				}
				lo, hi := min(a, b), max(a, b)
				buf = append(buf, uint64(lo)<<32|uint64(hi))
			}
		}
		if len(buf) > bufSize-256*window {
			acc = mergeCounts(acc, buf)
			buf = buf[:0]
		}
	}
	return mergeCounts(acc, buf)
}

// mergeCounts adds the pairs in buf (sorted here) to acc.
func mergeCounts(acc pairCounts, buf []uint64) pairCounts {
	slices.Sort(buf)
	var out pairCounts
	i := 0
	add := func(k uint64, c float32) {
		if n := len(out.keys); n > 0 && out.keys[n-1] == k {
			out.counts[n-1] += c
			return
		}
		out.keys, out.counts = append(out.keys, k), append(out.counts, c)
	}
	for _, k := range buf {
		for i < len(acc.keys) && acc.keys[i] < k {
			add(acc.keys[i], acc.counts[i])
			i++
		}
		add(k, 1)
	}
	for ; i < len(acc.keys); i++ {
		add(acc.keys[i], acc.counts[i])
	}
	return out
}

// sparse is a square matrix in compressed rows.
type sparse struct {
	n      int
	rowPtr []int
	cols   []int32
	vals   []float64
}

// ppmi builds the PPMI matrix of the counts, with the context
// distribution smoothed (counts raised to 0.75), which keeps rare
// contexts from dominating.
func ppmi(p pairCounts, n int) *sparse {
	const alpha = 0.75
	rowSum := make([]float64, n)
	for i, k := range p.keys {
		a, b := int(k>>32), int(uint32(k))
		rowSum[a] += float64(p.counts[i])
		rowSum[b] += float64(p.counts[i])
	}
	var ctxTotal float64
	ctxSum := make([]float64, n)
	for i, s := range rowSum {
		ctxSum[i] = math.Pow(s, alpha)
		ctxTotal += ctxSum[i]
	}
	// Each pair is counted once; the matrix holds it both ways.
	perRow := make([]int, n+1)
	for _, k := range p.keys {
		perRow[int(k>>32)+1]++
		perRow[int(uint32(k))+1]++
	}
	for i := 1; i <= n; i++ {
		perRow[i] += perRow[i-1]
	}
	m := &sparse{n: n, rowPtr: slices.Clone(perRow), cols: make([]int32, perRow[n]), vals: make([]float64, perRow[n])}
	put := func(a, b int, c float64) {
		v := math.Log(c * ctxTotal / (rowSum[a] * ctxSum[b]))
		if v < 0 {
			v = 0
		}
		m.cols[perRow[a]], m.vals[perRow[a]] = int32(b), v
		perRow[a]++
	}
	for i, k := range p.keys {
		a, b := int(k>>32), int(uint32(k))
		put(a, b, float64(p.counts[i]))
		put(b, a, float64(p.counts[i]))
	}
	return m
}
