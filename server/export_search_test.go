package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/resolvers"
)

// exportRows reads a search export back with a real parser: the arXiv
// ids of its rows, in order.
func exportRows(t *testing.T, format string, body []byte) []string {
	t.Helper()
	var ids []string
	if format == "csv" {
		rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"arxiv_id", "title", "published", "categories", "authors", "citation_count", "doi", "abs_url"}; len(rows) == 0 || !slices.Equal(rows[0], want) {
			t.Fatalf("csv header %q, want %q", rows[:min(len(rows), 1)], want)
		}
		for _, r := range rows[1:] {
			if r[7] != "https://arxiv.org/abs/"+r[0] || r[4] == "" {
				t.Errorf("csv row %q: want an abs URL and authors", r)
			}
			ids = append(ids, r[0])
		}
		return ids
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r searchRow
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
	return ids
}

func TestSearchExport(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		if _, err := ingest.Import(ctx, bdb, ingest.Options{
			Format: ingest.Paperscape, Paths: []string{"../ingest/testdata/pscp-1992.csv.gz"},
		}); err != nil {
			t.Fatal(err)
		}
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
			{"researcher=" + strconv.FormatInt(hub, 10), nil, &model.PaperFilter{Researcher: str(strconv.FormatInt(hub, 10))}, nil},
			{"hasDOI=false&query=black+hole", str("black hole"), &model.PaperFilter{HasDoi: &no}, nil},
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
		{"hasDOI=maybe", "hasDOI"},
		{"sort=best", "sort"},
		{"sort=relevance", "sort"},
		{"researcher=%3F%3F", "researcher"},
		{"institution=%2C", "institution"},
		{"format=xml", "format"},
	} {
		rec := serve(h, httptest.NewRequest(http.MethodGet, "/export/search?"+tt.params, nil))
		if rec.Code != http.StatusBadRequest || !strings.HasPrefix(rec.Body.String(), tt.arg+": ") {
			t.Errorf("%s: got %d %q, want 400 naming %s", tt.params, rec.Code, rec.Body, tt.arg)
		}
	}
	rec := serve(h, httptest.NewRequest(http.MethodGet, "/export/search?format=jsonl", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("empty archive: got %d %q, want an empty file", rec.Code, rec.Body)
	}
}
