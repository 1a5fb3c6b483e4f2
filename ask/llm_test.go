package ask_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/papergraph/papergraph/ask"
	"github.com/papergraph/papergraph/ask/asktest"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/llm"
)

// twoPassages are passages of two papers.
func twoPassages() []ask.Passage {
	return []ask.Passage{
		{Paper: &db.Paper{Title: "Branes", ArxivID: "hep-th/9407087"}, Text: "Branes wrap cycles."},
		{Paper: &db.Paper{Title: "Strings", ArxivID: "2108.10257"}, Text: "Strings vibrate."},
	}
}

// A streamed answer arrives in order, piece by piece, with its citations
// checked even when one is split across Pieces: numbers outside the
// passages never reach the reader and are reported.
func TestAnswerStreamsCheckedCitations(t *testing.T) {
	s := &asktest.Scripted{Pieces: []string{"Branes wrap [", "1] and strings vibrate [2", "][7]. See [1, 9", "] or [note] and [3]", "."}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	l := &ask.LLM{Endpoint: llm.Endpoint{URL: srv.URL + "/v1", Model: "m", Key: "secret"}}
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
	prompt := fmt.Sprint(s.Got["messages"])
	if !strings.Contains(prompt, "[2] Strings (arXiv:2108.10257): Strings vibrate.") || s.Got["stream"] != true {
		t.Errorf("the model was sent %v", s.Got)
	}
}

// A busy model (429), a malformed stream, one cut short and one that
// takes too long each give their error, not an answer.
func TestAnswerFailures(t *testing.T) {
	cases := []struct {
		name string
		s    *asktest.Scripted
		want error
		text string
	}{
		{"429", &asktest.Scripted{Status: http.StatusTooManyRequests}, ask.ErrModelBusy, "try again in 7s"},
		{"500", &asktest.Scripted{Status: http.StatusInternalServerError}, ask.ErrModelAnswer, "status 500"},
		{"malformed JSON", &asktest.Scripted{Raw: "data: {\"choices\": [\n\n"}, ask.ErrModelAnswer, "not JSON"},
		{"no [DONE]", &asktest.Scripted{Raw: "data: {\"choices\":[{\"delta\":{\"content\":\"Half\"}}]}\n\n"}, ask.ErrModelAnswer, "before [DONE]"},
		{"timeout", &asktest.Scripted{Hang: 5 * time.Second}, ask.ErrModelTimeout, "in time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.s)
			defer srv.Close()
			l := &ask.LLM{Endpoint: llm.Endpoint{URL: srv.URL + "/v1", Model: "m"}, Timeout: 200 * time.Millisecond}
			a, err := l.Answer(t.Context(), "q", twoPassages(), nil)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) || a != nil {
				t.Errorf("got %+v, %v; want an error wrapping %v saying %q", a, err, c.want, c.text)
			}
		})
	}
}
