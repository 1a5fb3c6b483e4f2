package analysis

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/llm"
	"github.com/papergraph/papergraph/retry"
)

// defaultTimeout bounds one request unless RunOptions.Timeout says.
const defaultTimeout = 2 * time.Minute

// maxBody bounds the answer read to one request.
const maxBody = 1 << 20

// maxAnswerTokens bounds the tokens of one answer: the schema's longest
// texts come to about 800.
const maxAnswerTokens = 1200

// systemPrompt is the instruction of PromptVersion.
const systemPrompt = "You analyse research papers from their title and abstract alone. Answer with one JSON object " +
	"of the given schema: summary, the paper in two or three plain sentences; novelty, what the paper claims is new, " +
	"in a sentence or two; paper_type, the kind of paper; research_field, the research field in a few words, finer " +
	"than an arXiv category; significance_score, from 0 (routine) to 10 (field-changing), judged from the abstract " +
	"only, most papers 3 to 6; keywords, up to 10, most telling first. Say only what the abstract supports."

// Prompt is the chat the model gets for a paper.
func Prompt(title, abstract string) []llm.Message {
	return []llm.Message{
		{Role: "system", Content: systemPrompt},
		{Role: "user", Content: "Title: " + strings.Join(strings.Fields(title), " ") + "\n\nAbstract: " +
			strings.Join(strings.Fields(abstract), " ")},
	}
}

// chatClient asks an OpenAI-compatible chat-completions endpoint for
// analyses, with structured output of AnswerSchema.
type chatClient struct {
	endpoint llm.Endpoint
	timeout  time.Duration
	retry    retry.Policy
}

// completion is an answer of the endpoint: the analysis, or the problem
// that keeps it from being one, and what it cost.
type completion struct {
	Answer
	problem                        string
	model                          string
	promptTokens, completionTokens int
}

// analyse asks for p's analysis, each try after a tick of pace (when not
// nil). An answer that came back but is no analysis is a completion with
// a problem; an error is a request that failed for good.
func (c *chatClient) analyse(ctx context.Context, p db.AnalysisCandidate, pace <-chan time.Time) (*completion, error) {
	body, err := c.endpoint.Body(llm.Request{
		Messages: Prompt(p.Title, p.Abstract), Temperature: 0, MaxTokens: maxAnswerTokens,
		ResponseFormat: map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "paper_analysis", "strict": true, "schema": AnswerSchema()}},
	})
	if err != nil {
		return nil, err
	}
	return retry.Do(ctx, c.retry, func() (*completion, error) {
		if pace != nil {
			select {
			case <-pace:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return c.post(ctx, body)
	})
}

// post sends one request; errors worth trying again are *retry.Temporary.
func (c *chatClient) post(ctx context.Context, body []byte) (*completion, error) {
	timeout := c.timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	endpoint := c.endpoint.CompletionsURL()
	req, err := c.endpoint.NewRequest(tctx, body)
	if err != nil {
		return nil, fmt.Errorf("--llm-url: %w", err)
	}
	resp, err := c.endpoint.Do(req)
	var raw []byte
	if err == nil {
		defer resp.Body.Close()
		raw, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return nil, &retry.Temporary{Err: fmt.Errorf("%s did not answer within %s", endpoint, timeout)}
	case err != nil:
		return nil, &retry.Temporary{Err: fmt.Errorf("%s: %w", endpoint, err)}
	case resp.StatusCode != http.StatusOK:
		return nil, retry.Refusal(endpoint, resp, raw)
	}
	a := decodeCompletion(raw)
	a.model = cmp.Or(a.model, c.endpoint.Model)
	return a, nil
}

// decodeCompletion reads a chat completion's analysis.
func decodeCompletion(raw []byte) *completion {
	var r llm.Completion
	if err := json.Unmarshal(raw, &r); err != nil {
		return &completion{problem: fmt.Sprintf("the answer is not a chat completion: %s", jsonProblem(err))}
	}
	c := &completion{model: r.Model, promptTokens: r.Usage.PromptTokens, completionTokens: r.Usage.CompletionTokens}
	switch {
	case len(r.Choices) == 0:
		c.problem = "the answer has no choices"
	case r.Choices[0].Message.Refusal != "":
		c.problem = "the model refused: " + retry.Snippet([]byte(r.Choices[0].Message.Refusal))
	case r.Choices[0].FinishReason == "length":
		c.problem = fmt.Sprintf("the answer was cut short at %d tokens", maxAnswerTokens)
	default:
		if err := answerValidator.decode([]byte(r.Choices[0].Message.Content), &c.Answer); err != nil {
			c.problem = err.Error()
		}
	}
	return c
}
