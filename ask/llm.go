package ask

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/papergraph/papergraph/llm"
)

// DefaultTimeout bounds one answer of the model unless LLM.Timeout says.
const DefaultTimeout = 60 * time.Second

// maxAnswerTokens bounds the tokens of one answer.
const maxAnswerTokens = 600

// LLM is the OpenAI-compatible chat-completions endpoint that answers
// questions.
type LLM struct {
	llm.Endpoint
	// Timeout bounds one answer, DefaultTimeout when zero.
	Timeout time.Duration
}

// Errors of the model, wrapped by Answer's errors.
var (
	// ErrModelBusy is the endpoint's 429: it asks the caller to wait.
	ErrModelBusy = errors.New("the language model is busy")
	// ErrModelTimeout is an answer that did not end within the timeout.
	ErrModelTimeout = errors.New("the language model did not answer in time")
	// ErrModelAnswer is an answer that is not what the API specifies.
	ErrModelAnswer = errors.New("the language model's answer is malformed")
)

// Answer is the model's answer to a question from its passages.
type Answer struct {
	// Text is the answer, its citations [n] of numbers outside the
	// passages removed.
	Text string
	// Citations are the passage numbers (1-based) the text cites, in
	// order of first citation.
	Citations []int
	// Removed are the numbers the model cited that name no passage, in
	// the order cited; the text no longer holds them.
	Removed []int
	// Model is the model that answered, as the endpoint names it.
	Model string
	// PromptTokens and CompletionTokens are the tokens the endpoint
	// counted (estimated from the text when it reports none).
	PromptTokens, CompletionTokens int
}

// Tokens are the tokens of the question and the answer together.
func (a *Answer) Tokens() int { return a.PromptTokens + a.CompletionTokens }

// Prompt is the chat the model gets: an instruction to answer from the
// numbered passages only and to cite them as [n], then the passages and
// the question.
func Prompt(question string, ps []Passage) []llm.Message {
	var b strings.Builder
	for i, p := range ps {
		fmt.Fprintf(&b, "[%d] %s (arXiv:%s): %s\n", i+1, p.Paper.Title, p.Paper.ArxivID, p.Text)
	}
	return []llm.Message{
		{Role: "system", Content: "You answer questions about research papers using only the numbered passages given. " +
			"Cite every claim with the number of its passage in brackets, like [1] or [2][3]. " +
			"Cite no number that is not among the passages. If the passages do not answer the question, say so."},
		{Role: "user", Content: "Passages:\n" + b.String() + "\nQuestion: " + question},
	}
}

// MaxTokens is the most tokens an answer to question from ps may count,
// as Answer estimates them when the endpoint reports none: the prompt's
// and the answer's longest. A caller reserves them before asking.
func MaxTokens(question string, ps []Passage) int {
	n := maxAnswerTokens
	for _, m := range Prompt(question, ps) {
		n += estimateTokens(m.Content)
	}
	return n
}

// Answer asks the model question from ps, streaming: each piece of the
// answer's text goes to emit as it arrives, its citations already checked
// (a citation of a number outside 1..len(ps) never reaches emit). emit may
// be nil. The answer is whole once Answer returns without an error; with
// one, what was emitted stands, and the error wraps ErrModelBusy,
// ErrModelTimeout or ErrModelAnswer, or is ctx's.
func (l *LLM) Answer(ctx context.Context, question string, ps []Passage, emit func(string)) (*Answer, error) {
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrModelTimeout)
	defer cancel()
	msgs := Prompt(question, ps)
	resp, err := l.post(ctx, msgs)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	c := newCiter(len(ps), emit)
	a, err := readStream(ctx, resp.Body, c)
	if err != nil {
		return nil, err
	}
	c.flush()
	a.Text, a.Citations, a.Removed = c.text.String(), c.cited, c.removed
	if a.Model == "" {
		a.Model = l.Model
	}
	if a.PromptTokens == 0 && a.CompletionTokens == 0 {
		for _, m := range msgs {
			a.PromptTokens += estimateTokens(m.Content)
		}
		a.CompletionTokens = estimateTokens(a.Text)
	}
	return a, nil
}

// post sends the chat and returns the streamed answer's response.
func (l *LLM) post(ctx context.Context, msgs []llm.Message) (*http.Response, error) {
	body, err := l.Body(llm.Request{
		Messages: msgs, Stream: true, Temperature: 0,
		MaxTokens: maxAnswerTokens, StreamOptions: &llm.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		return nil, err
	}
	req, err := l.NewRequest(ctx, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := l.Do(req)
	if err != nil {
		return nil, modelErr(ctx, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		resp.Body.Close()
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			return nil, fmt.Errorf("%w: try again in %ds", ErrModelBusy, s)
		}
		return nil, ErrModelBusy
	case resp.StatusCode != http.StatusOK:
		resp.Body.Close()
		return nil, fmt.Errorf("%w: status %d", ErrModelAnswer, resp.StatusCode)
	}
	return resp, nil
}

// modelErr is err as the caller should see it: the timeout's cause when
// the answer took too long.
func modelErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrModelTimeout) {
		return ErrModelTimeout
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%w: %v", ErrModelAnswer, err)
}

// readStream reads a chat completion's server-sent events into c until
// [DONE], and returns the answer's model and usage. A stream that ends
// without [DONE], or with an event that is not a chunk, is malformed.
func readStream(ctx context.Context, body io.Reader, c *citer) (*Answer, error) {
	a := &Answer{}
	lines := bufio.NewScanner(body)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			return a, nil
		}
		var ch llm.Chunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return nil, fmt.Errorf("%w: an event is not JSON", ErrModelAnswer)
		}
		if ch.Model != "" {
			a.Model = ch.Model
		}
		if ch.Usage != nil {
			a.PromptTokens, a.CompletionTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
		}
		for _, choice := range ch.Choices {
			c.write(choice.Delta.Content)
		}
	}
	if err := lines.Err(); err != nil {
		return nil, modelErr(ctx, err)
	}
	if ctx.Err() != nil {
		return nil, modelErr(ctx, ctx.Err())
	}
	return nil, fmt.Errorf("%w: the stream ended before [DONE]", ErrModelAnswer)
}

// estimateTokens is a rough count of text's tokens, four characters each.
func estimateTokens(text string) int { return (len(text) + 3) / 4 }
