// Package asktest serves a scripted OpenAI-compatible chat-completions
// endpoint for tests of ask and its callers.
package asktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Scripted is an OpenAI-compatible chat-completions server that answers
// with a script: the pieces of a streamed answer, or a failure.
type Scripted struct {
	Pieces []string
	// Status, when not 0 or 200, is the answer's status.
	Status int
	// Raw, when set, is the whole body sent instead of the pieces.
	Raw string
	// Hang waits this long before answering.
	Hang time.Duration
	// Got is the last request's body, Calls the requests answered.
	Got   map[string]any
	Calls int
	mu    sync.Mutex
}

// ServeHTTP answers POST /v1/chat/completions by the script, streamed as
// server-sent events of chat completion chunks, usage and [DONE] last.
func (s *Scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var got map[string]any
	_ = json.NewDecoder(r.Body).Decode(&got)
	s.mu.Lock()
	s.Got, s.Calls = got, s.Calls+1
	s.mu.Unlock()
	if s.Hang > 0 {
		select {
		case <-time.After(s.Hang):
		case <-r.Context().Done():
			return
		}
	}
	if s.Status != 0 && s.Status != http.StatusOK {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(s.Status)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if s.Raw != "" {
		fmt.Fprint(w, s.Raw)
		return
	}
	for _, p := range s.Pieces {
		b, _ := json.Marshal(map[string]any{"model": "scripted-1", "choices": []any{map[string]any{"delta": map[string]string{"content": p}}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: {\"model\":\"scripted-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":30}}\n\ndata: [DONE]\n\n")
}
