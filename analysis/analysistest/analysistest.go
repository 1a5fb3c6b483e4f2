// Package analysistest serves a scripted OpenAI-compatible
// chat-completions endpoint for tests of papergraph analyse: it answers
// each paper, by its title, as a script says.
package analysistest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Reply is one scripted answer.
type Reply struct {
	// Status, when not 0 or 200, is the answer's status, sent with
	// RetryAfter as its Retry-After header when that is set.
	Status     int
	RetryAfter string
	// Content is the assistant message's content: the analysis as JSON,
	// or whatever a broken model says.
	Content string
	// Hang holds the answer until the request ends.
	Hang bool
}

// PromptTokens and CompletionTokens are the usage of every answer of
// status 200.
const (
	PromptTokens     = 300
	CompletionTokens = 120
)

// Server answers POST /v1/chat/completions by Script, called with the
// paper's title (read off the prompt's "Title: " line) and how many times
// that title has been asked about, from 1.
type Server struct {
	Script func(title string, call int) Reply
	mu     sync.Mutex
	calls  map[string]int
	last   map[string]any
}

// Calls is how many times title has been asked about.
func (s *Server) Calls(title string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[title]
}

// Total is how many requests the server has had.
func (s *Server) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		n += c
	}
	return n
}

// Last is the body of the last request.
func (s *Server) Last() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct{ Role, Content string }
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	raw, _ := json.Marshal(body)
	_ = json.Unmarshal(raw, &req)
	title := ""
	for _, m := range req.Messages {
		if t, ok := strings.CutPrefix(m.Content, "Title: "); ok && m.Role == "user" {
			title, _, _ = strings.Cut(t, "\n")
		}
	}
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[title]++
	call := s.calls[title]
	s.last = body
	s.mu.Unlock()
	reply := s.Script(title, call)
	if reply.Hang {
		<-r.Context().Done()
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		http.Error(w, fmt.Sprintf(`{"error":{"message":"scripted %d"}}`, reply.Status), reply.Status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-scripted", "object": "chat.completion", "model": req.Model + "-scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": reply.Content}}},
		"usage": map[string]int{"prompt_tokens": PromptTokens, "completion_tokens": CompletionTokens,
			"total_tokens": PromptTokens + CompletionTokens},
	})
}
