package embed

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// truncatedSVD returns the rows of U·Σ^½ of m's rank-k SVD, each row
// scaled to unit length, as n rows of k float32s. It is the randomised
// range finder (Halko, Martinsson and Tropp): m times a random matrix,
// with one power iteration, spans m's leading singular vectors closely;
// the small problem left is solved exactly.
func truncatedSVD(ctx context.Context, m *sparse, k int) ([]float32, error) {
	n := m.n
	l := min(k+16, n)
	rng := rand.New(rand.NewPCG(1, 2))
	omega := make([]float64, n*l)
	for i := range omega {
		omega[i] = rng.NormFloat64()
	}
	y := m.mul(omega, l, false)
	q, l := orthonormal(y, n, l)
	z := m.mul(q, l, true)
	z, l = orthonormal(z, n, l)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	y = m.mul(z, l, false)
	q, l = orthonormal(y, n, l)
	bt := m.mul(q, l, true) // Bᵀ = mᵀQ, B = Qᵀm
	var c mat.SymDense
	c.SymOuterK(1, mat.NewDense(n, l, bt).T())
	var eig mat.EigenSym
	if !eig.Factorize(&c, true) {
		return nil, errors.New("embed: the eigendecomposition did not converge")
	}
	var w mat.Dense
	eig.VectorsTo(&w)
	vals := eig.Values(nil) // ascending
	k = min(k, l)
	// The top k eigenvectors, each scaled by σ^½ = λ^¼.
	top := mat.NewDense(l, k, nil)
	for j := range k {
		src := l - 1 - j
		s := math.Pow(math.Max(vals[src], 0), 0.25)
		for i := range l {
			top.Set(i, j, w.At(i, src)*s)
		}
	}
	var u mat.Dense
	u.Mul(mat.NewDense(n, l, q), top)
	out := make([]float32, n*k)
	for i := range n {
		row := u.RawRowView(i)
		copy(out[i*k:], normalised(row))
	}
	return out, nil
}

// mul returns m·x (or mᵀ·x), x being n rows of l.
func (m *sparse) mul(x []float64, l int, transpose bool) []float64 {
	y := make([]float64, m.n*l)
	for i := range m.n {
		for p := m.rowPtr[i]; p < m.rowPtr[i+1]; p++ {
			j, v := int(m.cols[p]), m.vals[p]
			dst, src := y[i*l:(i+1)*l], x[j*l:(j+1)*l]
			if transpose {
				dst, src = y[j*l:(j+1)*l], x[i*l:(i+1)*l]
			}
			for c, s := range src {
				dst[c] += v * s
			}
		}
	}
	return y
}

// orthonormal returns columns spanning y's column space (n rows of l),
// orthonormal, dropping directions y hardly spans; and their number. It
// whitens y by its Gram matrix's eigendecomposition, twice, the second
// pass mending the first's rounding.
func orthonormal(y []float64, n, l int) ([]float64, int) {
	for range 2 {
		var g mat.SymDense
		g.SymOuterK(1, mat.NewDense(n, l, y).T())
		var eig mat.EigenSym
		if !eig.Factorize(&g, true) {
			return y, l
		}
		var w mat.Dense
		eig.VectorsTo(&w)
		vals := eig.Values(nil)
		keep := 0
		for _, v := range vals {
			if v > vals[l-1]*1e-12 {
				keep++
			}
		}
		t := mat.NewDense(l, keep, nil)
		for j := range keep {
			src := l - 1 - j
			s := 1 / math.Sqrt(vals[src])
			for i := range l {
				t.Set(i, j, w.At(i, src)*s)
			}
		}
		var q mat.Dense
		q.Mul(mat.NewDense(n, l, y), t)
		y, l = q.RawMatrix().Data, keep
	}
	return y, l
}
