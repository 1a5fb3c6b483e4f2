package resolvers

import (
	"context"
	"errors"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/uptrace/bun"
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
	}), nil
}

// stream subscribes to bus until ctx ends and sends what read makes of
// each event. The channel it returns is unbuffered: while the client is
// slow to take an item, the events wait in the subscription's bounded
// buffer, and once that is full the subscription ends with
// CodeSlowConsumer.
func stream[T any](ctx context.Context, bus *notify.Bus, read func(context.Context, notify.Event) ([]T, error)) <-chan T {
	sub := bus.Subscribe()
	out := make(chan T)
	go func() {
		defer close(out)
		defer sub.Close()
		for {
			var e notify.Event
			select {
			case <-ctx.Done():
				return
			case got, ok := <-sub.Events():
				if !ok {
					if errors.Is(sub.Err(), notify.ErrSlow) {
						transport.AddSubscriptionError(ctx, &gqlerror.Error{
							Message:    "the subscription fell too far behind its events and was dropped; subscribe again",
							Extensions: map[string]any{"code": CodeSlowConsumer},
						})
					}
					return
				}
				e = got
			}
			items, err := read(ctx, e)
			if err != nil {
				if ctx.Err() == nil {
					transport.AddSubscriptionError(ctx, ErrorPresenter(ctx, err))
				}
				return
			}
			for _, it := range items {
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
// a subscription lives as long as its connection.
type EventLoaders struct{ DB bun.IDB }

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = EventLoaders{}

func (EventLoaders) ExtensionName() string { return "EventLoaders" }

func (EventLoaders) Validate(graphql.ExecutableSchema) error { return nil }

func (l EventLoaders) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	return next(WithLoaders(ctx, NewLoaders(l.DB)))
}
