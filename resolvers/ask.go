package resolvers

import (
	"context"
	"errors"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/ask"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/reqid"
)

// CodeLLMUnavailable is an ask whose answer the language model did not
// give: there is none, it is busy, it took too long or it answered
// malformed. The passages stand.
const CodeLLMUnavailable = "LLM_UNAVAILABLE"

// MaxQuestionRunes bounds ask's question.
const MaxQuestionRunes = 500

// TokensPerPoint is how many of a model's tokens cost one point of the
// budget.
const TokensPerPoint = 100

// Asker is what ask needs of the server: the model, nil without one, and
// how to charge the client's budget for its tokens.
type Asker struct {
	LLM *ask.LLM
	// Charge spends points of the request's budget, or refuses them with
	// the error the client gets when the budget holds too few; nil
	// charges nothing.
	Charge func(ctx context.Context, points int) error
	// Refund gives back points Charge spent (takes more when negative);
	// nil gives back nothing.
	Refund func(ctx context.Context, points int)
}

func (a *Asker) refund(ctx context.Context, points int) {
	if a.Refund != nil && points != 0 {
		a.Refund(ctx, points)
	}
}

type askerKey struct{}

// WithAsker gives the request's ask fields a.
func WithAsker(ctx context.Context, a *Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

func askerFrom(ctx context.Context) *Asker {
	if a, ok := ctx.Value(askerKey{}).(*Asker); ok {
		return a
	}
	return &Asker{}
}

// TokenPoints are the points tokens cost: one per TokensPerPoint,
// rounded up.
func TokenPoints(tokens int) int { return (tokens + TokensPerPoint - 1) / TokensPerPoint }

// AskPassages checks ask's arguments and reads the question's passages,
// numbered from 1.
func AskPassages(ctx context.Context, idb bun.IDB, question string, filter *model.PaperFilter, first *int) ([]ask.Passage, []*model.Passage, error) {
	if err := checkText("question", question, textKind{max: MaxQuestionRunes, runes: true, text: true}); err != nil {
		return nil, nil, err
	}
	n := ask.DefaultPassages
	if first != nil {
		n = *first
	}
	if n < 1 || n > ask.MaxPassages {
		return nil, nil, badInput("first", "must be 1 to %d, not %d", ask.MaxPassages, n)
	}
	s, err := (&Resolver{db: idb}).paperSearch(ctx, nil, filter)
	if err != nil {
		return nil, nil, err
	}
	ps, err := ask.Passages(ctx, idb, question, s, n)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*model.Passage, len(ps))
	for i, p := range ps {
		out[i] = &model.Passage{Number: i + 1, Text: p.Text, Paper: wrapPaper(p.Paper), Position: p.Position, Score: p.Score}
	}
	return ps, out, nil
}

// AskAnswer has the request's model answer question from ps, each piece
// of text passed to emit (which may be nil) as it comes, and charges its
// tokens: the most the answer may take is reserved before the model is
// asked, and what it did not take given back after, so that a budget too
// small for an answer is refused before any model's work (with Charge's
// error) and an answer never overspends it. A failed answer costs no
// tokens. Without a model, or when the model fails, it returns nil and
// an LLM_UNAVAILABLE error that says why.
func AskAnswer(ctx context.Context, question string, ps []ask.Passage, emit func(string)) (*model.AskAnswer, error) {
	a := askerFrom(ctx)
	if a.LLM == nil {
		return nil, llmError("no language model is configured on this server: the passages stand alone")
	}
	if len(ps) == 0 {
		return nil, llmError("no passage answers the question, so the model was not asked")
	}
	reserved := TokenPoints(ask.MaxTokens(question, ps))
	if a.Charge != nil {
		if err := a.Charge(ctx, reserved); err != nil {
			return nil, err
		}
	}
	ans, err := a.LLM.Answer(ctx, question, ps, emit)
	if err != nil {
		a.refund(ctx, reserved)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		slog.WarnContext(ctx, "ask: the language model failed", "request_id", reqid.From(ctx), "err", err)
		msg := "the language model's answer was malformed"
		switch {
		case errors.Is(err, ask.ErrModelBusy):
			msg = err.Error()
		case errors.Is(err, ask.ErrModelTimeout):
			msg = "the language model did not answer in time"
		}
		return nil, llmError(msg + ": the passages stand alone")
	}
	// An endpoint that counts more tokens than the estimate is charged
	// them too (a negative refund).
	a.refund(ctx, reserved-TokenPoints(ans.Tokens()))
	removed := ans.Removed[:min(len(ans.Removed), ask.MaxPassages)]
	return &model.AskAnswer{Text: ans.Text, Citations: ans.Citations, RemovedCitations: removed, Model: ans.Model, Tokens: ans.Tokens()}, nil
}

func llmError(msg string) error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": CodeLLMUnavailable}}
}

// askResult is the ask field: passages, and the answer when a model gives
// one (its failure an error beside the passages).
func (r *Resolver) askResult(ctx context.Context, question string, filter *model.PaperFilter, first *int) (*model.AskResult, error) {
	ps, passages, err := AskPassages(ctx, r.db, question, filter, first)
	if err != nil {
		return nil, err
	}
	out := &model.AskResult{Question: question, Passages: passages}
	if err := lookAhead(ctx, "Paper", passagePapers(ps), "AskResult", "passages", "Passage", "paper"); err != nil {
		return nil, err
	}
	if !asksField(ctx, "answer") {
		return out, nil
	}
	ans, err := AskAnswer(ctx, question, ps, nil)
	if err != nil {
		graphql.AddError(ctx, err)
		return out, nil
	}
	out.Answer = ans
	return out, nil
}

// passagePapers are the papers of ps, in order.
func passagePapers(ps []ask.Passage) []*db.Paper {
	papers := make([]*db.Paper, len(ps))
	for i, p := range ps {
		papers[i] = p.Paper
	}
	return papers
}

// asksField tells whether the field's selection asks for name.
func asksField(ctx context.Context, name string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// askStream is the askStream subscription: the passages' event, then an
// event per piece of the answer and the answer's. The events wait for the
// client: an answer piece is not read from the model before the one
// before it has gone out.
func (r *Resolver) askStream(ctx context.Context, question string, filter *model.PaperFilter, first *int) (<-chan *model.AskEvent, error) {
	ps, passages, err := AskPassages(ctx, r.db, question, filter, first)
	if err != nil {
		return nil, err
	}
	out := make(chan *model.AskEvent)
	answers, _ := ctx.Value(answerLoadersKey{}).(chan *Loaders)
	send := func(e *model.AskEvent) bool {
		select {
		case out <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		defer close(out)
		if answers != nil {
			// The passages' papers are read for the first answer's
			// loaders a level at a time, as below the ask field.
			select {
			case l := <-answers:
				_ = lookAheadWith(ctx, l, "Paper", passagePapers(ps), "AskEvent", "passages", "Passage", "paper")
			case <-ctx.Done():
				return
			}
		}
		if !send(&model.AskEvent{Kind: model.AskEventKindPassages, Passages: passages}) {
			return
		}
		ans, err := AskAnswer(ctx, question, ps, func(s string) {
			send(&model.AskEvent{Kind: model.AskEventKindDelta, Delta: &s})
		})
		if err != nil {
			if ctx.Err() == nil {
				transport.AddSubscriptionError(ctx, ErrorPresenter(ctx, err))
			}
			return
		}
		send(&model.AskEvent{Kind: model.AskEventKindAnswer, Answer: ans})
	}()
	return out, nil
}
