package resolvers

import (
	"context"
	"errors"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/notify"
)

// Error codes of subscriptions.
const (
	// CodeSlowConsumer ends a subscription whose client fell
	// notify.Buffer events behind.
	CodeSlowConsumer = "SLOW_CONSUMER"
	// CodeUnavailable refuses a subscription on a server without live
	// updates.
	CodeUnavailable = "UNAVAILABLE"
)

// errNoBus refuses subscriptions on a schema built without a bus.
var errNoBus = &gqlerror.Error{Message: "this server has no live updates", Extensions: map[string]any{"code": CodeUnavailable}}

// papersAdded streams the papers of each event that match filter, read
// in one statement per event.
func (r *Resolver) papersAdded(ctx context.Context, filter *model.PaperFilter) (<-chan *model.Paper, error) {
	if r.bus == nil {
		return nil, errNoBus
	}
	s, err := r.paperSearch(ctx, nil, filter)
	if err != nil {
		return nil, err
	}
	return stream(ctx, r.bus, func(ctx context.Context, e notify.Event) ([]*model.Paper, error) {
		if len(e.Papers) == 0 {
			return nil, nil
		}
		s.IDs = e.Papers
		ps, err := db.MatchPapers(ctx, r.db, s)
		return wrapAll(ps, wrapPaper), err
	}, func(ctx context.Context, l *Loaders, p *model.Paper) error {
		return lookAheadWith(ctx, l, "Paper", []*db.Paper{p.Paper})
	}), nil
}

// researcherUpdated streams the researcher id names each time an event
// names them.
func (r *Resolver) researcherUpdated(ctx context.Context, id string) (<-chan *model.Researcher, error) {
	if r.bus == nil {
		return nil, errNoBus
	}
	rid, err := r.researcherID(ctx, "id", id)
	if err != nil {
		return nil, err
	}
	return stream(ctx, r.bus, func(ctx context.Context, e notify.Event) ([]*model.Researcher, error) {
		if !slices.Contains(e.Researchers, rid) {
			return nil, nil
		}
		rs, err := db.ResearchersByIDs(ctx, r.db, []int64{rid})
		if err != nil || rs[rid] == nil {
			return nil, err
		}
		return []*model.Researcher{wrapResearcher(rs[rid])}, nil
	}, func(ctx context.Context, l *Loaders, r *model.Researcher) error {
		return lookAheadWith(ctx, l, "Researcher", []*db.Researcher{r.Researcher})
	}), nil
}

// stream subscribes to bus until ctx ends and sends what read makes of
// each event. The channel it returns is unbuffered: while the client is
// slow to take an item, the events wait in the subscription's queue,
// bounded by the ids it holds, and once that is full the subscription
// ends with CodeSlowConsumer.
//
// Each item goes out in an answer of its own, with the fresh loaders
// EventLoaders gives it: before sending an item, stream takes those
// loaders (EventLoaders hands them over once the answer waits for its
// item) and has lookAhead fill them for the item's selection, so that
// the fields below it read a level in one statement, as below a root.
func stream[T any](ctx context.Context, bus *notify.Bus, read func(context.Context, notify.Event) ([]T, error),
	lookAhead func(context.Context, *Loaders, T) error) <-chan T {
	sub := bus.Subscribe()
	out := make(chan T)
	answers, _ := ctx.Value(answerLoadersKey{}).(chan *Loaders)
	go func() {
		defer close(out)
		defer sub.Close()
		for {
			e, err := sub.Next(ctx)
			if err != nil {
				if errors.Is(err, notify.ErrSlow) {
					transport.AddSubscriptionError(ctx, &gqlerror.Error{
						Message:    "the subscription fell too far behind its events and was dropped; subscribe again",
						Extensions: map[string]any{"code": CodeSlowConsumer},
					})
				}
				return
			}
			items, err := read(ctx, e)
			if err != nil {
				if ctx.Err() == nil {
					transport.AddSubscriptionError(ctx, ErrorPresenter(ctx, err))
				}
				return
			}
			for _, it := range items {
				if answers != nil {
					select {
					case l := <-answers:
						// A read that fails here fails again in the
						// field's resolver, which reports it.
						_ = lookAhead(ctx, l, it)
					case <-ctx.Done():
						return
					}
				}
				select {
				case out <- it:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// EventLoaders is the gqlgen extension that gives each answer of a
// subscription fresh loaders, since loaders cache for their lifetime and
// a subscription lives as long as its connection. It hands them to the
// subscription's stream too, which fills them for the answer's item
// before sending it (see stream).
type EventLoaders struct{ DB bun.IDB }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = EventLoaders{}

// answerLoadersKey is the context key, in a subscription's context, of the
// channel on which EventLoaders hands each answer's loaders to the stream.
type answerLoadersKey struct{}

func (EventLoaders) ExtensionName() string { return "EventLoaders" }

func (EventLoaders) Validate(graphql.ExecutableSchema) error { return nil }

func (EventLoaders) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if op := graphql.GetOperationContext(ctx); op == nil || op.Operation == nil || op.Operation.Operation != ast.Subscription {
		return next(ctx)
	}
	return next(context.WithValue(ctx, answerLoadersKey{}, make(chan *Loaders, 1)))
}

// InterceptResponse runs an answer with fresh loaders. The answers of a
// subscription run one after another, each waiting for its item; the
// loaders are offered to the stream before the wait, in place of those of
// an answer that ended without an item.
func (l EventLoaders) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	fresh := NewLoaders(l.DB)
	if answers, ok := ctx.Value(answerLoadersKey{}).(chan *Loaders); ok {
		select {
		case <-answers:
		default:
		}
		answers <- fresh
	}
	return next(WithLoaders(ctx, fresh))
}
