package resolvers

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/papergraph/papergraph/graph/model"
)

// BudgetExtension names, among an operation's stats
// (graphql.Stats.SetExtension), the *Budget the server computed for it
// before it ran.
const BudgetExtension = "papergraph.budget"

// Budget is an operation's price and what is left of its client's hourly
// budget, as `rateLimit` and `extensions.cost` report them. Cost and
// NodeCount are the estimate made before the operation ran, whose points
// are reserved of the budget; once it has run, the budget is charged
// Actual.Cost instead.
type Budget struct {
	// Limit is the client's points per hour, 0 when no hourly budget is
	// enforced; Remaining and Used are then 0.
	Limit, Remaining, Used int
	// Cost is the operation's price in points, NodeCount the most
	// objects its answer can hold.
	Cost, NodeCount int
	// ResetAt is when the budget is whole again.
	ResetAt time.Time
	// Actual is what the answer held and cost once it was built; nil
	// until then.
	Actual *Actual
}

// Actual is what an operation's answer turned out to hold: the points its
// requests cost, the objects it holds and about the bytes of its JSON.
type Actual struct {
	Cost, NodeCount, Bytes int
}

func (r *Resolver) rateLimit(ctx context.Context) (*model.RateLimit, error) {
	b, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(BudgetExtension).(*Budget)
	if b == nil {
		b = &Budget{ResetAt: time.Now().UTC()}
	}
	return &model.RateLimit{Limit: b.Limit, Cost: b.Cost, Remaining: b.Remaining, Used: b.Used, ResetAt: b.ResetAt, NodeCount: b.NodeCount}, nil
}
