package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/ask"
	"github.com/papergraph/papergraph/ask/asktest"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/demo"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/ratelimit"
)

// axionScript is the scripted model's answer: it cites passage 1, and 9,
// which no question here has.
var axionScript = []string{"Intense magnetic fields [", "1] may produce axions [9", "]."}

// askServer serves the demo's Kaggle sample with the scripted model at
// llm (none when nil) and an hourly budget of 1,000 points.
func askServer(t *testing.T, bdb *bun.DB, llm *asktest.Scripted) http.Handler {
	t.Helper()
	if _, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Kaggle, FS: demo.Files(),
		Paths: []string{"kaggle-arxiv-sample.jsonl.gz"}}); err != nil {
		t.Fatal(err)
	}
	limiter, err := ratelimit.NewMemory(1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{RateLimiter: limiter}
	if llm != nil {
		srv := httptest.NewServer(llm)
		t.Cleanup(srv.Close)
		cfg.LLM = &ask.LLM{URL: srv.URL + "/v1", Model: "scripted"}
	}
	return newTestServer(t, bdb, cfg).Handler()
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
		// the passages' papers' categories, which the dataloader may
		// read in two batches.
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
		for name, llm := range map[string]*asktest.Scripted{
			"no model":  nil,
			"429":       {Status: http.StatusTooManyRequests},
			"malformed": {Raw: "data: {oops\n\n"},
		} {
			t.Run(name, func(t *testing.T) {
				h := askServer(t, dbtest.Open(t, dbtest.New(t, dbtest.Kinds()[0])), llm)
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
