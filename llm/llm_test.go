package llm

import (
	"encoding/json"
	"testing"
)

// A chat is posted to the base URL's chat/completions, with or without a
// trailing slash, asked of the endpoint's model; a request that does not
// stream sends no stream fields.
func TestRequestOfEndpoint(t *testing.T) {
	for _, url := range []string{"http://host:8000/v1", "http://host:8000/v1/"} {
		e := &Endpoint{URL: url, Model: "m"}
		if got := e.CompletionsURL(); got != "http://host:8000/v1/chat/completions" {
			t.Errorf("%s: completions at %s", url, got)
		}
	}
	e := &Endpoint{Model: "m"}
	body, err := e.Body(Request{Model: "other", Messages: []Message{{Role: "user", Content: "hi"}}, MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got["model"] != "m" || got["max_tokens"] != 5.0 || got["temperature"] != 0.0 {
		t.Errorf("body %s, want model m, max_tokens 5, temperature 0", body)
	}
	for _, k := range []string{"stream", "stream_options", "response_format"} {
		if _, ok := got[k]; ok {
			t.Errorf("body %s has %s", body, k)
		}
	}
}
