package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/ratelimit"
	"github.com/papergraph/papergraph/resolvers"
)

// searchColumns are the columns of a search export, CSV and JSON lines
// alike, named as the schema names Paper's fields.
var searchColumns = []string{"arxivId", "title", "published", "categories", "authors", "citationCount", "doi", "absUrl"}

// exportRows reads a search export back with a real parser: the arXiv
// ids of its rows, in order. It fails t unless the file ends with the
// line of a whole export, naming as many rows.
func exportRows(t *testing.T, format string, body []byte) []string {
	t.Helper()
	ids, end := exportFile(t, format, body)
	if want := fmt.Sprintf("complete: %d rows", len(ids)); end != want {
		t.Errorf("%s ends with %q, want %q", format, end, want)
	}
	return ids
}

// exportFile reads a search export back: the arXiv ids of its rows and
// what its last line says ("complete: N rows", "error: CODE: …; N rows").
func exportFile(t *testing.T, format string, body []byte) (ids []string, end string) {
	t.Helper()
	if format == "csv" {
		cr := csv.NewReader(bytes.NewReader(body))
		cr.Comment = '#'
		rows, err := cr.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if want := searchColumns; len(rows) == 0 || !slices.Equal(rows[0], want) {
			t.Fatalf("csv header %q, want %q", rows[:min(len(rows), 1)], want)
		}
		for _, r := range rows[1:] {
			if r[7] != "https://arxiv.org/abs/"+r[0] || r[4] == "" {
				t.Errorf("csv row %q: want an abs URL and authors", r)
			}
			ids = append(ids, r[0])
		}
		lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
		end, _ = strings.CutPrefix(lines[len(lines)-1], "# ")
		end = regexp.MustCompile(` \(request [^)]*\)`).ReplaceAllString(end, "")
		return ids, end
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var last struct {
			Complete *struct{ Rows int }
			Error    *struct {
				Message, Code, RequestID string
				Rows                     int
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &last); err == nil && (last.Complete != nil || last.Error != nil) {
			if sc.Scan() {
				t.Fatalf("jsonl: line %q after the end line %q", sc.Text(), end)
			}
			if last.Complete != nil {
				return ids, fmt.Sprintf("complete: %d rows", last.Complete.Rows)
			}
			if last.Error.RequestID == "" {
				t.Errorf("jsonl: end line %s has no request id", sc.Bytes())
			}
			return ids, fmt.Sprintf("error: %s: %s; %d rows", last.Error.Code, last.Error.Message, last.Error.Rows)
		}
		var r searchRow
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &keys); err != nil {
			t.Fatalf("jsonl line %q: %v", sc.Text(), err)
		}
		if got := slices.Sorted(maps.Keys(keys)); !slices.Equal(got, slices.Sorted(slices.Values(searchColumns))) {
			t.Fatalf("jsonl keys %q, want %q", got, searchColumns)
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("jsonl line %q: %v", sc.Text(), err)
		}
		if r.AbsURL != "https://arxiv.org/abs/"+r.ArxivID || r.Title == "" || len(r.Categories) == 0 {
			t.Errorf("jsonl row %+v: want an abs URL, a title and categories", r)
		}
		ids = append(ids, r.ArxivID)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ids, ""
}

func TestSearchExport(t *testing.T) {
	ctx := context.Background()
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		var hub int64
		if err := bdb.NewRaw("SELECT researcher_id FROM authorships WHERE researcher_id IS NOT NULL GROUP BY researcher_id ORDER BY COUNT(*) DESC, researcher_id LIMIT 1").Scan(ctx, &hub); err != nil {
			t.Fatal(err)
		}
		h := newTestServer(t, bdb, Config{}).Handler()
		defer func(n int) { searchExportPage = n }(searchExportPage)
		searchExportPage = 7

		day := func(s string) *time.Time {
			d, err := time.Parse(time.DateOnly, s)
			if err != nil {
				t.Fatal(err)
			}
			return &d
		}
		str := func(s string) *string { return &s }
		sortBy := func(s model.PaperSearchSort) *model.PaperSearchSort { return &s }
		no := false
		tests := []struct {
			params string
			// The same search as searchPapers' arguments.
			query  *string
			filter *model.PaperFilter
			sort   *model.PaperSearchSort
		}{
			{"query=gauge", str("gauge"), nil, nil},
			{"query=string*&sort=most_cited", str("string*"), nil, sortBy(model.PaperSearchSortMostCited)},
			{"categories=hep-lat,+hep-ph&from=1992-03-01&to=1992-06-30&sort=OLDEST", nil,
				&model.PaperFilter{Categories: []string{"hep-lat", "hep-ph"}, PublishedFrom: day("1992-03-01"), PublishedTo: day("1992-07-01")},
				sortBy(model.PaperSearchSortOldest)},
			// The last writable day bounds nothing: the day after it has
			// a five-digit year.
			{"categories=hep-th&to=9999-12-31", nil, &model.PaperFilter{Categories: []string{"hep-th"}}, nil},
			{"researcher=" + strconv.FormatInt(hub, 10), nil, &model.PaperFilter{Researcher: str(strconv.FormatInt(hub, 10))}, nil},
			{"hasDoi=false&query=black+hole", str("black hole"), &model.PaperFilter{HasDoi: &no}, nil},
		}
		for _, tt := range tests {
			body, _ := json.Marshal(map[string]any{"query": `query($q: String, $f: PaperFilter, $s: PaperSearchSort) {
				searchPapers(query: $q, filter: $f, sort: $s) { totalCount } }`, "variables": map[string]any{"q": tt.query, "f": tt.filter, "s": tt.sort}})
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", mediaJSON)
			var total struct{ SearchPapers struct{ TotalCount int } }
			if resp := decode(t, serve(h, req)); len(resp.Errors) > 0 || json.Unmarshal(resp.Data, &total) != nil {
				t.Fatalf("%s: searchPapers: %+v", tt.params, resp.Errors)
			}
			s, order, err := resolvers.SearchArgs(ctx, bdb, tt.query, tt.filter, tt.sort)
			if err != nil {
				t.Fatal(err)
			}
			all, err := db.SearchPapers(ctx, bdb, s, db.PageArgs{First: total.SearchPapers.TotalCount + 1, Order: order})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, p := range all.Items {
				want = append(want, p.ArxivID)
			}
			if n := total.SearchPapers.TotalCount; n <= 2*searchExportPage || len(want) != n {
				t.Fatalf("%s: %d papers (%d listed), want more than two pages", tt.params, n, len(want))
			}
			for _, format := range []string{"csv", "jsonl"} {
				rec := serve(h, httptest.NewRequest(http.MethodGet, "/export/search?"+tt.params+"&format="+format, nil))
				if rec.Code != http.StatusOK {
					t.Fatalf("%s %s: status %d: %s", tt.params, format, rec.Code, rec.Body)
				}
				if _, ps, err := mime.ParseMediaType(rec.Header().Get("Content-Disposition")); err != nil || ps["filename"] != "search."+format {
					t.Errorf("%s %s: Content-Disposition %q", tt.params, format, rec.Header().Get("Content-Disposition"))
				}
				if got := exportRows(t, format, rec.Body.Bytes()); !slices.Equal(got, want) {
					t.Errorf("%s %s: got %d rows, want the %d of searchPapers in order", tt.params, format, len(got), len(want))
				}
			}
		}
	})
}

func TestSearchExportRefuses(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	for _, tt := range []struct{ params, arg string }{
		{"query=%22open", "query"},
		{"from=1992-13-01", "from"},
		{"to=yesterday", "to"},
		{"hasDoi=maybe", "hasDoi"},
		{"sort=best", "sort"},
		{"sort=relevance", "sort"},
		{"researcher=%3F%3F", "researcher"},
		{"institution=%2C", "institution"},
		{"format=xml", "format"},
		{"query=a%00b", "query"},
		{"query=" + strings.Repeat("a", 100<<10), "query"},
		{"researcher=x%FFy", "researcher"},
		{"institution=CERN%E2%80%AE", "institution"},
		{"categories=hep-th,hep%07th", "categories"},
	} {
		rec := serve(h, httptest.NewRequest(http.MethodGet, "/export/search?"+tt.params, nil))
		if rec.Code != http.StatusBadRequest || !strings.HasPrefix(rec.Body.String(), tt.arg+": ") || rec.Body.Len() > 300 {
			t.Errorf("%.80s: got %d %.300q, want a short 400 naming %s", tt.params, rec.Code, rec.Body, tt.arg)
		}
	}
	rec := serve(h, httptest.NewRequest(http.MethodGet, "/export/search?format=jsonl", nil))
	if want := "{\"complete\":{\"rows\":0}}\n"; rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Errorf("empty archive: got %d %q, want %q", rec.Code, rec.Body, want)
	}
}

// TestExportCannotStart checks that an export whose database is gone
// answers 503 with a JSON error, and no file.
func TestExportCannotStart(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	h := newTestServer(t, bdb, Config{}).Handler()
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		"/export/search?query=gauge", "/export/search?format=jsonl",
		"/export/researchers/1/network.csv", "/export/institutions/1/network.graphml", "/export/papers/hep-th/9201001/citation-network.gexf",
	} {
		rec := serve(h, httptest.NewRequest(http.MethodGet, target, nil))
		var body struct {
			Error struct{ Message, Code, RequestID string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); rec.Code != http.StatusServiceUnavailable || err != nil ||
			body.Error.Code != "SERVICE_UNAVAILABLE" || body.Error.RequestID == "" || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: got %d %q (%s), want 503 with a JSON error", target, rec.Code, rec.Body, rec.Header().Get("Content-Type"))
		}
		if strings.Contains(rec.Body.String(), "sql") || rec.Header().Get("Content-Disposition") != "" {
			t.Errorf("%s: %q %v: shows internals or starts a file", target, rec.Body, rec.Header())
		}
	}
}

// cancelAfter is a query hook that cancels a request after its first n
// statements, as a client going away or a shutdown would.
type cancelAfter struct {
	n      atomic.Int64
	cancel atomic.Pointer[context.CancelCauseFunc]
}

func (c *cancelAfter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	if c.n.Add(-1) == -1 {
		if cancel := c.cancel.Load(); cancel != nil {
			(*cancel)(errShutdown)
		}
	}
	return ctx
}

func (c *cancelAfter) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestSearchExportCutShort checks that an export whose request is
// cancelled after its first page ends with the error line and the
// trailers of a cut export, and that a whole one has the trailers of a
// whole one.
func TestSearchExportCutShort(t *testing.T) {
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		hook := &cancelAfter{}
		bdb = bdb.WithQueryHook(hook)
		h := newTestServer(t, bdb, Config{}).Handler()
		defer func(n int) { searchExportPage = n }(searchExportPage)
		searchExportPage = 7
		for _, format := range []string{"csv", "jsonl"} {
			for _, cut := range []bool{false, true} {
				ctx, cancel := context.WithCancelCause(context.Background())
				hook.n.Store(1 << 40)
				if cut {
					// The first page, its bylines and its categories.
					hook.n.Store(3)
					hook.cancel.Store(&cancel)
				}
				rec := serve(h, httptest.NewRequestWithContext(ctx, http.MethodGet, "/export/search?query=gauge&format="+format, nil))
				hook.cancel.Store(nil)
				cancel(nil)
				ids, end := exportFile(t, format, rec.Body.Bytes())
				trailer := rec.Result().Trailer
				switch {
				case rec.Code != http.StatusOK:
					t.Errorf("%s, cut %v: status %d", format, cut, rec.Code)
				case !cut && (end != fmt.Sprintf("complete: %d rows", len(ids)) || len(ids) <= searchExportPage ||
					trailer.Get(exportStatusTrailer) != "complete" || trailer.Get(exportRowsTrailer) != strconv.Itoa(len(ids))):
					t.Errorf("%s: %d rows, end %q, trailers %v; want more than a page, complete", format, len(ids), end, trailer)
				case cut && (end != "error: SERVICE_UNAVAILABLE: the server is shutting down; 7 rows" || len(ids) != searchExportPage ||
					trailer.Get(exportStatusTrailer) != "incomplete" || trailer.Get(exportRowsTrailer) != "7"):
					t.Errorf("%s cut: %d rows, end %q, trailers %v; want the first page and the error line", format, len(ids), end, trailer)
				}
			}
		}
	})
}

// slowQueries is a query hook that delays every statement while on.
type slowQueries struct{ on atomic.Bool }

func (s *slowQueries) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	if s.on.Load() {
		time.Sleep(20 * time.Millisecond)
	}
	return ctx
}

func (s *slowQueries) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestSearchExportAtShutdown checks that an export still streaming when
// the server shuts down ends with the error line rather than with the
// connection, and that the server then stops.
func TestSearchExportAtShutdown(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewSeeded(t, "sqlite", pscp1992))
	slow := &slowQueries{}
	bdb = bdb.WithQueryHook(slow)
	slow.on.Store(true)
	defer func(n int) { searchExportPage = n }(searchExportPage)
	searchExportPage = 1
	s := newTestServer(t, bdb, Config{ShutdownGrace: 100 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/export/search?query=gauge&format=jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatalf("first row: %v", err)
	}
	stop()
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("rest of the export: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(rest), "\n"), "\n")
	var end struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &end); err != nil || end.Error.Code != "SERVICE_UNAVAILABLE" {
		t.Errorf("last line %q, want the error line of a shutdown", lines[len(lines)-1])
	}
	if got := resp.Trailer.Get(exportStatusTrailer); got != "incomplete" {
		t.Errorf("trailer %s = %q, want incomplete", exportStatusTrailer, got)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve returned %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the shutdown")
	}
}

// TestExportsSpendBudget checks that exports spend the budget GraphQL
// requests do: a search export a point per page, so that a spent budget
// ends it with a RATE_LIMITED line, and then refuses the next export with
// 429 before it starts.
func TestExportsSpendBudget(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewSeeded(t, "sqlite", pscp1992))
	limiter, err := ratelimit.NewMemory(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	h := newTestServer(t, bdb, Config{RateLimiter: limiter}).Handler()
	defer func(n int) { searchExportPage = n }(searchExportPage)
	searchExportPage = 7

	rec := serve(h, httptest.NewRequest("GET", "/export/search?format=jsonl&query=gauge", nil))
	ids, end := exportFile(t, "jsonl", rec.Body.Bytes())
	if rec.Code != 200 || len(ids) != 3*7 || !strings.HasPrefix(end, "error: RATE_LIMITED: the hourly budget is spent") {
		t.Errorf("export over budget: status %d, %d rows, end %q; want 200, 21 rows, a RATE_LIMITED end", rec.Code, len(ids), end)
	}
	for _, target := range []string{"/export/search?query=gauge", "/export/researchers/1/network.json"} {
		rec := serve(h, httptest.NewRequest("GET", target, nil))
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), `"RATE_LIMITED"`) {
			t.Errorf("%s with a spent budget: status %d, Retry-After %q, body %.200s; want 429 RATE_LIMITED", target, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
}
