package ask_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/papergraph/papergraph/ask"
	"github.com/papergraph/papergraph/db"
)

// scripted is an OpenAI-compatible chat-completions server that answers
// with a script: the pieces of a streamed answer, or a failure.
type scripted struct {
	pieces []string
	// status, when not 0 or 200, is the answer's status.
	status int
	// raw, when set, is the whole body sent instead of the pieces.
	raw string
	// hang waits this long before answering.
	hang time.Duration
	// got is the last request's body.
	got map[string]any
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	_ = json.NewDecoder(r.Body).Decode(&s.got)
	if s.hang > 0 {
		select {
		case <-time.After(s.hang):
		case <-r.Context().Done():
			return
		}
	}
	if s.status != 0 && s.status != http.StatusOK {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(s.status)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if s.raw != "" {
		fmt.Fprint(w, s.raw)
		return
	}
	for _, p := range s.pieces {
		b, _ := json.Marshal(map[string]any{"model": "scripted-1", "choices": []any{map[string]any{"delta": map[string]string{"content": p}}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: {\"model\":\"scripted-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":30}}\n\ndata: [DONE]\n\n")
}

// twoPassages are passages of two papers.
func twoPassages() []ask.Passage {
	return []ask.Passage{
		{Paper: &db.Paper{Title: "Branes", ArxivID: "hep-th/9407087"}, Text: "Branes wrap cycles."},
		{Paper: &db.Paper{Title: "Strings", ArxivID: "2108.10257"}, Text: "Strings vibrate."},
	}
}

// A streamed answer arrives in order, piece by piece, with its citations
// checked even when one is split across pieces: numbers outside the
// passages never reach the reader and are reported.
func TestAnswerStreamsCheckedCitations(t *testing.T) {
	s := &scripted{pieces: []string{"Branes wrap [", "1] and strings vibrate [2", "][7]. See [1, 9", "] or [note] and [3]", "."}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	l := &ask.LLM{URL: srv.URL + "/v1", Model: "m", Key: "secret"}
	var got []string
	a, err := l.Answer(t.Context(), "What do branes do?", twoPassages(), func(p string) { got = append(got, p) })
	if err != nil {
		t.Fatal(err)
	}
	want := "Branes wrap [1] and strings vibrate [2]. See [1] or [note] and ."
	if a.Text != want || strings.Join(got, "") != want {
		t.Errorf("answer %q, streamed %q; want %q", a.Text, got, want)
	}
	if len(got) < 4 || got[0] != "Branes wrap " {
		t.Errorf("streamed pieces %q, want the answer piece by piece", got)
	}
	if !slices.Equal(a.Citations, []int{1, 2}) || !slices.Equal(a.Removed, []int{7, 9, 3}) {
		t.Errorf("citations %v, removed %v; want [1 2] and [7 9 3]", a.Citations, a.Removed)
	}
	if a.Model != "scripted-1" || a.PromptTokens != 120 || a.CompletionTokens != 30 {
		t.Errorf("model %q, tokens %d+%d; want scripted-1, 120+30", a.Model, a.PromptTokens, a.CompletionTokens)
	}
	prompt := fmt.Sprint(s.got["messages"])
	if !strings.Contains(prompt, "[2] Strings (arXiv:2108.10257): Strings vibrate.") || s.got["stream"] != true {
		t.Errorf("the model was sent %v", s.got)
	}
}

// A busy model (429), a malformed stream, one cut short and one that
// takes too long each give their error, not an answer.
func TestAnswerFailures(t *testing.T) {
	cases := []struct {
		name string
		s    *scripted
		want error
		text string
	}{
		{"429", &scripted{status: http.StatusTooManyRequests}, ask.ErrModelBusy, "try again in 7s"},
		{"500", &scripted{status: http.StatusInternalServerError}, ask.ErrModelAnswer, "status 500"},
		{"malformed JSON", &scripted{raw: "data: {\"choices\": [\n\n"}, ask.ErrModelAnswer, "not JSON"},
		{"no [DONE]", &scripted{raw: "data: {\"choices\":[{\"delta\":{\"content\":\"Half\"}}]}\n\n"}, ask.ErrModelAnswer, "before [DONE]"},
		{"timeout", &scripted{hang: 5 * time.Second}, ask.ErrModelTimeout, "in time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.s)
			defer srv.Close()
			l := &ask.LLM{URL: srv.URL + "/v1", Model: "m", Timeout: 200 * time.Millisecond}
			a, err := l.Answer(t.Context(), "q", twoPassages(), nil)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) || a != nil {
				t.Errorf("got %+v, %v; want an error wrapping %v saying %q", a, err, c.want, c.text)
			}
		})
	}
}
