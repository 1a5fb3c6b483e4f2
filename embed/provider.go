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

// errRetry marks an answer worth asking again for; wait is what the
// server asked for (0: nothing).
type errRetry struct {
	err  error
	wait time.Duration
}

func (e *errRetry) Error() string { return e.err.Error() }

// request embeds one batch, trying again as Provider says.
func (p *Provider) request(ctx context.Context, texts []string) ([][]float32, error) {
	attempts, backoff, maxWait := p.Attempts, p.Backoff, p.MaxWait
	if attempts <= 0 {
		attempts = 5
	}
	if backoff <= 0 {
		backoff = time.Second
	}
	if maxWait <= 0 {
		maxWait = time.Minute
	}
	for attempt := 1; ; attempt++ {
		vs, err := p.post(ctx, texts)
		var r *errRetry
		if err == nil || !errors.As(err, &r) || attempt == attempts || ctx.Err() != nil {
			if r != nil {
				err = r.err
			}
			return vs, err
		}
		wait := backoff
		if r.wait > 0 {
			wait = r.wait
		}
		wait = min(wait, maxWait)
		if p.Retry != nil {
			p.Retry(r.err, wait)
		}
		if err := retry.Sleep(ctx, wait); err != nil {
			return nil, err
		}
		backoff *= 2
	}
}
