package embed_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/papergraph/papergraph/embed"
)

// fakeServer speaks /v1/embeddings: a text's vector is its length and its
// first byte, answered in reverse order (the index says which is which).
// fail, when set, answers a request instead, by its number from 1.
type fakeServer struct {
	mu       sync.Mutex
	requests int
	batches  []int
	auth     []string
	fail     func(n int, w http.ResponseWriter) bool
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	n := f.requests
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if f.fail != nil && f.fail(n, w) {
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "mini" {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.batches = append(f.batches, len(req.Input))
	f.mu.Unlock()
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(req.Input) - 1; i >= 0; i-- {
		data = append(data, item{i, []float32{float32(len(req.Input[i])), float32(req.Input[i][0])}})
	}
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}

func newProvider(t *testing.T, f *fakeServer, base string) *embed.Provider {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	p, err := embed.NewProvider(context.Background(), embed.Config{URL: srv.URL + base, Model: "mini", Key: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	p.Backoff, p.MaxWait = time.Millisecond, 20*time.Millisecond
	return p
}

// TestProviderEmbedsInBatches: texts go Batch a request with the key, and
// come back in order whatever order the server answers in.
func TestProviderEmbedsInBatches(t *testing.T) {
	for _, base := range []string{"", "/v1", "/v1/", "/v1/embeddings"} {
		f := &fakeServer{}
		p := newProvider(t, f, base)
		if p.Dim() != 2 || p.Name() != "api:mini" {
			t.Fatalf("provider %q of %d dims, want api:mini of 2", p.Name(), p.Dim())
		}
		p.Batch = 2
		vs, err := p.Embed(context.Background(), []string{"a", "bb", "ccc", "dddd", "eeeee"})
		if err != nil {
			t.Fatalf("base %q: %v", base, err)
		}
		for i, v := range vs {
			if int(v[0]) != i+1 || v[1] != float32('a'+i) {
				t.Errorf("base %q: text %d got %v", base, i, v)
			}
		}
		if got := f.batches[1:]; len(got) != 3 || got[0] != 2 || got[2] != 1 {
			t.Errorf("base %q: batches %v, want [2 2 1] after the probe", base, got)
		}
		if f.auth[0] != "Bearer sk-test" {
			t.Errorf("Authorization %q", f.auth[0])
		}
	}
}

// TestProviderRetriesBusyServer: 429 (with Retry-After) and 503 are
// tried again, and the texts embedded.
func TestProviderRetriesBusyServer(t *testing.T) {
	f := &fakeServer{}
	p := newProvider(t, f, "")
	f.fail = func(n int, w http.ResponseWriter) bool {
		switch n {
		case 2:
			w.Header().Set("Retry-After", "0")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case 3:
			http.Error(w, "loading model", http.StatusServiceUnavailable)
		default:
			return false
		}
		return true
	}
	var waits []time.Duration
	p.Retry = func(err error, wait time.Duration) { waits = append(waits, wait) }
	vs, err := p.Embed(context.Background(), []string{"quark"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0][0] != 5 {
		t.Errorf("vectors %v", vs)
	}
	if len(waits) != 2 || f.requests != 4 {
		t.Errorf("%d retries over %d requests, want 2 over 4 (probe, 429, 503, answer)", len(waits), f.requests)
	}
}

// TestProviderErrors: an answer that is not JSON, a refusal, and a
// server busy past every attempt are errors that say what happened,
// and only the busy server is asked again.
func TestProviderErrors(t *testing.T) {
	tests := []struct {
		name     string
		fail     func(w http.ResponseWriter)
		want     string
		requests int
	}{
		{"bad JSON", func(w http.ResponseWriter) { w.Write([]byte(`{"data": [{"index": 0, "embedding": [1,`)) },
			"malformed JSON", 1},
		{"refused", func(w http.ResponseWriter) { http.Error(w, "model not found", http.StatusNotFound) },
			"404 Not Found: model not found", 1},
		{"too few", func(w http.ResponseWriter) { w.Write([]byte(`{"data": []}`)) }, "0 embeddings for 1 texts", 1},
		{"busy", func(w http.ResponseWriter) { http.Error(w, "busy", http.StatusTooManyRequests) }, "429", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeServer{}
			p := newProvider(t, f, "")
			f.fail = func(n int, w http.ResponseWriter) bool { tt.fail(w); return true }
			f.requests = 0
			_, err := p.Embed(context.Background(), []string{"quark"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
			if f.requests != tt.requests {
				t.Errorf("%d requests, want %d", f.requests, tt.requests)
			}
		})
	}
}

// TestProviderNeedsAModel: no model name, no provider.
func TestProviderNeedsAModel(t *testing.T) {
	_, err := embed.NewProvider(context.Background(), embed.Config{URL: "http://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "--embeddings-model") {
		t.Errorf("NewProvider without a model = %v", err)
	}
}
