package embed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/papergraph/papergraph/retry"
)

// Provider embeds by asking a server that speaks the OpenAI-compatible
// POST /v1/embeddings API, a batch of texts a request. A request the
// server refuses for now (429, 5xx) or that fails on the network is tried
// again after a wait that doubles, or the one its Retry-After asks for.
type Provider struct {
	endpoint string
	model    string
	key      string
	dim      int
	// Batch is the number of texts a request carries (default 64).
	Batch int
	// Attempts is the number of times a request is tried (default 5).
	Attempts int
	// Backoff is the first wait before trying again (default 1s); MaxWait
	// bounds every wait, a Retry-After's too (default 1m).
	Backoff, MaxWait time.Duration
	// Client sends the requests (default: one with a 2-minute timeout).
	Client *http.Client
	// Retry, when set, hears of each request that will be tried again.
	Retry func(err error, wait time.Duration)
}

var _ Embedder = (*Provider)(nil)

// ProviderName names a provider's vectors: the model's, after "api:".
func ProviderName(model string) string { return "api:" + model }

// NewProvider makes a provider for cfg and learns its vectors' length by
// embedding one short text.
func NewProvider(ctx context.Context, cfg Config) (*Provider, error) {
	if cfg.Model == "" {
		return nil, errors.New("embed: a provider needs a model name (--embeddings-model)")
	}
	p := &Provider{endpoint: endpoint(cfg.URL), model: cfg.Model, key: cfg.Key}
	vs, err := p.request(ctx, []string{"dimension probe"})
	if err != nil {
		return nil, err
	}
	p.dim = len(vs[0])
	if p.dim == 0 {
		return nil, fmt.Errorf("embed: %s returned an empty vector", p.endpoint)
	}
	return p, nil
}

// endpoint turns a base URL into the embeddings endpoint.
func endpoint(u string) string {
	u = strings.TrimRight(u, "/")
	switch {
	case strings.HasSuffix(u, "/embeddings"):
		return u
	case strings.HasSuffix(u, "/v1"):
		return u + "/embeddings"
	}
	return u + "/v1/embeddings"
}

// Name is ProviderName of the model.
func (p *Provider) Name() string { return ProviderName(p.model) }

// Dim is the length of the provider's vectors.
func (p *Provider) Dim() int { return p.dim }

// Embed embeds texts, Batch a request.
func (p *Provider) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	batch := p.Batch
	if batch <= 0 {
		batch = 64
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batch {
		vs, err := p.request(ctx, texts[start:min(start+batch, len(texts))])
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if p.dim > 0 && len(v) != p.dim {
				return nil, fmt.Errorf("embed: %s returned a vector of %d, not %d, numbers", p.endpoint, len(v), p.dim)
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}

// request embeds one batch, trying again as Provider says.
func (p *Provider) request(ctx context.Context, texts []string) ([][]float32, error) {
	return retry.Do(ctx, retry.Policy{Attempts: p.Attempts, Backoff: p.Backoff, MaxWait: p.MaxWait, Notify: p.Retry},
		func() ([][]float32, error) { return p.post(ctx, texts) })
}
