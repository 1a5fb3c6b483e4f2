package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/papergraph/papergraph/retry"
)

type embeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// maxAnswer bounds the answer read to a request.
const maxAnswer = 256 << 20

// post sends one request; errors worth trying again are *retry.Temporary.
func (p *Provider) post(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: p.model, Input: texts})
	if err != nil {
		return nil, err
	}
	req, err := retry.PostJSON(ctx, p.endpoint, p.key, body)
	if err != nil {
		return nil, fmt.Errorf("embed: --embeddings-url: %w", err)
	}
	client := p.Client
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &retry.Temporary{Err: fmt.Errorf("embed: %s: %w", p.endpoint, err)}
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, &retry.Temporary{Err: fmt.Errorf("embed: %s: reading the answer: %w", p.endpoint, err)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, retry.Refusal("embed: "+p.endpoint, resp, text)
	}
	return decodeAnswer(p.endpoint, text, len(texts))
}

// decodeAnswer reads an embeddings answer for n texts, in the texts'
// order (the data's index says which text each is for).
func decodeAnswer(endpoint string, text []byte, n int) ([][]float32, error) {
	var r embeddingsResponse
	if err := json.Unmarshal(text, &r); err != nil {
		return nil, fmt.Errorf("embed: %s answered with malformed JSON: %v", endpoint, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("embed: %s answered %d embeddings for %d texts", endpoint, len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("embed: %s answered an embedding for text %d of %d, or two", endpoint, d.Index, n)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}
