// Package llm speaks the OpenAI-compatible chat-completions API that the
// ask field (package ask) and `papergraph analyse` (package analysis)
// both use: the endpoint, the request, and the answers whole and
// streamed. What a caller asks, how long it waits and what it makes of
// the answer stay with the caller.
package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/papergraph/papergraph/retry"
)

// Endpoint is an OpenAI-compatible chat-completions endpoint.
type Endpoint struct {
	// URL is the API's base URL (http://host:8000/v1): a chat is a POST
	// to URL/chat/completions.
	URL string
	// Model is the model's name, as the endpoint knows it.
	Model string
	// Key, when set, is sent as a bearer token (PAPERGRAPH_LLM_KEY).
	Key string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
}

// Message is one message of a chat.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is the body of a chat-completions request; Body fills in the
// endpoint's model.
type Request struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens"`
	// Stream asks for the answer as server-sent events of Chunks.
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	// ResponseFormat, when set, constrains the answer (a JSON schema).
	ResponseFormat any `json:"response_format,omitempty"`
}

// StreamOptions are the options of a streamed answer.
type StreamOptions struct {
	// IncludeUsage asks for a last chunk with the tokens counted.
	IncludeUsage bool `json:"include_usage"`
}

// Usage is the tokens the endpoint counted for one answer.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Completion is the part of a whole (not streamed) chat completion that
// papergraph reads.
type Completion struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
			Refusal string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage Usage `json:"usage"`
}

// Chunk is one event of a streamed chat completion; Usage is set on the
// last one when the request asked for it.
type Chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// CompletionsURL is where the endpoint's chats are posted.
func (e *Endpoint) CompletionsURL() string {
	return strings.TrimSuffix(e.URL, "/") + "/chat/completions"
}

// Body is r as JSON, asked of e's model.
func (e *Endpoint) Body(r Request) ([]byte, error) {
	r.Model = e.Model
	return json.Marshal(r)
}

// NewRequest is the POST of body (from Body) to the endpoint, with its
// key.
func (e *Endpoint) NewRequest(ctx context.Context, body []byte) (*http.Request, error) {
	return retry.PostJSON(ctx, e.CompletionsURL(), e.Key, body)
}

// Do sends req with the endpoint's client.
func (e *Endpoint) Do(req *http.Request) (*http.Response, error) {
	client := e.Client
	if client == nil {
		client = http.DefaultClient
	}
	return client.Do(req)
}
