package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/papergraph/papergraph/cost"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/ratelimit"
	"github.com/papergraph/papergraph/resolvers"
)

// Limits on one operation. The shape limits hold before validation, whose
// work grows with the square of the fields sharing a response name; the
// node and cost limits hold before execution.
const (
	DefaultMaxTokens     = 15_000
	DefaultMaxFields     = 1_000
	DefaultMaxAliases    = 100
	DefaultMaxRootFields = 50
	DefaultMaxDirectives = 4
	// DefaultMaxNodes is the most objects one answer may be estimated
	// to hold. GitHub allows 500,000; papergraph's objects carry more
	// text. The estimate follows the archive's typical lists (see
	// cost.Measure), so a researcher page of 50 papers a co-author is
	// priced by its real bylines, far below the limit.
	DefaultMaxNodes = 200_000
	// DefaultMaxCost is the most points one operation may cost.
	DefaultMaxCost = 1_000
	// DefaultMaxAnswerBytes is the most bytes of JSON one answer's data
	// may take; a larger one is replaced by an error.
	DefaultMaxAnswerBytes = 32 << 20
	// maxErrors is the most errors one response lists.
	maxErrors = 50
)

// Error codes of operations refused for their shape, size or cost.
const (
	codeTooLarge      = "QUERY_TOO_LARGE"
	codeNodeLimit     = "NODE_LIMIT_EXCEEDED"
	codeCostLimit     = "COST_LIMIT_EXCEEDED"
	codeRateLimited   = "RATE_LIMITED"
	codeAnswerTooBig  = "ANSWER_TOO_LARGE"
	codeTooManyErrors = "TOO_MANY_ERRORS"
)

// Refusals before execution are like validation errors: gqlgen answers
// application/graphql-response+json clients with 400 for them.
func init() {
	for _, code := range []string{codeTooLarge, codeNodeLimit, codeCostLimit, codeRateLimited} {
		errcode.RegisterErrorType(code, errcode.KindProtocol)
	}
}

// costLimit is the gqlgen extension that bounds every operation before it
// runs and reports its cost on every answer: it refuses documents of too
// many tokens, fields, aliases, root fields or directives before they are
// validated; it prices the validated operation with cost.Calculator and
// refuses it past the node or cost limit; and it puts the figures in
// `extensions.cost` and behind the `rateLimit` field.
type costLimit struct {
	cfg  Config
	calc *cost.Calculator
	// shaped remembers the hashes of documents that passed the shape
	// check, so that a cached document is not parsed twice.
	shaped *lru.LRU[bool]
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = (*costLimit)(nil)

func newCostLimit(cfg Config) *costLimit {
	return &costLimit{cfg: cfg, shaped: lru.New[bool](1000)}
}

func (*costLimit) ExtensionName() string { return "CostLimit" }

// Validate builds the calculator from the schema's cost directives, and
// refuses a schema with a list they do not size: its answers could be
// larger than any limit assumes. The calculator follows the archive's list
// sizes (db.ListSize), read at start and every listSizesEvery after.
func (c *costLimit) Validate(es graphql.ExecutableSchema) error {
	calc, err := cost.New(es.Schema())
	if err != nil {
		return err
	}
	if c.cfg.DB != nil {
		// Read outside the statement hooks: the server's housekeeping,
		// not a request's, so no request's count or trace includes it.
		plain := bun.NewDB(c.cfg.DB.DB, c.cfg.DB.Dialect())
		read := func(ctx context.Context) (map[string]int64, error) { return db.ReadListSizes(ctx, plain) }
		if err := calc.Follow(read, listSizesEvery); err != nil && c.cfg.Logger != nil {
			c.cfg.Logger.Warn("list sizes unread: lists are estimated at their schema sizes", "error", err)
		}
	}
	c.calc = calc
	return nil
}

// listSizesEvery is how often the server rereads the archive's list sizes,
// which an import or a harvest into its database changes.
const listSizesEvery = 5 * time.Minute

// MutateOperationParameters checks the document's shape before gqlgen
// parses and validates it. A document that does not parse is left to
// gqlgen, which reports the syntax error.
func (c *costLimit) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if params.Query == "" {
		return nil
	}
	key := sha256.Sum256([]byte(params.Query))
	if _, ok := c.shaped.Get(ctx, string(key[:])); ok {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: params.Query}, c.cfg.MaxTokens)
	if err != nil {
		if strings.Contains(err.Error(), "token limit") {
			return refusal(codeTooLarge, "the document has more than %d tokens, the limit", c.cfg.MaxTokens)
		}
		return nil
	}
	s := cost.ShapeOf(doc)
	for _, l := range []struct {
		got   int64
		limit int
		what  string
	}{
		{s.Fields, c.cfg.MaxFields, "fields (fragments expanded)"},
		{s.Aliases, c.cfg.MaxAliases, "aliases"},
		{s.RootFields, c.cfg.MaxRootFields, "top-level fields"},
		{s.Directives, c.cfg.MaxDirectives, "directives on one field"},
	} {
		if l.got > int64(l.limit) {
			return refusal(codeTooLarge, "the document has %s %s, over the limit of %d", count(l.got), l.what, l.limit)
		}
	}
	c.shaped.Add(ctx, string(key[:]), true)
	return nil
}

// MutateOperationContext prices the operation and refuses it past the
// node or cost limit.
func (c *costLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	m := c.calc.Measure(opCtx.Doc, opCtx.Operation, opCtx.Variables)
	b := &resolvers.Budget{Cost: cost.Clamp(m.Points), NodeCount: cost.Clamp(m.Nodes), ResetAt: time.Now().UTC()}
	opCtx.Stats.SetExtension(budgetExtension, b)
	if m.Nodes > int64(c.cfg.MaxNodes) {
		return refusal(codeNodeLimit, "the answer could hold %s objects, over the node limit of %s; ask for smaller pages (first/last) or fewer nested lists",
			count(m.Nodes), count(int64(c.cfg.MaxNodes)))
	}
	if m.Points > int64(c.cfg.MaxCost) {
		return refusal(codeCostLimit, "the query costs %s points, over the limit of %s per query", count(m.Points), count(int64(c.cfg.MaxCost)))
	}
	dry := dryRun(opCtx)
	if dry != nil {
		opCtx.Operation = dry
	}
	spend := int(m.Points)
	if dry != nil {
		spend = 0
	}
	res, err := spendPoints(ctx, spend)
	if res != nil {
		b.Limit, b.Remaining, b.Used, b.ResetAt = res.Limit, res.Remaining, res.Used, res.Reset.UTC()
	}
	var spent *errBudgetSpent
	switch {
	case errors.As(err, &spent):
		return refusal(codeRateLimited, "%s (the query costs %s points)", spent.Error(), count(m.Points))
	case errors.Is(err, ratelimit.ErrCostOverLimit):
		return refusal(codeCostLimit, "the query costs %s points, more than the whole hourly budget of %s", count(m.Points), count(int64(res.Limit)))
	case err != nil:
		// The limiter falls back to memory when Redis fails, so this is
		// a request that ended while it waited.
		return refusal(codeRateLimited, "the request's budget could not be read before the request ended")
	}
	return nil
}

// InterceptResponse adds the cost to every answer, bounds the answer's
// size and its errors.
func (c *costLimit) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil {
		return nil
	}
	if len(resp.Data) > c.cfg.MaxAnswerBytes {
		resp.Data = nil
		resp.Errors = append(gqlerror.List{refusal(codeAnswerTooBig,
			"the answer would take more than %s bytes, the limit; ask for smaller pages or fewer fields", count(int64(c.cfg.MaxAnswerBytes)))}, resp.Errors...)
	}
	resp.Errors = boundErrors(resp.Errors)
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	b := &resolvers.Budget{ResetAt: time.Now().UTC()}
	if graphql.HasOperationContext(ctx) {
		if got, ok := graphql.GetOperationContext(ctx).Stats.GetExtension(budgetExtension).(*resolvers.Budget); ok {
			b = got
		}
	}
	resp.Extensions["cost"] = map[string]any{
		"cost":      b.Cost,
		"nodeCount": b.NodeCount,
		"limit":     b.Limit,
		"remaining": b.Remaining,
		"used":      b.Used,
		"resetAt":   b.ResetAt.Format(time.RFC3339),
		"maxCost":   c.cfg.MaxCost,
		"maxNodes":  c.cfg.MaxNodes,
	}
	return resp
}

// budgetExtension names the operation's budget among its stats; the
// rateLimit resolver reads it there.
const budgetExtension = resolvers.BudgetExtension

// dryRun returns a copy of the operation that keeps only its rateLimit
// fields when one of them asks for a dry run, and nil otherwise: a dry run
// prices the whole query and runs none of it.
func dryRun(opCtx *graphql.OperationContext) *ast.OperationDefinition {
	fields := graphql.CollectFields(opCtx, opCtx.Operation.SelectionSet, []string{"Query"})
	dry := false
	for _, f := range fields {
		if f.Name == "rateLimit" {
			if v, ok := f.ArgumentMap(opCtx.Variables)["dryRun"].(bool); ok && v {
				dry = true
			}
		}
	}
	if !dry {
		return nil
	}
	op := *opCtx.Operation
	op.SelectionSet = nil
	for _, f := range fields {
		if f.Name == "rateLimit" || f.Name == "__typename" {
			// The field as collected: same-named selections merged.
			merged := *f.Field
			merged.SelectionSet = f.Selections
			op.SelectionSet = append(op.SelectionSet, &merged)
		}
	}
	return &op
}

// boundErrors keeps at most maxErrors errors. (The error presenter,
// resolvers.ErrorPresenter, cuts every message, gqlgen's own included.)
func boundErrors(errs gqlerror.List) gqlerror.List {
	if len(errs) > maxErrors {
		more := len(errs) - (maxErrors - 1)
		errs = append(errs[:maxErrors-1:maxErrors-1], refusal(codeTooManyErrors, "%d more errors left out", more))
	}
	return errs
}

func refusal(code, format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	errcode.Set(err, code)
	return err
}

// count writes n with thousands separators; a saturated figure reads as
// "more than 9,007,199,254,740,992".
func count(n int64) string {
	if n >= cost.Infinite {
		return "more than " + count(cost.Infinite-1)
	}
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
