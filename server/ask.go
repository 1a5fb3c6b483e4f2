package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/ask"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/ratelimit"
	"github.com/papergraph/papergraph/reqid"
	"github.com/papergraph/papergraph/resolvers"
)

// withAsker gives the requests' ask fields (of /graphql, its WebSocket
// and /ask) the model, and the charge of its tokens to the request's
// budget.
func withAsker(llm *ask.LLM, next http.Handler) http.Handler {
	a := asker(llm)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(resolvers.WithAsker(r.Context(), a)))
	})
}

// asker is llm with the charges of its tokens to the request's budget: a
// charge the budget cannot cover is refused with RATE_LIMITED (or
// COST_LIMIT_EXCEEDED past the whole budget), leaving the status of the
// answer it is refused in as it was.
func asker(llm *ask.LLM) *resolvers.Asker {
	return &resolvers.Asker{LLM: llm,
		Charge: func(ctx context.Context, points int) error {
			res, err := spendMore(ctx, points)
			var spent *errBudgetSpent
			switch {
			case errors.As(err, &spent):
				return refusal(codeRateLimited, "%s, and the answer may take %d points of tokens; the passages stand alone", spent.Error(), points)
			case errors.Is(err, ratelimit.ErrCostOverLimit):
				return refusal(codeCostLimit, "the answer may take %d points of tokens, more than the whole hourly budget of %d; the passages stand alone", points, res.Limit)
			case err != nil:
				return refusal(codeRateLimited, "the budget could not be read before the request ended")
			}
			return nil
		},
		Refund: func(ctx context.Context, points int) {
			ex := exchangeFrom(ctx)
			if ex.limiter == nil {
				return
			}
			res, err := ex.limiter.Adjust(ctx, ex.client, -points)
			if err != nil {
				slog.WarnContext(ctx, "ask: the tokens' points could not be settled", "request_id", reqid.From(ctx), "err", err)
				return
			}
			ex.setRate(res)
		},
	}
}

// askPassagesDoc reads a question's passages through /graphql, which
// prices them by the cost model.
const askPassagesDoc = `query AskPassages($question: String!, $first: Int) {
  ask(question: $question, first: $first) {
    passages { number text position score paper { arxivId title } }
  }
}`

// askPassage is a passage as askPassagesDoc reads it.
type askPassage struct {
	Number   int     `json:"number"`
	Text     string  `json:"text"`
	Position int     `json:"position"`
	Score    float64 `json:"score"`
	Paper    struct {
		ArxivID string `json:"arxivId"`
		Title   string `json:"title"`
	} `json:"paper"`
}

// askStream serves /ask?question=…&first=…: the question's passages and
// then the model's answer as server-sent events, the answer piece by
// piece as the model writes it. Events: "passages" (the list, as the
// GraphQL ask field gives it), "delta" ({"text": …}, in order), "answer"
// (the whole answer: text, citations, removedCitations, model, tokens)
// and "error" ({"code", "message"}), which ends the stream. The passages
// are priced as the ask query is; the tokens as it charges them (see
// resolvers.AskAnswer). A client whose budget cannot pay for the passages
// is answered 429, with Retry-After, before any event; one that cannot
// pay for the answer's tokens gets the passages and a RATE_LIMITED error
// event, the model unasked. The X-RateLimit-* headers state the budget
// after the passages.
func askStream(api http.Handler, llm *ask.LLM) http.Handler {
	g := gqlRunner{api: api}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vars := map[string]any{"question": r.FormValue("question")}
		if f := r.FormValue("first"); f != "" {
			n, err := strconv.Atoi(f)
			if err != nil {
				http.Error(w, "first: not a number", http.StatusBadRequest)
				return
			}
			vars["first"] = n
		}
		a, err := g.run(r.Context(), askPassagesDoc, vars)
		if err != nil {
			http.Error(w, "the passages could not be read", http.StatusInternalServerError)
			return
		}
		ex := exchangeFrom(r.Context())
		if rate := ex.latestRate(); rate != nil {
			ratelimit.WriteHeaders(w.Header(), *rate)
		}
		if ex.limited {
			// Refused before any work, as /graphql refuses it.
			http.Error(w, a.errorText(), http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		rc := http.NewResponseController(w)
		send := func(event string, v any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
			_ = rc.Flush()
		}
		if len(a.Errors) > 0 {
			send("error", map[string]string{"code": a.Errors[0].Extensions.Code, "message": a.errorText()})
			return
		}
		var data struct {
			Ask struct{ Passages []askPassage } `json:"ask"`
		}
		if err := json.Unmarshal(a.Data, &data); err != nil {
			send("error", map[string]string{"code": resolvers.CodeInternal, "message": "the passages could not be read"})
			return
		}
		send("passages", data.Ask.Passages)
		streamAnswer(r.Context(), llm, r.FormValue("question"), data.Ask.Passages, send)
	})
}

// streamAnswer sends the model's answer from ps as delta events and then
// the answer event, or an error event.
func streamAnswer(ctx context.Context, llm *ask.LLM, question string, ps []askPassage, send func(string, any)) {
	passages := make([]ask.Passage, len(ps))
	for i, p := range ps {
		passages[i] = ask.Passage{Paper: &db.Paper{ArxivID: p.Paper.ArxivID, Title: p.Paper.Title}, Text: p.Text, Position: p.Position, Score: p.Score}
	}
	ctx = resolvers.WithAsker(ctx, asker(llm))
	ans, err := resolvers.AskAnswer(ctx, question, passages, func(s string) { send("delta", map[string]string{"text": s}) })
	if err != nil {
		code, msg := resolvers.CodeLLMUnavailable, err.Error()
		var gqlErr *gqlerror.Error
		switch {
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
			code, msg = resolvers.CodeTimeout, "the request ended before the answer"
		case errors.As(err, &gqlErr):
			if c, ok := gqlErr.Extensions["code"].(string); ok {
				code, msg = c, gqlErr.Message
			}
		}
		send("error", map[string]string{"code": code, "message": msg})
		return
	}
	send("answer", ans)
}
