package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mmcdole/gofeed/atom"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// readFeed parses an Atom document with gofeed's Atom parser and checks
// what RFC 4287 requires of it: the feed's id, title, updated and a self
// link; each entry's id (unique), title, updated and an author (its own or
// the feed's); every date in RFC 3339.
func readFeed(t *testing.T, body string) *atom.Feed {
	t.Helper()
	feed, err := (&atom.Parser{}).Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("not an Atom feed: %v\n%s", err, body)
	}
	if feed.ID == "" || feed.Title == "" || feed.Updated == "" {
		t.Errorf("feed lacks id, title or updated: %q %q %q", feed.ID, feed.Title, feed.Updated)
	}
	self := false
	for _, l := range feed.Links {
		self = self || l.Rel == "self" && l.Href != ""
	}
	if !self {
		t.Error("feed has no self link")
	}
	rfc3339 := func(what, s string) {
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			t.Errorf("%s %q is not RFC 3339", what, s)
		}
	}
	rfc3339("feed updated", feed.Updated)
	ids := map[string]bool{}
	for _, e := range feed.Entries {
		if e.ID == "" || e.Title == "" || ids[e.ID] {
			t.Errorf("entry without id or title, or a repeated id: %+v", e)
		}
		ids[e.ID] = true
		rfc3339("entry updated", e.Updated)
		if e.Published != "" {
			rfc3339("entry published", e.Published)
		}
		if len(e.Authors) == 0 && len(feed.Authors) == 0 {
			t.Errorf("entry %s has no author, nor has the feed", e.ID)
		}
	}
	return feed
}

func TestLatestFeed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Kaggle, Paths: []string{"../ingest/testdata/kaggle.jsonl"}})
		if err != nil || !sum.OK() {
			t.Fatalf("import: %+v, %v", sum, err)
		}
		statements := &db.StatementCounter{}
		h := newTestServer(t, bdb.WithQueryHook(statements), Config{}).Handler()
		get := func(target string, header ...string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodGet, target, nil)
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			return serve(h, req)
		}

		before := statements.Count()
		rec := get("/feeds/latest.atom")
		// The search, the papers, their categories, their first authors.
		if n := statements.Count() - before; n != 4 {
			t.Errorf("the feed took %d statements, want 4", n)
		}
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/atom+xml; charset=utf-8" {
			t.Fatalf("status %d, type %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		feed := readFeed(t, rec.Body.String())
		if len(feed.Entries) != 5 {
			t.Fatalf("%d entries, want the 5 papers", len(feed.Entries))
		}
		for i := 1; i < len(feed.Entries); i++ {
			if feed.Entries[i].Published > feed.Entries[i-1].Published {
				t.Errorf("entry %d published %s after entry %d's %s: not newest first", i, feed.Entries[i].Published, i-1, feed.Entries[i-1].Published)
			}
		}

		rec = get("/feeds/latest.atom?categories=hep-ph")
		feed = readFeed(t, rec.Body.String())
		if len(feed.Entries) != 1 {
			t.Fatalf("categories=hep-ph: %d entries, want 1", len(feed.Entries))
		}
		e := feed.Entries[0]
		links := map[string]string{}
		for _, l := range e.Links {
			links[l.Rel] = l.Href
		}
		switch {
		case e.ID != "https://arxiv.org/abs/0704.0001":
			t.Errorf("id %q", e.ID)
		case links["alternate"] != "https://arxiv.org/abs/0704.0001" || links["related"] != "https://doi.org/10.1103/physrevd.76.013009":
			t.Errorf("links %v", links)
		case len(e.Categories) != 1 || e.Categories[0].Term != "hep-ph":
			t.Errorf("categories %+v", e.Categories)
		case len(e.Authors) != 4 || e.Authors[2].Name != "P. M. Nadolsky":
			t.Errorf("authors %+v", e.Authors)
		case !strings.HasPrefix(e.Summary, "A fully differential calculation"):
			t.Errorf("summary %+v", e.Summary)
		case e.Updated != "2007-07-24T20:10:27Z" || e.Published != "2007-04-02T19:18:42Z":
			t.Errorf("updated %s, published %s; want the last and the first version's dates", e.Updated, e.Published)
		}
		if !strings.Contains(feed.Title, "categories hep-ph") {
			t.Errorf("title %q does not say what it follows", feed.Title)
		}

		etag, modified := rec.Header().Get("ETag"), rec.Header().Get("Last-Modified")
		if etag == "" || modified != "Tue, 24 Jul 2007 20:10:27 GMT" {
			t.Fatalf("ETag %q, Last-Modified %q", etag, modified)
		}
		for _, tc := range []struct {
			header []string
			want   int
		}{
			{[]string{"If-None-Match", etag}, http.StatusNotModified},
			{[]string{"If-None-Match", `"other", ` + etag}, http.StatusNotModified},
			{[]string{"If-None-Match", `"other"`}, http.StatusOK},
			{[]string{"If-Modified-Since", modified}, http.StatusNotModified},
			{[]string{"If-Modified-Since", "Mon, 23 Jul 2007 00:00:00 GMT"}, http.StatusOK},
			// If-None-Match decides when both are sent.
			{[]string{"If-None-Match", `"other"`, "If-Modified-Since", modified}, http.StatusOK},
		} {
			rec := get("/feeds/latest.atom?categories=hep-ph", tc.header...)
			if rec.Code != tc.want {
				t.Errorf("%v: status %d, want %d", tc.header, rec.Code, tc.want)
			}
			if tc.want == http.StatusNotModified && rec.Body.Len() > 0 {
				t.Errorf("%v: a 304 with a body", tc.header)
			}
		}

		for target, want := range map[string]string{
			"/feeds/latest.atom?from=yesterday": "from: not a date",
			"/feeds/latest.atom?sort=relevance": "sort: not a feed parameter",
		} {
			rec := get(target)
			if rec.Code != http.StatusBadRequest || !strings.HasPrefix(rec.Body.String(), want) {
				t.Errorf("GET %s: status %d, body %q; want 400 starting %q", target, rec.Code, rec.Body, want)
			}
		}
	})
}

// TestFeedEntryBoundsAuthors: a collaboration's entry names its first
// authors and how many more there are.
func TestFeedEntryBoundsAuthors(t *testing.T) {
	authors := make([]db.Authorship, feedAuthors)
	for i := range authors {
		authors[i] = db.Authorship{Position: i + 1, Name: "Author"}
	}
	e := feedEntry(&db.Paper{ID: 1, ArxivID: "2101.00001", Title: "A\n  collaboration", AuthorCount: 2832}, nil, authors)
	if n := len(e.entry.Authors); n != feedAuthors+1 || e.entry.Authors[n-1].Name != "and 2812 more" {
		t.Errorf("%d authors, last %+v; want %d and \"and 2812 more\"", n, e.entry.Authors[n-1], feedAuthors+1)
	}
	if e.entry.Title != "A collaboration" || e.entry.Updated != "2021-01-01T00:00:00Z" {
		t.Errorf("title %q, updated %s; want one line and the id's month", e.entry.Title, e.entry.Updated)
	}
}
