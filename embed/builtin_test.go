package embed_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/papergraph/papergraph/embed"
)

func texts(ps []corpusPaper) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = embed.PaperText(p.Title, p.Abstract)
	}
	return out
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestLearnedModelFindsATopicsPapers: a query in a topic's words lies
// nearer that topic's papers than any other's, for every topic, and the
// vectors are unit length.
func TestLearnedModelFindsATopicsPapers(t *testing.T) {
	ctx := context.Background()
	ps := corpus(400, 1)
	m, err := embed.Learn(ctx, texts(ps), embed.LearnOptions{Dim: 32})
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != 32 || m.Words() < 80 {
		t.Fatalf("model of %d dims and %d words, want 32 and the corpus's 80 or more", m.Dim(), m.Words())
	}
	vs, err := m.Embed(ctx, texts(ps))
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{"gluon scattering at the collider", "training a transformer with attention",
		"redshift survey of galaxy clusters", "chromatic number of planar graphs"}
	qs, err := m.Embed(ctx, queries)
	if err != nil {
		t.Fatal(err)
	}
	for topic, q := range qs {
		if n := dot(q, q); math.Abs(n-1) > 1e-4 {
			t.Errorf("query %q has squared norm %.5f, want 1", queries[topic], n)
		}
		// The ten nearest papers are all of the query's topic.
		order := make([]int, len(ps))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			return -cmpFloat(dot(q, vs[a]), dot(q, vs[b]))
		})
		for _, i := range order[:10] {
			if ps[i].Topic != topic {
				t.Errorf("query %q: paper %s of topic %d among the nearest ten", queries[topic], ps[i].ID, ps[i].Topic)
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestModelRoundTrip: a stored model embeds as the learned one did, and
// damaged data is refused with a way out.
func TestModelRoundTrip(t *testing.T) {
	ctx := context.Background()
	ps := corpus(120, 2)
	m, err := embed.Learn(ctx, texts(ps), embed.LearnOptions{Dim: 16})
	if err != nil {
		t.Fatal(err)
	}
	data, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := embed.UnmarshalModel(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Dim() != m.Dim() || back.Words() != m.Words() || back.Docs() != 120 {
		t.Errorf("read back %d dims, %d words, %d docs; want %d, %d, 120", back.Dim(), back.Words(), back.Docs(), m.Dim(), m.Words())
	}
	a, _ := m.Embed(ctx, texts(ps[:5]))
	b, _ := back.Embed(ctx, texts(ps[:5]))
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Errorf("paper %d: read-back model embeds otherwise", i)
		}
	}
	for _, bad := range [][]byte{nil, data[:len(data)-3], append([]byte("XX"), data...)} {
		if _, err := embed.UnmarshalModel(bad); err == nil {
			t.Errorf("UnmarshalModel of %d damaged bytes: no error", len(bad))
		}
	}
}

// TestLearnNeedsText: a corpus of a handful of words is refused, not
// learned into a degenerate model.
func TestLearnNeedsText(t *testing.T) {
	_, err := embed.Learn(context.Background(), []string{"quark gluon", "quark gluon"}, embed.LearnOptions{})
	if !errors.Is(err, embed.ErrTooLittleText) {
		t.Errorf("Learn of two words = %v, want ErrTooLittleText", err)
	}
}
