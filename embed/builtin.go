package embed

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// BuiltinName names the built-in model's vectors.
const BuiltinName = "builtin"

// Model is the built-in embedder: a vector for each word of a vocabulary
// learned from the archive (see Learn), and each word's inverse document
// frequency. A text's vector is the normalised sum of its words' vectors,
// each weighed by its idf; words outside the vocabulary add nothing.
type Model struct {
	dim  int
	docs int // the documents the model was learned from
	// archive is the number of papers in the archive it was learned from
	// (0: not learned from an archive).
	archive int
	vocab   []string
	index   map[string]int32
	idf     []float32
	vecs    []float32 // len(vocab) rows of dim
}

var _ Embedder = (*Model)(nil)

// Name is BuiltinName.
func (m *Model) Name() string { return BuiltinName }

// Dim is the length of the model's vectors.
func (m *Model) Dim() int { return m.dim }

// Docs is the number of documents the model was learned from.
func (m *Model) Docs() int { return m.docs }

// Words is the size of the model's vocabulary.
func (m *Model) Words() int { return len(m.vocab) }

// Embed returns the texts' vectors; it never fails but for a cancelled
// context. A text without a known word gets the zero vector.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var ws []string
	for i, t := range texts {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ws = words(t, ws)
		out[i] = m.vector(ws)
	}
	return out, nil
}

func (m *Model) vector(ws []string) []float32 {
	sum := make([]float64, m.dim)
	for _, w := range ws {
		j, ok := m.index[w]
		if !ok {
			continue
		}
		wt := float64(m.idf[j])
		for k, x := range m.vecs[int(j)*m.dim : int(j+1)*m.dim] {
			sum[k] += wt * float64(x)
		}
	}
	return normalised(sum)
}

// normalised returns v scaled to unit length as float32s (v itself when
// it is zero).
func normalised(v []float64) []float32 {
	var n float64
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	n = 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(x * n)
	}
	return out
}

// modelMagic starts a marshalled model; its last byte is the format's
// version.
var modelMagic = []byte("PGEMB\x01")

// MarshalBinary writes the model as embedding_models keeps it: the magic,
// dim, docs, archive and vocabulary size as uint32s, the words (uvarint length,
// bytes), then the idfs and the word vectors as little-endian float32s.
func (m *Model) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.Write(modelMagic)
	for _, n := range []int{m.dim, m.docs, m.archive, len(m.vocab)} {
		b.Write(binary.LittleEndian.AppendUint32(nil, uint32(n)))
	}
	for _, w := range m.vocab {
		b.Write(binary.AppendUvarint(nil, uint64(len(w))))
		b.WriteString(w)
	}
	var f [4]byte
	for _, xs := range [][]float32{m.idf, m.vecs} {
		for _, x := range xs {
			binary.LittleEndian.PutUint32(f[:], math.Float32bits(x))
			b.Write(f[:])
		}
	}
	return b.Bytes(), nil
}

// errModelData says stored model data is not a model this build reads.
var errModelData = errors.New("embed: the stored built-in model is damaged or from another version: run papergraph embed --retrain")

// UnmarshalModel reads a model MarshalBinary wrote.
func UnmarshalModel(data []byte) (*Model, error) {
	if !bytes.HasPrefix(data, modelMagic) || len(data) < len(modelMagic)+16 {
		return nil, errModelData
	}
	p := data[len(modelMagic):]
	m := &Model{dim: int(binary.LittleEndian.Uint32(p)), docs: int(binary.LittleEndian.Uint32(p[4:])),
		archive: int(binary.LittleEndian.Uint32(p[8:]))}
	n := int(binary.LittleEndian.Uint32(p[12:]))
	p = p[16:]
	if m.dim == 0 || n > len(p) {
		return nil, errModelData
	}
	m.vocab, m.index = make([]string, n), make(map[string]int32, n)
	for i := range n {
		l, k := binary.Uvarint(p)
		if k <= 0 || uint64(len(p)-k) < l {
			return nil, errModelData
		}
		m.vocab[i] = string(p[k : k+int(l)])
		m.index[m.vocab[i]] = int32(i)
		p = p[k+int(l):]
	}
	if len(p) != 4*(n+n*m.dim) {
		return nil, errModelData
	}
	fs := make([]float32, len(p)/4)
	for i := range fs {
		fs[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	m.idf, m.vecs = fs[:n], fs[n:]
	return m, nil
}

// vocabulary picks the words a model learns from docs (each a text's
// words): those in at least minDF documents, the maxWords most frequent
// by document frequency (ties by word), with their idfs.
func vocabulary(docs [][]string, minDF, maxWords int) ([]string, []float32) {
	df := map[string]int{}
	seen := map[string]bool{}
	for _, d := range docs {
		clear(seen)
		for _, w := range d {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	var vocab []string
	for w, n := range df {
		if n >= minDF {
			vocab = append(vocab, w)
		}
	}
	slices.SortFunc(vocab, func(a, b string) int {
		if df[a] != df[b] {
			return df[b] - df[a]
		}
		return cmpString(a, b)
	})
	if len(vocab) > maxWords {
		vocab = vocab[:maxWords]
	}
	idf := make([]float32, len(vocab))
	for i, w := range vocab {
		idf[i] = float32(math.Log(float64(len(docs)+1) / float64(df[w])))
	}
	return vocab, idf
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ErrTooLittleText says the archive has too few words to learn a model.
var ErrTooLittleText = errors.New("embed: too little text to learn the built-in model from")

func checkLearnable(vocab int, dim int) error {
	if vocab < 2*dim && vocab < 64 {
		return fmt.Errorf("%w (%d distinct words)", ErrTooLittleText, vocab)
	}
	return nil
}
