// Package embed turns papers' text into vectors for similarity search.
//
// An Embedder is either the built-in model, learned from the archive's own
// titles and abstracts and kept in the database, so that embedding needs
// no network and nothing downloaded; or a provider, a server that speaks
// the OpenAI-compatible /v1/embeddings API (Ollama,
// text-embeddings-inference, vLLM). Sync brings the vectors in
// paper_embeddings up to date for new and changed papers; Active gives the
// embedder queries are embedded with, the one whose vectors the archive
// keeps.
package embed

import (
	"context"
	"hash/fnv"
	"strings"
)

// Embedder turns texts into vectors of Dim float32s, one a text, in order.
// Name identifies the vectors: two embedders of one name make comparable
// vectors.
type Embedder interface {
	Name() string
	Dim() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Config chooses the embedder: a provider when URL is set, else the
// built-in model.
type Config struct {
	// URL is the provider's base URL (http://localhost:11434/v1) or its
	// /v1/embeddings endpoint.
	URL string
	// Model is the model the provider is asked for.
	Model string
	// Key, when set, is sent as a bearer token.
	Key string
}

// PaperText is the text a paper is embedded from: its title, then its
// abstract.
func PaperText(title, abstract string) string {
	title, abstract = strings.TrimSpace(title), strings.TrimSpace(abstract)
	if abstract == "" {
		return title
	}
	return title + "\n\n" + abstract
}

// TextHash identifies a text embedded; a paper whose text hashes otherwise
// than when its vector was made is embedded again.
func TextHash(text string) int64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return int64(h.Sum64())
}
