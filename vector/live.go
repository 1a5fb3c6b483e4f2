package vector

import (
	"context"
	"errors"
	"sync"
)

// ErrBuilding is the error of a search while the index is being built.
var ErrBuilding = errors.New("the semantic index is still being built; try again shortly, or search with mode KEYWORD")

// ErrNoVectors is the error of a search when no paper has a vector.
var ErrNoVectors = errors.New("no paper has an embedding yet; search with mode KEYWORD")

// Live is the index a server searches: built in the background when the
// server starts, searched once built, and added to as papers come in.
// Vectors added while it builds are kept and added when the build ends,
// so none is lost to a build that read the source before they came. A
// build that replaces an index (the archive's model changed) leaves the
// old one, with the embedder of its queries, searched until it ends.
type Live struct {
	mu       sync.RWMutex
	idx      *Index
	building bool
	err      error
	pending  []pendingVec
	embed    QueryEmbedder
}

type pendingVec struct {
	id int64
	v  []float32
}

// NewLive is a Live index that embeds queries with embed. It is empty
// until Start builds it or Set gives it an index.
func NewLive(embed QueryEmbedder) *Live { return &Live{embed: embed} }

// Start builds the index from src in a goroutine and returns at once;
// searches answer ErrBuilding until it is done. done, when not nil, is
// closed when the build ends.
func (l *Live) Start(ctx context.Context, src Source, dim int, opts Options) (done <-chan struct{}) {
	l.Begin()
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		idx, err := Build(ctx, src, dim, opts)
		l.Set(idx, err)
	}()
	return ch
}

// Begin says a build has begun: vectors added are kept for it, and
// searches answer from the index there is, or ErrBuilding without one,
// until Set or Replace ends it.
func (l *Live) Begin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.building = true
}

// Set makes idx the index searched, or err the error searches answer,
// and adds to idx the vectors added since the build began.
func (l *Live) Set(idx *Index, err error) { l.Replace(idx, nil, err) }

// Replace ends a build: idx becomes the index searched and embed, when
// not nil, the embedder of its queries, and the vectors added since the
// build began join idx (those of another dimension, made by the model
// idx replaces, are dropped). A build that failed (err) leaves the index
// there was searched, or err the error searches answer without one.
func (l *Live) Replace(idx *Index, embed QueryEmbedder, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pending := l.pending
	l.building, l.pending = false, nil
	if err != nil || idx == nil {
		if l.idx == nil {
			l.err = err
		}
		return
	}
	l.idx, l.err = idx, nil
	if embed != nil {
		l.embed = embed
	}
	for _, p := range pending {
		if len(p.v) == idx.Dim() {
			_ = idx.Add(p.id, p.v) // cannot fail: the dimension is idx's
		}
	}
}

// Add indexes a new paper's vector, or keeps it for the index being
// built.
func (l *Live) Add(id int64, v []float32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.building:
		l.pending = append(l.pending, pendingVec{id, append([]float32(nil), v...)})
		return nil
	case l.idx == nil:
		l.idx = New(len(v), Options{})
	}
	return l.idx.Add(id, v)
}

// index is the index to search and the embedder of its queries, or why
// there is none.
func (l *Live) index() (*Index, QueryEmbedder, error) {
	if l == nil {
		return nil, nil, ErrNoVectors
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	switch {
	case l.idx != nil && l.err == nil && l.idx.Len() > 0:
		return l.idx, l.embed, nil
	case l.building:
		return nil, nil, ErrBuilding
	case l.err != nil:
		return nil, nil, l.err
	}
	return nil, nil, ErrNoVectors
}

// Ready reports whether searches are answered from the index: it is
// built and holds a vector.
func (l *Live) Ready() bool {
	_, _, err := l.index()
	return err == nil
}

// SearchText embeds text and returns the k papers nearest it.
func (l *Live) SearchText(ctx context.Context, text string, k int) ([]Hit, error) {
	idx, embed, err := l.index()
	if err != nil {
		return nil, err
	}
	q, err := embed(ctx, text)
	if err != nil {
		return nil, err
	}
	return idx.Search(q, k)
}

// Search returns the k papers nearest q.
func (l *Live) Search(q []float32, k int) ([]Hit, error) {
	idx, _, err := l.index()
	if err != nil {
		return nil, err
	}
	return idx.Search(q, k)
}

// Vectors are the indexed vectors of the papers ids that have one.
func (l *Live) Vectors(ids []int64) (map[int64][]float32, error) {
	idx, _, err := l.index()
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]float32, len(ids))
	for _, id := range ids {
		if v, ok := idx.Vector(id); ok {
			out[id] = v
		}
	}
	return out, nil
}
