package server

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"golang.org/x/sync/semaphore"

	"github.com/papergraph/papergraph/cost"
	"github.com/papergraph/papergraph/retry"
)

// answerMeter counts what one answer holds while gqlgen builds it, field by
// field (the root fields of a query run at once, so every count is
// atomic): its objects, the bytes of its JSON, and the requests it made, as
// the cost package counts them for the estimate. The first field that takes
// the answer past a limit gets the limit's error; from then on every field
// returns errStopped at once, doing no work, and the answer is the data
// built so far.
type answerMeter struct {
	schema             *ast.Schema
	calc               *cost.Calculator
	maxNodes, maxBytes int64
	// memory is the answer's draw on the server's answer memory, nil when
	// there is none.
	memory *memoryDraw

	nodes, bytes, requests atomic.Int64
	stopped                atomic.Bool
}

// errStopped is the error of the fields that an answer past its limits
// does not resolve; the error presenter drops it, so that the response
// states the limit once, at the field that crossed it. Its path and
// locations are set, empty, so that gqlgen neither wraps it nor writes
// them into it: the fields of a stopped answer allocate nothing for it.
var errStopped = &gqlerror.Error{Message: "the answer was stopped at a limit", Path: ast.Path{}, Locations: []gqlerror.Location{}}

type meterKey struct{}

func withMeter(ctx context.Context, m *answerMeter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// meterField runs one field's resolver under the meter in ctx, if any.
// Once the answer is stopped, a field does no work: a nullable one is
// null, a list that may not be null is empty, any other is an error that
// makes its nearest nullable parent null.
func meterField(ctx context.Context, next graphql.Resolver) (any, error) {
	m, _ := ctx.Value(meterKey{}).(*answerMeter)
	if m == nil {
		return next(ctx)
	}
	fc := graphql.GetFieldContext(ctx)
	if m.stopped.Load() {
		return stopped(ctx, fc, errStopped)
	}
	res, err := next(ctx)
	if err != nil || fc == nil || fc.Field.Definition == nil {
		return res, err
	}
	if err := m.add(ctx, fc, res); err != nil {
		return stopped(ctx, fc, err)
	}
	return res, nil
}

// stopped is the value of a field of a stopped answer: for a list that
// may not be null an empty one, with err added to the answer's errors
// when it is the error that stopped the answer, as a null there would
// make its parents null up to the whole answer and lose what the answer
// holds so far; for any other field, err.
func stopped(ctx context.Context, fc *graphql.FieldContext, err error) (any, error) {
	if fc != nil && fc.Field.Definition != nil {
		if t := fc.Field.Definition.Type; t.NonNull && t.Elem != nil {
			if !errors.Is(err, errStopped) {
				graphql.AddError(ctx, err)
			}
			return graphql.Array{}, nil
		}
	}
	return nil, err
}

// add counts a field's value: an object is one node, a list of objects a
// node an element; the bytes are about those of the value's JSON, its key
// included (strings by their length, other scalars by a small constant).
// A value the answer cannot hold is not counted.
func (m *answerMeter) add(ctx context.Context, fc *graphql.FieldContext, res any) error {
	def := fc.Field.Definition
	m.requests.Add(m.calc.Weight(fc.Object, def))
	var nodes int64
	bytes := int64(len(fc.Field.Alias)) + 4
	if composite(m.schema, def.Type) {
		nodes = objectsIn(res)
		bytes += 3 * nodes
	} else {
		bytes += textBytes(reflect.ValueOf(res))
	}
	n, b := m.nodes.Add(nodes), m.bytes.Add(bytes)
	var err error
	switch {
	case m.stopped.Load():
		err = errStopped
	case n > m.maxNodes:
		err = m.stop(refusal(codeNodeLimit, "the answer holds more than %s objects, the node limit, and was stopped here; ask for smaller pages (first/last) or fewer nested lists",
			count(m.maxNodes)))
	case b > m.maxBytes:
		err = m.stop(refusal(codeAnswerTooBig, "the answer takes more than %s bytes, the limit, and was stopped here; ask for smaller pages or fewer fields",
			count(m.maxBytes)))
	case m.memory != nil && !m.memory.cover(ctx, answerMemoryFactor*b+nodeMemory*n):
		err = m.stop(refusal(codeServerBusy, "the server is short of memory for answers and stopped this one here; try again shortly"))
	}
	if err != nil {
		m.nodes.Add(-nodes)
		m.bytes.Add(-bytes)
	}
	return err
}

// stop returns err for the first field that stops the answer, errStopped
// for any other.
func (m *answerMeter) stop(err error) error {
	if m.stopped.CompareAndSwap(false, true) {
		return err
	}
	return errStopped
}

// composite reports whether t's values are objects (of object, interface
// or union type) in schema.
func composite(schema *ast.Schema, t *ast.Type) bool {
	def := schema.Types[t.Name()]
	return def != nil && (def.Kind == ast.Object || def.Kind == ast.Interface || def.Kind == ast.Union)
}

// objectsIn counts the objects of v: the non-nil elements of a list, or 1.
func objectsIn(v any) int64 {
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Slice, reflect.Array:
		var n int64
		for i := range r.Len() {
			if e := r.Index(i); !(e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface) || !e.IsNil() {
				n++
			}
		}
		return n
	case reflect.Pointer, reflect.Interface:
		if r.IsNil() {
			return 0
		}
	case reflect.Invalid:
		return 0
	}
	return 1
}

// scalarBytes is what textBytes counts for a scalar that is not a string:
// a number, a boolean or a time fits in it.
const scalarBytes = 24

// textBytes is about the length of v's JSON when v is a scalar value or a
// list of them.
func textBytes(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Invalid:
		return 4
	case reflect.String:
		return int64(v.Len()) + 2
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 4
		}
		return textBytes(v.Elem())
	case reflect.Slice, reflect.Array:
		n := int64(2)
		for i := range v.Len() {
			n += textBytes(v.Index(i)) + 1
		}
		return n
	}
	return scalarBytes
}

// answerMemory is the server's allowance of memory for answers in flight:
// every answer draws on it in chunks as it grows, answerMemoryFactor bytes
// a byte of its JSON and nodeMemory an object, and gives its draw back
// once it is written, so that no mix of concurrent requests holds more.
// It has two lanes: every answer starts in the small lane and draws there
// while it holds at most smallAnswer; an answer that grows past it moves
// its whole draw to the large lane, giving its small chunks back. Large
// answers thus never hold the small lane for long, and a small answer
// never waits for the memory of large ones. The large lane's draws are
// paced over the server (see largePace), so that answers that grow past
// the small lane, however many at once, build no faster than the pace
// and leave the cores to the others.
type answerMemory struct {
	small, large *semaphore.Weighted
	// smallSize and largeSize are the lanes' sizes.
	smallSize, largeSize int64
	chunk                int64
	// smallAnswer is the most an answer draws from the small lane.
	smallAnswer int64
	// wait bounds how long an answer waits for its first chunk.
	wait time.Duration
	// pace paces the large lane's draws.
	pace *pacer
}

// answerMemoryFactor is about the memory an answer's byte takes at its
// peak: the data as gqlgen builds it in a growing buffer, which holds up
// to twice the data and, as it grows, the old buffer beside the new one.
// The response is written from that buffer, not encoded again (see
// writeResponse), so that the factor covers a whole answer.
const answerMemoryFactor = 4

// nodeMemory is about the memory an object of an answer takes until the
// answer is written, its text aside: gqlgen's field set for it and the
// values of its fields.
const nodeMemory = 256

// answerChunk is how much an answer draws at a time: small enough that
// small answers do not crowd the allowance, large enough that a large one
// draws rarely.
const answerChunk = 64 << 10

// Shares of the small lane: it takes smallLaneShare of the answer memory,
// and an answer in it draws at most smallAnswerShare of the lane, so that
// as many small answers as that fit in it at their largest, and far more
// of a front end's, whose answers are a few chunks.
const (
	smallLaneShare   = 4
	smallAnswerShare = 16
)

func newAnswerMemory(bytes int64, wait time.Duration) *answerMemory {
	bytes = max(bytes, 2*answerChunk)
	small := max(bytes/smallLaneShare, answerChunk)
	return &answerMemory{
		small:       semaphore.NewWeighted(small),
		large:       semaphore.NewWeighted(bytes - small),
		smallSize:   small,
		largeSize:   bytes - small,
		chunk:       answerChunk,
		smallAnswer: max(small/smallAnswerShare, answerChunk),
		wait:        wait,
		pace:        newPacer(bytes-small, largePace),
	}
}

// memoryDraw is one answer's draw on answerMemory: small of the small
// lane, or, once it has moved, large of the large one.
type memoryDraw struct {
	pool *answerMemory
	// held is the draw's total, read without the lock.
	held         atomic.Int64
	mu           sync.Mutex
	small, large int64
	// failed says a draw from the large lane failed.
	failed bool
}

// admit draws the answer's first chunk from the small lane, waiting up to
// the pool's wait for small answers in flight to give theirs back: an
// answer that starts holds nothing, so its wait cannot block the answers
// it waits for. It reports whether the chunk was drawn.
func (m *answerMemory) admit(ctx context.Context) (*memoryDraw, bool) {
	ctx, cancel := context.WithTimeout(ctx, m.wait)
	defer cancel()
	if m.small.Acquire(ctx, m.chunk) != nil {
		return nil, false
	}
	d := &memoryDraw{pool: m, small: m.chunk}
	d.held.Store(m.chunk)
	return d, true
}

// cover draws chunks until the draw holds bytes, without waiting for
// memory: an answer that holds memory and waits for more could wait on
// the others doing the same. Past the pool's smallAnswer it draws from
// the large lane, all it needs at once, and gives back what it held in
// the small one. A draw from the large lane first waits for its turn at
// the pool's pace, which waits on no answer, holding the draw's lock so
// that the answer's other fields wait with it, and holding no more of
// the large lane than before: answers waiting for their turn leave the
// lane to those that have theirs (an honest page past the small lane
// among them). It reports whether the draw holds bytes, false too when
// ctx ends during the wait; once a draw from the large lane failed, the
// answer is stopped, and every later one fails at once, without a turn.
func (d *memoryDraw) cover(ctx context.Context, bytes int64) bool {
	if bytes <= d.held.Load() {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.pool
	need := (bytes + p.chunk - 1) / p.chunk * p.chunk
	if need <= d.small+d.large {
		return true
	}
	if d.large == 0 && need <= p.smallAnswer {
		if !p.small.TryAcquire(need - d.small) {
			return false
		}
		d.small = need
		d.held.Store(need)
		return true
	}
	if d.failed || need > p.largeSize {
		// A draw past the whole lane could never be given: it fails
		// at once rather than spend the pace.
		d.failed = true
		return false
	}
	if grow := need - d.large; !p.pace.wait(ctx, grow) || !p.large.TryAcquire(grow) {
		d.failed = true
		return false
	}
	d.large = need
	if d.small > 0 {
		p.small.Release(d.small)
		d.small = 0
	}
	d.held.Store(need)
	return true
}

// release gives the draw back; it may be called more than once.
func (d *memoryDraw) release() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.small > 0 {
		d.pool.small.Release(d.small)
	}
	if d.large > 0 {
		d.pool.large.Release(d.large)
	}
	d.small, d.large = 0, 0
	d.held.Store(0)
}

// largePace is how long the large lane's draws take, over the server, to
// draw the whole lane once it has been drawn whole without a pause: the
// lane's size accrues as burst while it is idle, so that an answer past
// the small lane (a researcher page of a large collaboration) on a quiet
// server is not delayed, while answers that draw it again and again (an
// answer bomb of a few connections) build at its pace, waiting between
// chunks, and take only part of the cores, however many they are.
const largePace = 4 * time.Second

// pacer spaces draws of bytes at rate bytes a second, letting up to a
// burst's worth accrue while there are none.
type pacer struct {
	rate  float64
	burst time.Duration
	// now and sleep are the clock; sleep reports false when ctx ended
	// first.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) bool

	mu sync.Mutex
	// next is when the draws paced so far are paid for.
	next time.Time
}

// newPacer returns a pacer of size bytes per period, with a burst of size.
func newPacer(size int64, period time.Duration) *pacer {
	return &pacer{rate: float64(size) / period.Seconds(), burst: period, now: time.Now, sleep: sleepCtx}
}

// wait waits for bytes' turn at the pace; it reports false when ctx ends
// first, the turn then spent.
func (p *pacer) wait(ctx context.Context, bytes int64) bool {
	p.mu.Lock()
	now := p.now()
	if earliest := now.Add(-p.burst); p.next.Before(earliest) {
		p.next = earliest
	}
	p.next = p.next.Add(time.Duration(float64(bytes) / p.rate * float64(time.Second)))
	delay := p.next.Sub(now)
	p.mu.Unlock()
	if delay <= 0 {
		return ctx.Err() == nil
	}
	return p.sleep(ctx, delay)
}

// sleepCtx sleeps for d, or until ctx ends, and reports whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool { return retry.Sleep(ctx, d) == nil }
