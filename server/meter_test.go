package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/cost"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph"
	"github.com/papergraph/papergraph/graph/model"
)

// TestMeter resolves fields one after another under a meter: the field
// that passes a limit gets the limit's code and is not counted, and every
// field after it does no work, a list that may not be null being empty.
func TestMeter(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	calc, err := cost.New(schema)
	if err != nil {
		t.Fatal(err)
	}
	field := func(typ, name string) *graphql.FieldContext {
		def := schema.Types[typ].Fields.ForName(name)
		return &graphql.FieldContext{Object: typ, Field: graphql.CollectedField{Field: &ast.Field{Alias: name, Name: name, Definition: def}}}
	}
	papers := func(n int) any {
		ps := make([]*model.Paper, n)
		for i := range ps {
			ps[i] = &model.Paper{Paper: &db.Paper{}}
		}
		return ps
	}
	byline := func(n int) any { s := strings.Repeat("a", n); return &s }
	type step struct {
		fc       *graphql.FieldContext
		value    any
		wantCode string // "" for the value, "stopped" for errStopped
		wantRan  bool
	}
	tests := []struct {
		name               string
		maxNodes, maxBytes int64
		memory             int64 // answer memory, 0 for none
		steps              []step
		wantNodes          int64
	}{
		{"node limit", 3, 1 << 20, 0, []step{
			{field("Query", "papers"), papers(2), "", true},
			{field("Query", "papers"), papers(2), "empty " + codeNodeLimit, true},
			{field("Query", "papers"), papers(1), "empty", false},
			{field("Paper", "byline"), byline(10), "stopped", false},
		}, 2},
		{"byte budget", 100, 1000, 0, []step{
			{field("Paper", "byline"), byline(500), "", true},
			{field("Paper", "byline"), byline(600), codeAnswerTooBig, true},
			{field("Paper", "title"), "x", "stopped", false},
		}, 0},
		{"answer memory", 100, 1 << 30, answerChunk, []step{
			{field("Paper", "byline"), byline(answerChunk / answerMemoryFactor / 2), "", true},
			{field("Paper", "byline"), byline(answerChunk / answerMemoryFactor), codeServerBusy, true},
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &answerMeter{schema: schema, calc: calc, maxNodes: tt.maxNodes, maxBytes: tt.maxBytes}
			if tt.memory > 0 {
				d, ok := newAnswerMemory(tt.memory, time.Second).admit(t.Context())
				if !ok {
					t.Fatal("no answer memory at first")
				}
				defer d.release()
				m.memory = d
			}
			for i, s := range tt.steps {
				ran := false
				answer := graphql.WithResponseContext(withMeter(context.Background(), m), graphql.DefaultErrorPresenter, nil)
				ctx := graphql.WithFieldContext(answer, s.fc)
				got, err := meterField(ctx, func(context.Context) (any, error) { ran = true; return s.value, nil })
				added := graphql.GetErrors(answer)
				if ran != s.wantRan {
					t.Errorf("step %d: resolver ran %v, want %v", i, ran, s.wantRan)
				}
				var code string
				var ge *gqlerror.Error
				switch {
				case errors.Is(err, errStopped):
					code = "stopped"
				case errors.As(err, &ge):
					code, _ = ge.Extensions["code"].(string)
				case err == nil:
					if a, ok := got.(graphql.Array); ok && len(a) == 0 {
						code = "empty"
					}
					for _, e := range added {
						c, _ := e.Extensions["code"].(string)
						code += " " + c
					}
				}
				if code != s.wantCode {
					t.Errorf("step %d (%s): got %v, %v; want %q", i, s.fc.Field.Name, got, err, s.wantCode)
				}
			}
			if got := m.nodes.Load(); got != tt.wantNodes || m.bytes.Load() > tt.maxBytes {
				t.Errorf("counted %d nodes, %d bytes; want %d nodes, at most %d bytes", got, m.bytes.Load(), tt.wantNodes, tt.maxBytes)
			}
		})
	}
}

// TestAnswerMemory holds the server's answer memory: an answer that
// starts while another holds it all waits, and is refused when the wait
// ends; once the other gives it back, it starts.
func TestAnswerMemory(t *testing.T) {
	pool := newAnswerMemory(answerChunk, 10*time.Millisecond)
	first, ok := pool.admit(t.Context())
	if !ok {
		t.Fatal("the first answer was refused")
	}
	if _, ok := pool.admit(t.Context()); ok {
		t.Error("a second answer started while the first held the memory")
	}
	first.release()
	first.release()
	second, ok := pool.admit(t.Context())
	if !ok {
		t.Error("a second answer was refused once the first gave the memory back")
	}
	second.release()
}

// memoryIdle reports whether m's lanes are whole: no answer holds any of
// them.
func memoryIdle(m *answerMemory) bool {
	small := m.small.TryAcquire(m.smallSize)
	large := m.large.TryAcquire(m.largeSize)
	if small {
		m.small.Release(m.smallSize)
	}
	if large {
		m.large.Release(m.largeSize)
	}
	return small && large
}

// TestSmallAnswersBesideLarge fills the large lane of the answer memory
// with one answer and has another try to grow into it: a small answer
// still starts at once and grows to the small lane's bound, the second
// large one is stopped, and when the large answer moved to its lane it
// gave its small chunks back, so as many small answers start as the small
// lane holds.
func TestSmallAnswersBesideLarge(t *testing.T) {
	pool := newAnswerMemory(64*answerChunk, time.Hour)
	large, ok := pool.admit(t.Context())
	if !ok {
		t.Fatal("the large answer was refused at its start")
	}
	if !large.cover(t.Context(), pool.largeSize) {
		t.Fatalf("the large answer could not draw the whole large lane of %d bytes", pool.largeSize)
	}
	// Nothing waits here: admit returns at once while the small lane
	// has a chunk. The pool's wait outlasts the test binary's timeout,
	// so a wrongful wait fails the run instead of passing late.
	var small []*memoryDraw
	for range pool.smallSize / pool.chunk {
		d, ok := pool.admit(t.Context())
		if !ok {
			t.Fatalf("small answer %d refused while the large answer held its lane", len(small))
		}
		small = append(small, d)
	}
	if got := pool.small.TryAcquire(1); got {
		t.Error("the small lane has room left after as many small answers as it holds")
	}
	for _, d := range small {
		d.release()
	}
	grown, _ := pool.admit(t.Context())
	if !grown.cover(t.Context(), pool.smallAnswer) {
		t.Errorf("a small answer could not grow to %d bytes beside the large one", pool.smallAnswer)
	}
	other, _ := pool.admit(t.Context())
	if other.cover(t.Context(), pool.smallAnswer+1) {
		t.Error("a second large answer drew from the large lane the first one holds")
	}
	grown.release()
	other.release()
	large.release()
	if !memoryIdle(pool) {
		t.Error("the lanes are not whole once every answer gave its draw back")
	}
}

// TestCheckSlots holds a client to its share of document checks while
// another client still gets one, and the server to its own bound.
func TestCheckSlots(t *testing.T) {
	s := newCheckSlots(2, 3)
	wait := 10 * time.Millisecond
	var held []func()
	for i := range 2 {
		done, ok := s.acquire(t.Context(), "a", wait)
		if !ok {
			t.Fatalf("client a's check %d was refused", i)
		}
		held = append(held, done)
	}
	if _, ok := s.acquire(t.Context(), "a", wait); ok {
		t.Error("client a got a third check at once")
	}
	done, ok := s.acquire(t.Context(), "b", wait)
	if !ok {
		t.Fatal("client b was refused while a held its share")
	}
	if _, ok := s.acquire(t.Context(), "c", wait); ok {
		t.Error("client c got a fourth check over the server's bound of 3")
	}
	done()
	done()
	held[0]()
	if _, ok := s.acquire(t.Context(), "a", wait); !ok {
		t.Error("client a was refused once one of its checks ended")
	}
	if n := len(s.clients); n != 1 {
		t.Errorf("%d clients remembered, want 1 (a)", n)
	}
}

// TestLargeAnswersPaced draws the large lane whole, at once on a quiet
// pool, then again: the second time its draws wait for the pace, the
// lane's size taking largePace, while small answers never wait; once the
// pool has been quiet for largePace, the lane is drawn whole at once again.
// An ended context stops a draw that would wait.
func TestLargeAnswersPaced(t *testing.T) {
	pool := newAnswerMemory(64*answerChunk, time.Hour)
	clock := time.Unix(1e9, 0)
	var waited time.Duration
	pool.pace.now = func() time.Time { return clock }
	pool.pace.sleep = func(_ context.Context, d time.Duration) bool {
		waited += d
		clock = clock.Add(d)
		return true
	}
	drawLane := func() {
		t.Helper()
		d, _ := pool.admit(t.Context())
		for need := pool.chunk; need <= pool.smallAnswer+pool.largeSize-pool.chunk; need += pool.chunk {
			if !d.cover(t.Context(), need) {
				t.Fatalf("the answer could not grow to %d bytes", need)
			}
		}
		d.release()
	}
	drawLane()
	if waited != 0 {
		t.Errorf("the first answer through the large lane waited %v on a quiet pool", waited)
	}
	drawLane()
	if tolerance := time.Millisecond; waited < largePace-tolerance || waited > largePace+tolerance {
		t.Errorf("drawing the large lane again waited %v, want its pace of %v", waited, largePace)
	}
	waited = 0
	for range 4 {
		d, _ := pool.admit(t.Context())
		if !d.cover(t.Context(), pool.smallAnswer) {
			t.Fatal("a small answer could not grow to the small lane's bound")
		}
		d.release()
	}
	if waited != 0 {
		t.Errorf("small answers waited %v for the pace", waited)
	}
	clock = clock.Add(largePace)
	drawLane()
	if waited != 0 {
		t.Errorf("the large lane, quiet for its pace, was drawn whole after a wait of %v", waited)
	}
	pool.pace.sleep = sleepCtx
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	d, _ := pool.admit(t.Context())
	if d.cover(ctx, pool.smallAnswer+pool.chunk) {
		t.Error("a draw that had to wait for the pace went on after its context ended")
	}
	d.release()
	if !memoryIdle(pool) {
		t.Error("the lanes are not whole once every answer gave its draw back")
	}
}

// TestLargePagesAtOnceNotPaced has ten answers past the small lane start
// at once on a quiet server of the default answer memory, as ten researcher
// pages of a large collaboration asked together do (24 papers with
// bylines of thousands of authors, each a few MiB drawn): the burst holds
// them all, so none waits for the pace, and none is refused.
func TestLargePagesAtOnceNotPaced(t *testing.T) {
	pool := newAnswerMemory(DefaultMaxAnswerMemory, time.Hour)
	var waited time.Duration
	pool.pace.sleep = func(_ context.Context, d time.Duration) bool {
		waited += d
		return true
	}
	const page = 8 << 20
	var draws []*memoryDraw
	for i := range 10 {
		d, ok := pool.admit(t.Context())
		if !ok || !d.cover(t.Context(), page) {
			t.Fatalf("page %d could not draw %d MiB", i, page>>20)
		}
		draws = append(draws, d)
	}
	if waited != 0 {
		t.Errorf("ten pages at once waited %v for the pace", waited)
	}
	for _, d := range draws {
		d.release()
	}
}

// TestPacedDrawWaitsEmptyHanded has an answer wait for its turn at the
// pace once the burst is spent: while it waits it holds none of the large
// lane, which another answer could draw whole; once its draw failed, for
// that other answer holding the lane, its later draws fail at once,
// without waiting for a turn again.
func TestPacedDrawWaitsEmptyHanded(t *testing.T) {
	pool := newAnswerMemory(64*answerChunk, time.Hour)
	clock := time.Unix(1e9, 0)
	pool.pace.now = func() time.Time { return clock }
	var other *memoryDraw
	waits := 0
	pool.pace.sleep = func(_ context.Context, d time.Duration) bool {
		waits++
		clock = clock.Add(d)
		if other == nil {
			return true
		}
		o := other
		other = nil // its own draw waits too, and must not draw again
		if !pool.large.TryAcquire(pool.largeSize) {
			t.Error("the large lane is not whole while the only answer past the small lane waits for its turn")
			return true
		}
		pool.large.Release(pool.largeSize)
		if !o.cover(t.Context(), pool.smallAnswer+pool.largeSize-pool.chunk) {
			t.Error("another answer could not draw the large lane while the first waited")
		}
		other = o
		return true
	}
	spend, _ := pool.admit(t.Context())
	if !spend.cover(t.Context(), pool.smallAnswer+pool.largeSize-pool.chunk) {
		t.Fatal("the burst did not cover the whole large lane")
	}
	spend.release()
	other, _ = pool.admit(t.Context())
	waiting, _ := pool.admit(t.Context())
	if waiting.cover(t.Context(), pool.smallAnswer+pool.chunk) {
		t.Error("an answer drew from the large lane that another held whole")
	}
	if waits != 2 {
		t.Fatalf("%d waits for the pace, want 2: the first answer's and the other's within it", waits)
	}
	other.release()
	if waiting.cover(t.Context(), pool.smallAnswer+pool.chunk) || waits != 2 {
		t.Errorf("after a failed draw, the next one drew or waited (%d waits in all)", waits)
	}
	waiting.release()
	if !memoryIdle(pool) {
		t.Error("the lanes are not whole once every answer gave its draw back")
	}
}

// A draw past the whole large lane fails at once: it could never be
// given, so it neither waits for the pace nor spends it.
func TestDrawPastTheLaneSpendsNoPace(t *testing.T) {
	pool := newAnswerMemory(64*answerChunk, time.Hour)
	waits := 0
	pool.pace.sleep = func(context.Context, time.Duration) bool { waits++; return true }
	d, _ := pool.admit(t.Context())
	defer d.release()
	if d.cover(t.Context(), pool.largeSize+pool.chunk) {
		t.Fatal("a draw past the whole large lane was given")
	}
	next := pool.pace.next
	if waits != 0 || !next.IsZero() {
		t.Errorf("the draw waited %d times for the pace and moved it to %v; want no wait and the pace untouched", waits, next)
	}
}
