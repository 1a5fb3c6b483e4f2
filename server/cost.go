package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
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
// work grows with the square of the fields that share a response name; the
// node and cost limits hold before execution, on the estimate, and while
// the answer is built, on what it holds.
const (
	DefaultMaxTokens     = 15_000
	DefaultMaxFields     = 1_000
	DefaultMaxAliases    = 100
	DefaultMaxRootFields = 50
	DefaultMaxDirectives = 4
	// DefaultMaxConflicts is the most pairs of fields under one response
	// name with differing names or arguments (cost.Conflicts): such a
	// pair fails validation unless its fields are on different types, and
	// the check's work and errors grow with their number.
	DefaultMaxConflicts = 100
	// DefaultMaxNodes is the most objects one answer may hold, estimated
	// before it runs and counted as it is built. GitHub allows 500,000;
	// papergraph's objects carry more text. The estimate follows the
	// archive's typical lists (see cost.Measure), so a researcher page of
	// 50 papers a co-author is priced by its real bylines, far below it.
	DefaultMaxNodes = 200_000
	// DefaultMaxCost is the most points one operation may cost.
	DefaultMaxCost = 1_000
	// DefaultMaxAnswerBytes is the most bytes of JSON one answer's data
	// may take: the answer stops where it passes them.
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
	// codeServerBusy is an operation refused, or an answer stopped, for
	// the server's answer memory (Config.MaxAnswerMemory).
	codeServerBusy = "SERVER_BUSY"
)

// Refusals before execution are like validation errors: gqlgen answers
// application/graphql-response+json clients with 400 for them.
func init() {
	for _, code := range []string{codeTooLarge, codeNodeLimit, codeCostLimit, codeRateLimited, codeServerBusy} {
		errcode.RegisterErrorType(code, errcode.KindProtocol)
	}
}

// costLimit is the gqlgen extension that bounds every operation and reports
// its cost on every answer: it refuses documents of too many tokens,
// fields, aliases, root fields, directives or conflicts before they are
// validated, checking at most its share of new documents of a client at once
// and answering documents that failed before from memory; it prices the
// validated operation with cost.Calculator and refuses it past the node or
// cost limit; it reserves the estimate of the client's budget, counts what
// the answer holds as it is built (answerMeter) and settles the actual
// cost; and it puts the figures in `extensions.cost` and behind the
// `rateLimit` field.
type costLimit struct {
	cfg    Config
	schema *ast.Schema
	calc   *cost.Calculator
	// queries is the handler's cache of validated documents: a document
	// in it is neither parsed nor validated again.
	queries graphql.Cache[*ast.QueryDocument]
	guards  *guards
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
	graphql.FieldInterceptor
} = (*costLimit)(nil)

// newCostLimit returns the extension for a handler whose cache of
// validated documents is queries.
func newCostLimit(cfg Config, queries graphql.Cache[*ast.QueryDocument]) *costLimit {
	g := cfg.guards
	if g == nil {
		g = newGuards(cfg)
	}
	return &costLimit{cfg: cfg, queries: queries, guards: g}
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
	c.schema = es.Schema()
	c.calc = calc
	return nil
}

// listSizesEvery is how often the server rereads the archive's list sizes,
// which an import or a harvest into its database changes.
const listSizesEvery = 5 * time.Minute

// MutateOperationParameters checks a new document's shape before gqlgen
// parses and validates it, in one of its client's check slots, and answers
// a document that failed before with its errors. A document that does not
// parse is left to gqlgen, which reports the syntax error.
func (c *costLimit) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if params.Query == "" {
		return nil
	}
	if _, ok := c.queries.Get(ctx, params.Query); ok {
		return nil
	}
	op := operationFrom(ctx)
	hash := sha256.Sum256([]byte(params.Query))
	op.failureKey = string(hash[:]) + "\x00" + params.OperationName
	if errs, ok := c.guards.failures.Get(ctx, op.failureKey); ok {
		op.cached = errs
		return errs[0]
	}
	done, ok := c.guards.checks.acquire(ctx, exchangeFrom(ctx).client, checkWait)
	if !ok {
		return refusal(codeRateLimited, "the server's slots for checking new documents stayed taken (a client may hold %d of them); try again shortly", c.guards.checks.per)
	}
	op.mu.Lock()
	op.done = done
	op.mu.Unlock()
	if err := c.shape(params.Query); err != nil {
		c.guards.failures.Add(ctx, op.failureKey, gqlerror.List{err})
		return err
	}
	return nil
}

// shape refuses a document past the shape limits.
func (c *costLimit) shape(query string) *gqlerror.Error {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, c.cfg.MaxTokens)
	if err != nil {
		if strings.Contains(err.Error(), "token limit") {
			return refusal(codeTooLarge, "the document has more than %d tokens, the limit", c.cfg.MaxTokens)
		}
		return nil
	}
	s := cost.ShapeOf(doc)
	for _, l := range []struct {
		got   func() int64
		limit int
		what  string
	}{
		{func() int64 { return s.Fields }, c.cfg.MaxFields, "fields (fragments expanded)"},
		{func() int64 { return s.Aliases }, c.cfg.MaxAliases, "aliases"},
		{func() int64 { return s.RootFields }, c.cfg.MaxRootFields, "top-level fields"},
		{func() int64 { return s.Directives }, c.cfg.MaxDirectives, "directives on one field"},
		// After the field limit, which bounds its walk.
		{func() int64 { return cost.Conflicts(doc) }, c.cfg.MaxConflicts, "pairs of fields sharing a response name with differing arguments"},
	} {
		if got := l.got(); got > int64(l.limit) {
			return refusal(codeTooLarge, "the document has %s %s, over the limit of %d", count(got), l.what, l.limit)
		}
	}
	return nil
}

// MutateOperationContext prices the operation and refuses it past the
// node or cost limit, reading the client's budget for the refusal; it
// draws the answer's first memory and reserves its estimate of the
// budget.
func (c *costLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := operationFrom(ctx)
	op.checked()
	m := c.calc.Measure(opCtx.Doc, opCtx.Operation, opCtx.Variables)
	b := &resolvers.Budget{Cost: cost.Clamp(m.Points), NodeCount: cost.Clamp(m.Nodes), ResetAt: time.Now().UTC()}
	opCtx.Stats.SetExtension(budgetExtension, b)
	op.mu.Lock()
	op.priced = true
	op.mu.Unlock()
	if err := c.limits(m); err != nil {
		res, _ := spendPoints(ctx, 0)
		readBudget(b, res)
		return err
	}
	dry := dryRun(opCtx)
	spend := int(m.Points)
	if dry != nil {
		opCtx.Operation, spend = dry, 0
	}
	memory, ok := c.guards.memory.admit(ctx)
	if !ok {
		res, _ := spendPoints(ctx, 0)
		readBudget(b, res)
		return refusal(codeServerBusy, "the server is short of memory for answers; try again shortly")
	}
	res, err := spendPoints(ctx, spend)
	readBudget(b, res)
	var spent *errBudgetSpent
	switch {
	case errors.As(err, &spent):
		err = refusal(codeRateLimited, "%s (the query costs %s points)", spent.Error(), count(m.Points))
	case errors.Is(err, ratelimit.ErrCostOverLimit):
		err = refusal(codeCostLimit, "the query costs %s points, more than the whole hourly budget of %s", count(m.Points), count(int64(res.Limit)))
	case err != nil:
		// The limiter falls back to memory when Redis fails, so this is
		// a request that ended while it waited.
		err = refusal(codeRateLimited, "the request's budget could not be read before the request ended")
	}
	if err != nil {
		memory.release()
		return err.(*gqlerror.Error)
	}
	op.mu.Lock()
	op.admitted, op.spent, op.memory = true, spend, memory
	op.mu.Unlock()
	return nil
}

// limits refuses an operation whose estimate passes the node or cost
// limit.
func (c *costLimit) limits(m cost.Cost) *gqlerror.Error {
	if m.Nodes > int64(c.cfg.MaxNodes) {
		return refusal(codeNodeLimit, "the answer could hold %s objects, over the node limit of %s; ask for smaller pages (first/last) or fewer nested lists",
			count(m.Nodes), count(int64(c.cfg.MaxNodes)))
	}
	if m.Points > int64(c.cfg.MaxCost) {
		return refusal(codeCostLimit, "the query costs %s points, over the limit of %s per query", count(m.Points), count(int64(c.cfg.MaxCost)))
	}
	return nil
}

// InterceptField counts each field's value on the answer's meter.
func (c *costLimit) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	return meterField(ctx, next)
}

// InterceptResponse builds an admitted operation's answer under a meter and
// settles its cost; it answers a document that failed before with its
// errors, and remembers one that fails now. It adds the cost to every
// answer and bounds its errors.
func (c *costLimit) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	op := operationFrom(ctx)
	op.checked()
	if _, ours := ctx.Value(operationKey{}).(*operation); !ours {
		// Nothing writes the answer after this for us to wait for.
		defer op.release()
	}
	var meter *answerMeter
	if op.admitted {
		meter = &answerMeter{schema: c.schema, calc: c.calc, maxNodes: int64(c.cfg.MaxNodes), maxBytes: int64(c.cfg.MaxAnswerBytes), memory: op.memory}
		ctx = withMeter(ctx, meter)
	}
	resp := next(ctx)
	if resp == nil {
		return nil
	}
	b := &resolvers.Budget{ResetAt: time.Now().UTC()}
	if graphql.HasOperationContext(ctx) {
		if got, ok := graphql.GetOperationContext(ctx).Stats.GetExtension(budgetExtension).(*resolvers.Budget); ok {
			b = got
		}
	}
	if meter != nil {
		c.settle(ctx, op, meter, b)
		// An ask spends its model's tokens as it answers, after the
		// estimate: the budget stated is the one after them.
		readBudget(b, exchangeFrom(ctx).latestRate())
	} else {
		c.failed(ctx, op, resp, b)
	}
	if len(resp.Data) > 2*c.cfg.MaxAnswerBytes {
		// The meter counts strings by their length, though escapes
		// can make their JSON longer, and not the nulls of the fields
		// after a stop: an answer past twice the budget is one of
		// those, and not sent.
		resp.Data = nil
		resp.Errors = append(gqlerror.List{refusal(codeAnswerTooBig,
			"the answer would take more than %s bytes, the limit; ask for smaller pages or fewer fields", count(int64(c.cfg.MaxAnswerBytes)))}, resp.Errors...)
	}
	resp.Errors = boundErrors(resp.Errors)
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions["cost"] = c.extension(b)
	return resp
}

// settle charges the client the actual cost of an answer that was built,
// giving back what the estimate reserved beyond it.
func (c *costLimit) settle(ctx context.Context, op *operation, m *answerMeter, b *resolvers.Budget) {
	b.Actual = &resolvers.Actual{
		Cost:      int(cost.PointsOf(m.requests.Load())),
		NodeCount: int(m.nodes.Load()),
		Bytes:     int(m.bytes.Load()),
	}
	ex := exchangeFrom(ctx)
	// A subscription's events each build an answer; its estimate is
	// settled with the first.
	op.mu.Lock()
	spent := op.spent
	op.spent = 0
	op.mu.Unlock()
	if ex.limiter == nil || spent == 0 || b.Actual.Cost == spent {
		return
	}
	res, err := ex.limiter.Adjust(ctx, ex.client, b.Actual.Cost-spent)
	if err != nil {
		return
	}
	ex.setRate(res)
	readBudget(b, &res)
}

// failed completes the answer of a request that failed before it ran:
// with the errors it had before, when it is answered from memory, and
// with the budget it was charged.
func (c *costLimit) failed(ctx context.Context, op *operation, resp *graphql.Response, b *resolvers.Budget) {
	if op.cached != nil {
		resp.Errors = slices.Clone(op.cached)
	} else if op.failureKey != "" && graphql.HasOperationContext(ctx) && graphql.GetOperationContext(ctx).Doc == nil && len(resp.Errors) > 0 {
		// It did not parse or validate, whatever its variables.
		c.guards.failures.Add(ctx, op.failureKey, boundErrors(slices.Clone(resp.Errors)))
	}
	op.settleUnpriced(ctx)
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.priced {
		return
	}
	b.Cost = failurePoints
	readBudget(b, op.charged)
	if op.limited {
		resp.Errors = append(gqlerror.List{refusal(codeRateLimited, "the hourly budget is spent; a document that fails costs %d point too", failurePoints)}, resp.Errors...)
	}
}

// readBudget copies the client's budget, when there is one, into b.
func readBudget(b *resolvers.Budget, res *ratelimit.Result) {
	if res != nil {
		b.Limit, b.Remaining, b.Used, b.ResetAt = res.Limit, res.Remaining, res.Used, res.Reset.UTC()
	}
}

// extension is the `extensions.cost` of an answer.
func (c *costLimit) extension(b *resolvers.Budget) map[string]any {
	ext := map[string]any{
		"cost":           b.Cost,
		"nodeCount":      b.NodeCount,
		"limit":          b.Limit,
		"remaining":      b.Remaining,
		"used":           b.Used,
		"resetAt":        b.ResetAt.Format(time.RFC3339),
		"maxCost":        c.cfg.MaxCost,
		"maxNodes":       c.cfg.MaxNodes,
		"maxAnswerBytes": c.cfg.MaxAnswerBytes,
	}
	if a := b.Actual; a != nil {
		ext["actualCost"] = a.Cost
		ext["actualNodeCount"] = a.NodeCount
		ext["actualBytes"] = a.Bytes
	}
	return ext
}

// presentError is the handlers' error presenter: resolvers.ErrorPresenter,
// but for the fields an answer stopped at a limit did not resolve, whose
// errors it drops (the limit's error is the field's that crossed it).
func presentError(ctx context.Context, err error) *gqlerror.Error {
	if errors.Is(err, errStopped) {
		return nil
	}
	return resolvers.ErrorPresenter(ctx, err)
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
