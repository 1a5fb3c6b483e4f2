package analysis_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/analysis"
	"github.com/papergraph/papergraph/analysis/analysistest"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/retry"
)

// goodAnswer is a valid analysis whose summary names the paper.
func goodAnswer(title string) string {
	return fmt.Sprintf(`{"summary":"On %s.","novelty":"A new bound.","paper_type":"theory",`+
		`"research_field":"string theory","significance_score":5,"keywords":["strings"," duality "]}`, title)
}

// storePapers stores papers titled by titles (arXiv ids 2601.0000n), each
// with an abstract, and returns their ids by title.
func storePapers(t *testing.T, bdb bun.IDB, titles ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for i, title := range titles {
		p := &db.Paper{ArxivID: fmt.Sprintf("2601.%05d", i+1), Title: title, Abstract: "We study " + title + ".",
			Published: time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)}
		if _, err := bdb.NewInsert().Model(p).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		out[title] = p.ID
	}
	return out
}

// runOptions are a run's options against srv, with backoffs short
// enough for a test; a server's Retry-After still stands, up to MaxWait.
func runOptions(srv *httptest.Server, waits *[]time.Duration) analysis.RunOptions {
	var mu sync.Mutex
	return analysis.RunOptions{URL: srv.URL + "/v1", Model: "scripted", Concurrency: 3, Timeout: 300 * time.Millisecond,
		Retry: retry.Policy{Attempts: 3, Backoff: time.Millisecond, MaxWait: 2 * time.Second, Notify: func(_ error, d time.Duration) {
			mu.Lock()
			*waits = append(*waits, d)
			mu.Unlock()
		}}}
}

// TestRun: good answers are written with their model and prompt version;
// malformed and schema-invalid ones are reported with their paper and
// not written; a 429 is tried again after its Retry-After, a 503 and a
// timeout after a backoff; a rerun asks only about the papers without a
// current analysis, and a changed abstract is analysed again.
func TestRun(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ids := storePapers(t, bdb, "good", "malformed", "invalid", "busy", "down", "slow")
		// A paper without an abstract is never asked about.
		if _, err := bdb.NewInsert().Model(&db.Paper{ArxivID: "2601.00099", Title: "no abstract"}).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		script := &analysistest.Server{Script: func(title string, call int) analysistest.Reply {
			switch {
			case title == "malformed":
				return analysistest.Reply{Content: `{"summary": "cut sho`}
			case title == "invalid":
				return analysistest.Reply{Content: strings.Replace(goodAnswer(title), `"significance_score":5`, `"significance_score":12`, 1)}
			case title == "busy" && call == 1:
				return analysistest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "1"}
			case title == "down" && call == 1:
				return analysistest.Reply{Status: http.StatusServiceUnavailable}
			case title == "slow" && call == 1:
				return analysistest.Reply{Hang: true}
			}
			return analysistest.Reply{Content: goodAnswer(title)}
		}}
		srv := httptest.NewServer(script)
		defer srv.Close()
		var waits []time.Duration
		o := runOptions(srv, &waits)
		at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
		o.Now = func() time.Time { return at }
		var rejected []string
		o.Rejected = func(r analysis.Rejection) { rejected = append(rejected, r.ArxivID+": "+r.Reason) }
		sum, err := analysis.Run(t.Context(), bdb, o)
		if err != nil {
			t.Fatal(err)
		}
		want := analysis.RunSummary{Analysed: 4, Rejected: 2, PromptTokens: 6 * analysistest.PromptTokens,
			CompletionTokens: 6 * analysistest.CompletionTokens}
		if sum != want {
			t.Errorf("summary %+v, want %+v", sum, want)
		}
		slices.Sort(rejected)
		if len(rejected) != 2 || !strings.HasPrefix(rejected[0], "2601.00002: malformed analysis: not JSON") ||
			!strings.HasPrefix(rejected[1], "2601.00003: malformed analysis: at '/significance_score'") {
			t.Errorf("rejected %q, want 2601.00002 as not JSON and 2601.00003's score", rejected)
		}
		for title, calls := range map[string]int{"good": 1, "malformed": 1, "invalid": 1, "busy": 2, "down": 2, "slow": 2, "no abstract": 0} {
			if got := script.Calls(title); got != calls {
				t.Errorf("%s asked %d times, want %d", title, got, calls)
			}
		}
		if !slices.Contains(waits, time.Second) || len(waits) != 3 {
			t.Errorf("waits before trying again %v, want three, one of them the 429's Retry-After of 1s", waits)
		}
		rf := script.Last()["response_format"].(map[string]any)
		if rf["type"] != "json_schema" || rf["json_schema"].(map[string]any)["strict"] != true {
			t.Errorf("response_format %v, want a strict json_schema", rf)
		}

		rows, err := db.AnalysesByPaperIDs(t.Context(), bdb, []int64{ids["good"], ids["malformed"], ids["invalid"], ids["busy"], ids["down"], ids["slow"]})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 4 || rows[ids["malformed"]] != nil || rows[ids["invalid"]] != nil {
			t.Fatalf("analyses of %d papers, want 4 (not malformed, invalid)", len(rows))
		}
		g := rows[ids["good"]]
		if g.Summary != "On good." || g.PaperType != "theory" || g.SignificanceScore != 5 || strings.Join(g.Keywords, "|") != "strings|duality" ||
			g.Model != "scripted-scripted" || g.PromptVersion != analysis.PromptVersion || !g.AnalysedAt.Equal(at) ||
			g.AbstractHash != db.AbstractHash("good", "We study good.") {
			t.Errorf("analysis of good: %+v", g)
		}

		// A rerun asks again only about the rejected papers; one whose
		// abstract changed is analysed again, its new text hashed.
		if _, err := bdb.NewUpdate().Model((*db.Paper)(nil)).Set("abstract = ?", "We study good, revised.").
			Where("id = ?", ids["good"]).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		total := script.Total()
		sum, err = analysis.Run(t.Context(), bdb, o)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Analysed != 1 || sum.Rejected != 2 || sum.Current != 3 || script.Total()-total != 3 ||
			script.Calls("good") != 2 || script.Calls("busy") != 2 {
			t.Errorf("rerun: %+v after %d requests, want good analysed again, 2 rejected, 3 current", sum, script.Total()-total)
		}
		rows, _ = db.AnalysesByPaperIDs(t.Context(), bdb, []int64{ids["good"]})
		if h := rows[ids["good"]].AbstractHash; h != db.AbstractHash("good", "We study good, revised.") {
			t.Errorf("good's hash %s, want the revised abstract's", h)
		}
	})
}

// TestRunResumes: a run stopped midway leaves the answers it had, and a
// rerun asks only about the rest and ends with the rows of a whole run;
// --since and --limit bound what is asked.
func TestRunResumes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		titles := []string{"p1", "p2", "p3", "p4", "p5", "p6"}
		ids := storePapers(t, bdb, titles...)
		script := &analysistest.Server{Script: func(title string, _ int) analysistest.Reply {
			return analysistest.Reply{Content: goodAnswer(title)}
		}}
		srv := httptest.NewServer(script)
		defer srv.Close()
		var waits []time.Duration
		o := runOptions(srv, &waits)
		o.Concurrency = 1

		o.Since, o.Limit = time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC), 2
		if sum, err := analysis.Run(t.Context(), bdb, o); err != nil || sum.Analysed != 2 || script.Calls("p3") != 1 ||
			script.Calls("p4") != 1 || script.Total() != 2 {
			t.Fatalf("--since the 3rd --limit 2: %+v, %v, %d requests; want p3 and p4", sum, err, script.Total())
		}
		o.Since, o.Limit = time.Time{}, 0

		ctx, stop := context.WithCancel(t.Context())
		o.Progress = func(s analysis.RunSummary) {
			if s.Analysed == 1 {
				stop()
			}
		}
		if _, err := analysis.Run(ctx, bdb, o); err != context.Canceled {
			t.Fatalf("stopped run: %v, want context.Canceled", err)
		}
		o.Progress = nil
		if _, err := analysis.Run(t.Context(), bdb, o); err != nil {
			t.Fatal(err)
		}
		rows, err := db.AnalysesByPaperIDs(t.Context(), bdb, slices.Collect(func(yield func(int64) bool) {
			for _, id := range ids {
				yield(id)
			}
		}))
		if err != nil || len(rows) != len(titles) {
			t.Fatalf("%d analyses (%v), want %d", len(rows), err, len(titles))
		}
		for _, title := range titles {
			if r := rows[ids[title]]; r.Summary != "On "+title+"." {
				t.Errorf("%s: %+v", title, r)
			}
		}
		// p1 was answered before the stop; a request in flight when it
		// came may be asked again, no other.
		if script.Calls("p1") != 1 || script.Calls("p3") != 1 || script.Calls("p4") != 1 || script.Total() > len(titles)+1 {
			t.Errorf("%d requests, p1 %d, p3 %d, p4 %d; want each paper asked once but one in flight", script.Total(),
				script.Calls("p1"), script.Calls("p3"), script.Calls("p4"))
		}
	})
}

// TestRunStopsOnRefusal: an endpoint that refuses outright (400), or is
// still busy after every attempt, ends the run with an error naming the
// paper; the answers in before it are kept.
func TestRunStopsOnRefusal(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		storePapers(t, bdb, "fine", "refused")
		for _, tt := range []struct {
			status int
			want   string
		}{
			{http.StatusBadRequest, "analysis of 2601.00002: http://"},
			{http.StatusServiceUnavailable, "answered 503 Service Unavailable"},
		} {
			script := &analysistest.Server{Script: func(title string, _ int) analysistest.Reply {
				if title == "refused" {
					return analysistest.Reply{Status: tt.status}
				}
				return analysistest.Reply{Content: goodAnswer(title)}
			}}
			srv := httptest.NewServer(script)
			var waits []time.Duration
			o := runOptions(srv, &waits)
			o.Concurrency = 1
			_, err := analysis.Run(t.Context(), bdb, o)
			srv.Close()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "2601.00002") {
				t.Errorf("status %d: err %v, want one naming 2601.00002 and %q", tt.status, err, tt.want)
			}
			if tt.status == http.StatusServiceUnavailable && script.Calls("refused") != 3 {
				t.Errorf("a 503 asked %d times, want the 3 attempts", script.Calls("refused"))
			}
			if n, err := bdb.NewSelect().Model((*db.PaperAnalysis)(nil)).Count(t.Context()); err != nil || n != 1 {
				t.Errorf("status %d: %d analyses (%v), want fine's", tt.status, n, err)
			}
		}
	})
}
