package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/ask"
	"github.com/papergraph/papergraph/ask/asktest"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/demo"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/llm"
	"github.com/papergraph/papergraph/notify"
	"github.com/papergraph/papergraph/ratelimit"
)

// axionScript is the scripted model's answer: it cites passage 1, and 9,
// which no question here has.
var axionScript = []string{"Intense magnetic fields [", "1] may produce axions [9", "]."}

// askServer serves the demo's Kaggle sample with the scripted model
// (none when nil) and an hourly budget of 1,000 points.
func askServer(t *testing.T, bdb *bun.DB, model *asktest.Scripted) http.Handler {
	t.Helper()
	h, _ := askServerFor(t, bdb, model, 1000)
	return h
}

// askServerFor is askServer with a budget of limit points, the limiter
// it spends and the API key mcpKey issued; /graphql takes WebSocket
// subscriptions.
func askServerFor(t *testing.T, bdb *bun.DB, model *asktest.Scripted, limit int) (http.Handler, ratelimit.Limiter) {
	t.Helper()
	if _, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Kaggle, FS: demo.Files(),
		Paths: []string{"kaggle-arxiv-sample.jsonl.gz"}}); err != nil {
		t.Fatal(err)
	}
	limiter, err := ratelimit.NewMemory(limit, 0)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ratelimit.LoadKeys(strings.NewReader(mcpKey + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{RateLimiter: limiter, APIKeys: keys, Bus: notify.NewLocal()}
	if model != nil {
		srv := httptest.NewServer(model)
		t.Cleanup(srv.Close)
		cfg.LLM = &ask.LLM{Endpoint: llm.Endpoint{URL: srv.URL + "/v1", Model: "scripted"}}
	}
	return newTestServer(t, bdb, cfg).Handler(), limiter
}

// askAnswer is the ask field as the tests read it.
type askAnswer struct {
	Data struct {
		Ask struct {
			Passages []struct {
				Number, Position int
				Text             string
				Paper            struct{ ArxivID string }
			}
			Answer *struct {
				Text                        string
				Citations, RemovedCitations []int
				Model                       string
				Tokens                      int
			}
		}
	}
	Errors []struct {
		Message    string
		Extensions struct{ Code, Argument string }
	}
}

const askAxions = `query($first: Int) { ask(question: "What is the source of axions?", first: $first) {
  passages { number position text paper { arxivId categories { code } } }
  answer { text citations removedCitations model tokens } } }`

// postAsk runs doc and returns its answer and the budget it left.
func postAsk(t *testing.T, h http.Handler, doc string, vars map[string]any) (askAnswer, int) {
	t.Helper()
	rec := serve(h, post(t, map[string]any{"query": doc, "variables": vars}, mediaJSON))
	var a askAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	remaining, _ := strconv.Atoi(rec.Header().Get("X-RateLimit-Remaining"))
	return a, remaining
}

// ask answers with passages of the axion paper and the scripted model's
// answer, the citation of a passage it was not given removed; its tokens
// cost their points; its statements do not grow with its passages.
func TestAskGraphQL(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		statements := &db.StatementCounter{}
		h := askServer(t, bdb.WithQueryHook(statements), &asktest.Scripted{Pieces: axionScript})
		_, before := postAsk(t, h, `{ rateLimit(dryRun: true) { remaining } }`, nil)
		a, after := postAsk(t, h, askAxions, map[string]any{"first": 3})
		if len(a.Errors) > 0 || len(a.Data.Ask.Passages) == 0 || a.Data.Ask.Passages[0].Paper.ArxivID != "0704.0169" {
			t.Fatalf("ask: %+v, want passages of 0704.0169 first", a)
		}
		ans := a.Data.Ask.Answer
		if ans == nil || ans.Text != "Intense magnetic fields [1] may produce axions ." ||
			!slices.Equal(ans.Citations, []int{1}) || !slices.Equal(ans.RemovedCitations, []int{9}) || ans.Tokens != 150 {
			t.Fatalf("answer %+v, want the script's with [9] removed and 150 tokens", ans)
		}
		// The query costs a point; the tokens two more.
		if spent := before - after; spent != 3 {
			t.Errorf("ask spent %d points, want 3 (1 for the query, 2 for 150 tokens)", spent)
		}
		// The search (a statement per word at most), the abstracts, and
		// the passages' papers' categories, which the look-ahead reads
		// in one batch however the resolvers are scheduled.
		for _, first := range []int{1, 3} {
			start := statements.Count()
			a, _ := postAsk(t, h, askAxions, map[string]any{"first": first})
			if n := statements.Count() - start; len(a.Data.Ask.Passages) != first || n > 9 {
				t.Errorf("ask for %d passages: %d of them in %d statements, want %d in at most 9", first, len(a.Data.Ask.Passages), n, first)
			}
		}
		a, _ = postAsk(t, h, askAxions, map[string]any{"first": 21})
		if len(a.Errors) != 1 || a.Errors[0].Extensions.Code != "BAD_USER_INPUT" || a.Errors[0].Extensions.Argument != "first" {
			t.Errorf("ask with first 21: %+v, want BAD_USER_INPUT naming first", a.Errors)
		}
	})
}

// Without a model, or with one that fails, ask still gives the passages,
// with an LLM_UNAVAILABLE error that says why and shows no internals.
func TestAskWithoutAnswer(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		for name, model := range map[string]*asktest.Scripted{
			"no model":  nil,
			"429":       {Status: http.StatusTooManyRequests},
			"malformed": {Raw: "data: {oops\n\n"},
		} {
			t.Run(name, func(t *testing.T) {
				h := askServer(t, dbtest.Open(t, dbtest.NewMigrated(t, dbtest.Kinds()[0])), model)
				a, _ := postAsk(t, h, askAxions, map[string]any{"first": 2})
				if len(a.Data.Ask.Passages) != 2 || a.Data.Ask.Answer != nil || len(a.Errors) != 1 ||
					a.Errors[0].Extensions.Code != "LLM_UNAVAILABLE" || strings.Contains(a.Errors[0].Message, "127.0.0.1") {
					t.Errorf("ask: %+v, want 2 passages, no answer, one clean LLM_UNAVAILABLE error", a)
				}
			})
		}
		_ = bdb
	})
}

// /ask streams the passages, then the answer piece by piece in order,
// then the whole answer, as server-sent events.
func TestAskStream(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		srv := httptest.NewServer(askServer(t, bdb, &asktest.Scripted{Pieces: axionScript}))
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/ask?" + url.Values{"question": {"What is the source of axions?"}, "first": {"3"}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var events []string
		var deltas strings.Builder
		var answer struct{ Text string }
		lines := bufio.NewScanner(resp.Body)
		event := ""
		for lines.Scan() {
			line := lines.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
				events = append(events, e)
			}
			data, ok := strings.CutPrefix(line, "data: ")
			switch {
			case ok && event == "delta":
				var d struct{ Text string }
				_ = json.Unmarshal([]byte(data), &d)
				deltas.WriteString(d.Text)
			case ok && event == "answer":
				_ = json.Unmarshal([]byte(data), &answer)
			case ok && event == "passages" && !strings.Contains(data, `"0704.0169"`):
				t.Errorf("passages event %s, want the axion paper", data)
			}
		}
		want := "Intense magnetic fields [1] may produce axions ."
		if len(events) < 4 || events[0] != "passages" || events[len(events)-1] != "answer" ||
			deltas.String() != want || answer.Text != want {
			t.Errorf("/ask events %v, deltas %q, answer %q; want passages, deltas making %q, answer", events, deltas.String(), answer.Text, want)
		}
	})
}

// askStreamDoc subscribes to the axion question's passages and answer.
const askStreamDoc = `subscription { askStream(question: "What is the source of axions?", first: 3) {
  kind passages { number paper { arxivId categories { code } } } delta
  answer { text citations removedCitations model tokens } } }`

// askEvents are a subscription's messages until it ends: the events'
// kinds, their passages' papers, the deltas joined, the answer, the
// budget the last event states, and the codes of the error that ended
// it, if one did.
type askEvents struct {
	kinds  []string
	papers []string
	deltas string
	answer struct {
		Text                        string
		Citations, RemovedCitations []int
		Tokens                      int
	}
	remaining int
	errors    []string
}

// readAskEvents reads operation id's messages until it completes or
// fails.
func readAskEvents(c *wsClient, id string) askEvents {
	c.t.Helper()
	var got askEvents
	for {
		m := c.read()
		if m.ID != id {
			c.t.Fatalf("got %s of %q, want a message of %s", m.Type, m.ID, id)
		}
		switch m.Type {
		case "complete":
			return got
		case "error":
			var errs []struct{ Extensions struct{ Code string } }
			if err := json.Unmarshal(m.Payload, &errs); err != nil {
				c.t.Fatal(err)
			}
			for _, e := range errs {
				got.errors = append(got.errors, e.Extensions.Code)
			}
			return got
		}
		var resp struct {
			Data struct {
				AskStream struct {
					Kind     string
					Passages []struct{ Paper struct{ ArxivID string } }
					Delta    *string
					Answer   *json.RawMessage
				}
			}
			Errors     []struct{ Extensions struct{ Code string } }
			Extensions struct{ Cost struct{ Remaining int } }
		}
		if err := json.Unmarshal(m.Payload, &resp); err != nil {
			c.t.Fatal(err)
		}
		for _, e := range resp.Errors {
			got.errors = append(got.errors, e.Extensions.Code)
		}
		e := resp.Data.AskStream
		got.kinds = append(got.kinds, e.Kind)
		got.remaining = resp.Extensions.Cost.Remaining
		for _, p := range e.Passages {
			got.papers = append(got.papers, p.Paper.ArxivID)
		}
		if e.Delta != nil {
			got.deltas += *e.Delta
		}
		if e.Answer != nil {
			if err := json.Unmarshal(*e.Answer, &got.answer); err != nil {
				c.t.Fatal(err)
			}
		}
	}
}

// dialAsk opens a WebSocket to srv sending key.
func dialAsk(t *testing.T, srv *httptest.Server, key string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return dialWSWith(t, ctx, srv, websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + key}}})
}

// budgetOf is what remains of key's budget on limiter.
func budgetOf(t *testing.T, limiter ratelimit.Limiter, key string) int {
	t.Helper()
	res, err := limiter.Spend(t.Context(), ratelimit.KeyClient(key), 0)
	if err != nil {
		t.Fatal(err)
	}
	return res.Remaining
}

// askStream over the WebSocket sends the passages, then the answer's
// pieces in order, then the whole answer, whose citation of a passage
// it was not given is removed; it costs what the ask query costs, its
// last event stating the budget after the tokens.
func TestAskSubscription(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		llm := &asktest.Scripted{Pieces: axionScript}
		h, limiter := askServerFor(t, bdb, llm, 100)
		srv := httptest.NewServer(h)
		defer srv.Close()
		before := budgetOf(t, limiter, mcpKey)
		c := dialAsk(t, srv, mcpKey)
		c.subscribe("1", askStreamDoc)
		got := readAskEvents(c, "1")
		want := "Intense magnetic fields [1] may produce axions ."
		kinds := []string{"PASSAGES", "DELTA", "DELTA", "DELTA", "ANSWER"}
		if !slices.Equal(got.kinds, kinds) || len(got.errors) > 0 {
			t.Fatalf("events %v, errors %v; want %v", got.kinds, got.errors, kinds)
		}
		if len(got.papers) != 3 || got.papers[0] != "0704.0169" {
			t.Errorf("passages of %v, want 3, of 0704.0169 first", got.papers)
		}
		if got.deltas != want || got.answer.Text != want || !slices.Equal(got.answer.Citations, []int{1}) ||
			!slices.Equal(got.answer.RemovedCitations, []int{9}) || got.answer.Tokens != 150 {
			t.Errorf("deltas %q, answer %+v; want %q citing [1], [9] removed, 150 tokens", got.deltas, got.answer, want)
		}
		after := budgetOf(t, limiter, mcpKey)
		// A point for the passages, as the ask query; two for 150 tokens.
		if spent := before - after; spent != 3 || got.remaining != after {
			t.Errorf("askStream spent %d points and stated %d remaining, want 3 spent and %d remaining", spent, got.remaining, after)
		}
		if llm.Calls != 1 {
			t.Errorf("the model was asked %d times, want once", llm.Calls)
		}
	})
}

// getAsk asks /ask the axion question with key and returns the answer's
// status and its events' names and data.
func getAsk(t *testing.T, srv *httptest.Server, key string) (int, []string, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/ask?"+
		url.Values{"question": {"What is the source of axions?"}, "first": {"3"}}.Encode(), nil)
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []string
	var data strings.Builder
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if e, ok := strings.CutPrefix(lines.Text(), "event: "); ok {
			events = append(events, e)
		}
		if d, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
			data.WriteString(d + "\n")
		}
	}
	return resp.StatusCode, events, data.String()
}

// A budget that pays for the passages but not for the most an answer may
// take gets the passages and RATE_LIMITED, the model unasked, from the
// ask query, /ask and askStream alike; one smaller than it gets
// COST_LIMIT_EXCEEDED; a spent budget is refused before the passages (429
// from /ask); an unknown key before anything (401).
func TestAskRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		llm := &asktest.Scripted{Pieces: axionScript}
		h, limiter := askServerFor(t, bdb, llm, 20)
		srv := httptest.NewServer(h)
		defer srv.Close()
		// Six points left: the passages cost one each, the answer's
		// tokens may take nine.
		if _, err := limiter.Spend(t.Context(), ratelimit.KeyClient(mcpKey), 14); err != nil {
			t.Fatal(err)
		}

		req := post(t, map[string]any{"query": askAxions, "variables": map[string]any{"first": 3}}, mediaJSON)
		req.Header.Set("X-API-Key", mcpKey)
		rec := serve(h, req)
		var a askAnswer
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if rec.Code != http.StatusOK || len(a.Data.Ask.Passages) != 3 || a.Data.Ask.Answer != nil ||
			len(a.Errors) != 1 || a.Errors[0].Extensions.Code != "RATE_LIMITED" {
			t.Errorf("ask on a small budget: %d %+v, want 200, 3 passages, no answer, RATE_LIMITED", rec.Code, a)
		}

		status, events, data := getAsk(t, srv, mcpKey)
		if status != http.StatusOK || !slices.Equal(events, []string{"passages", "error"}) || !strings.Contains(data, `"RATE_LIMITED"`) {
			t.Errorf("/ask on a small budget: %d %v %s, want the passages and a RATE_LIMITED error", status, events, data)
		}

		c := dialAsk(t, srv, mcpKey)
		c.subscribe("1", askStreamDoc)
		got := readAskEvents(c, "1")
		if !slices.Equal(got.kinds, []string{"PASSAGES"}) || !slices.Equal(got.errors, []string{"RATE_LIMITED"}) {
			t.Errorf("askStream on a small budget: events %v, errors %v; want the passages, then RATE_LIMITED", got.kinds, got.errors)
		}
		if llm.Calls != 0 {
			t.Errorf("the model was asked %d times on a budget too small for its answer, want never", llm.Calls)
		}

		small, _ := askServerFor(t, dbtest.Open(t, dbtest.NewMigrated(t, dbtest.Kinds()[0])), llm, 5)
		if a, _ := postAsk(t, small, askAxions, map[string]any{"first": 3}); len(a.Data.Ask.Passages) != 3 ||
			len(a.Errors) != 1 || a.Errors[0].Extensions.Code != "COST_LIMIT_EXCEEDED" {
			t.Errorf("ask on a budget of 5 points: %+v, want the passages and COST_LIMIT_EXCEEDED", a)
		}

		if _, err := limiter.Spend(t.Context(), ratelimit.KeyClient(mcpKey), budgetOf(t, limiter, mcpKey)); err != nil {
			t.Fatal(err)
		}
		status, events, data = getAsk(t, srv, mcpKey)
		if status != http.StatusTooManyRequests || len(events) != 0 {
			t.Errorf("/ask on a spent budget: %d %v, want 429 before any event", status, events)
		}
		c.subscribe("2", askStreamDoc)
		got = readAskEvents(c, "2")
		if len(got.kinds) != 0 || !slices.Equal(got.errors, []string{"RATE_LIMITED"}) {
			t.Errorf("askStream on a spent budget: events %v, errors %v; want RATE_LIMITED alone", got.kinds, got.errors)
		}

		if status, events, _ := getAsk(t, srv, "agent-not-issued"); status != http.StatusUnauthorized || len(events) != 0 {
			t.Errorf("/ask with an unknown key: %d %v, want 401", status, events)
		}
		_, resp, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql", &websocket.DialOptions{
			Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: http.Header{"Authorization": {"Bearer agent-not-issued"}}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("WebSocket with an unknown key: %v, want 401", err)
		}
		if llm.Calls != 0 {
			t.Errorf("the model was asked %d times, want never", llm.Calls)
		}
	})
}
