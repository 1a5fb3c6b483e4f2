package vector

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// exact is the k nearest vectors of src to q by float cosine, the truth
// recall is measured against.
func exact(t *testing.T, src Source, q []float32, k int) []int64 {
	t.Helper()
	u := slices.Clone(q)
	Normalize(u)
	var hs []Hit
	err := src(context.Background(), func(id int64, v []float32) error {
		w := slices.Clone(v)
		Normalize(w)
		hs = append(hs, Hit{ID: id, Score: dotF(u, w)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sortHits(hs)
	ids := make([]int64, 0, k)
	for _, h := range hs[:k] {
		ids = append(ids, h.ID)
	}
	return ids
}

// recall is the share of want found in got.
func recall(got []Hit, want []int64) float64 {
	in := map[int64]bool{}
	for _, h := range got {
		in[h.ID] = true
	}
	n := 0
	for _, id := range want {
		if in[id] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

func meanRecall(t *testing.T, x *Index, src Source, qs [][]float32, k int) float64 {
	t.Helper()
	var sum float64
	for _, q := range qs {
		got, err := x.Search(q, k)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != k {
			t.Fatalf("Search returned %d hits, want %d", len(got), k)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Score > got[i-1].Score {
				t.Fatalf("hits out of order at %d: %v after %v", i, got[i], got[i-1])
			}
		}
		sum += recall(got, exact(t, src, q, k))
	}
	return sum / float64(len(qs))
}

// TestRecallAgainstBruteForce holds both kinds of index to a recall
// floor against exact search; -short indexes fewer vectors, still enough
// for the lists that the inverted index's case needs.
func TestRecallAgainstBruteForce(t *testing.T) {
	n, dim, k := 40_000, 64, 100
	if testing.Short() {
		n = 24_000
	}
	src := Synthetic(n, dim, 1.2, 7)
	qs := Queries(20, n, dim, 1.2, 7)
	for _, c := range []struct {
		name string
		opts Options
		min  float64
	}{
		// A single list is an exhaustive scan: only the int8 codes lose.
		{"exhaustive", Options{Lists: 1}, 0.97},
		// A list for every listTarget vectors (40, or 24 under -short),
		// a quarter of the vectors scanned.
		{"ivf", Options{Scan: n / 4}, 0.9},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, err := Build(context.Background(), src, dim, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if x.Len() != n {
				t.Fatalf("Len = %d, want %d", x.Len(), n)
			}
			if c.opts.Lists == 0 && x.Lists() < 20 {
				t.Fatalf("Lists = %d, want about %d", x.Lists(), n/listTarget)
			}
			r := meanRecall(t, x, src, qs, k)
			t.Logf("%d lists, recall@%d %.3f, %d bytes/vector", x.Lists(), k, r, x.Bytes()/int64(n))
			if r < c.min {
				t.Errorf("recall@%d = %.3f, want at least %.2f", k, r, c.min)
			}
		})
	}
}

func TestAddFindsNewAndReplaced(t *testing.T) {
	const n, dim = 5000, 32
	x, err := Build(context.Background(), Synthetic(n, dim, 1, 3), dim, Options{Lists: 8})
	if err != nil {
		t.Fatal(err)
	}
	q := Queries(1, n, dim, 1, 3)[0]
	// A new paper whose vector is the query's is its nearest.
	if err := x.Add(n+1, q); err != nil {
		t.Fatal(err)
	}
	got, _ := x.Search(q, 5)
	if got[0].ID != n+1 || got[0].Score < 0.99 {
		t.Fatalf("nearest after Add = %v, want paper %d at about 1", got[0], n+1)
	}
	// Paper 1 given the query's vector replaces its own: still one of it.
	if err := x.Add(1, q); err != nil {
		t.Fatal(err)
	}
	got, _ = x.Search(q, 5)
	ids := []int64{got[0].ID, got[1].ID}
	slices.Sort(ids)
	if !slices.Equal(ids, []int64{1, n + 1}) || x.Len() != n+1 {
		t.Fatalf("top two = %v, Len %d; want papers 1 and %d, Len %d", ids, x.Len(), n+1, n+1)
	}
	if err := x.Add(2, make([]float32, dim+1)); !errors.Is(err, ErrDim) {
		t.Fatalf("Add of a wrong dimension: %v, want ErrDim", err)
	}
	if _, err := x.Search(make([]float32, 3), 5); !errors.Is(err, ErrDim) {
		t.Fatalf("Search of a wrong dimension: %v, want ErrDim", err)
	}
}

func TestLiveBuildsInBackground(t *testing.T) {
	const dim = 16
	release := make(chan struct{})
	src := func(ctx context.Context, fn func(int64, []float32) error) error {
		<-release
		return Synthetic(3000, dim, 1, 5)(ctx, fn)
	}
	q := Queries(1, 3000, dim, 1, 5)[0]
	l := NewLive(func(context.Context, string) ([]float32, error) { return q, nil })
	if _, err := l.SearchText(context.Background(), "x", 3); !errors.Is(err, ErrNoVectors) {
		t.Fatalf("search before any build: %v, want ErrNoVectors", err)
	}
	done := l.Start(context.Background(), src, dim, Options{})
	if _, err := l.SearchText(context.Background(), "x", 3); !errors.Is(err, ErrBuilding) {
		t.Fatalf("search while building: %v, want ErrBuilding", err)
	}
	// A paper added during the build is searched once it is done.
	if err := l.Add(9999, q); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-done
	got, err := l.SearchText(context.Background(), "x", 3)
	if err != nil || got[0].ID != 9999 {
		t.Fatalf("search after build = %v, %v; want paper 9999 first", got, err)
	}
	vs, err := l.Vectors([]int64{9999, 123456})
	if err != nil || len(vs) != 1 || dotF(vs[9999], q)/dotF(q, q) < 0 {
		t.Fatalf("Vectors = %v, %v", vs, err)
	}
}

// TestLiveReplaceKeepsTheOldIndexUntilDone: while an index of another
// dimension is built to replace it, the old one answers with its own
// query embedder; Replace swaps both, adds the papers added meanwhile in
// the new dimension and drops those in the old; a failed build leaves
// the old index searched.
func TestLiveReplaceKeepsTheOldIndexUntilDone(t *testing.T) {
	ctx := context.Background()
	const oldDim, newDim = 16, 24
	oldQ, newQ := Queries(1, 2000, oldDim, 1, 7)[0], Queries(1, 2000, newDim, 1, 8)[0]
	l := NewLive(func(context.Context, string) ([]float32, error) { return oldQ, nil })
	<-l.Start(ctx, Synthetic(2000, oldDim, 1, 7), oldDim, Options{})
	l.Begin()
	if got, err := l.SearchText(ctx, "x", 3); err != nil || len(got) != 3 {
		t.Fatalf("search during the replacing build = %v, %v; want the old index's answer", got, err)
	}
	if err := l.Add(7777, newQ); err != nil {
		t.Fatal(err)
	}
	if err := l.Add(8888, oldQ); err != nil {
		t.Fatal(err)
	}
	l.Replace(nil, nil, errors.New("the build failed"))
	if got, err := l.SearchText(ctx, "x", 3); err != nil || len(got) != 3 {
		t.Fatalf("search after a failed build = %v, %v; want the old index's answer", got, err)
	}
	l.Begin()
	if err := l.Add(7777, newQ); err != nil {
		t.Fatal(err)
	}
	if err := l.Add(8888, oldQ); err != nil {
		t.Fatal(err)
	}
	idx, err := Build(ctx, Synthetic(2000, newDim, 1, 8), newDim, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Replace(idx, func(context.Context, string) ([]float32, error) { return newQ, nil }, nil)
	got, err := l.SearchText(ctx, "x", 3)
	if err != nil || got[0].ID != 7777 {
		t.Fatalf("search after Replace = %v, %v; want paper 7777, added during the build, first", got, err)
	}
	if vs, _ := l.Vectors([]int64{8888}); len(vs) != 0 {
		t.Errorf("the old model's vector added during the build is in the new index")
	}
}
