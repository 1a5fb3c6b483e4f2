package server

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// sitemapDoc is a sitemap index or a sitemap file as a crawler reads it.
type sitemapDoc struct {
	XMLName xml.Name
	Entries []struct {
		Loc     string `xml:"loc"`
		Lastmod string `xml:"lastmod"`
	} `xml:"sitemap"`
	URLs []struct {
		Loc     string `xml:"loc"`
		Lastmod string `xml:"lastmod"`
	} `xml:"url"`
}

func readSitemap(t *testing.T, rec *httptest.ResponseRecorder) sitemapDoc {
	t.Helper()
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/xml") {
		t.Fatalf("status %d, %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var doc sitemapDoc
	if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, rec.Body)
	}
	if doc.XMLName.Space != sitemapNS {
		t.Errorf("root %v, want the namespace %s", doc.XMLName, sitemapNS)
	}
	return doc
}

// TestSitemap splits a sitemap into files of three URLs, read two a
// statement, and checks that the files the index lists hold every paper
// and researcher page once, in the front end's URL forms, with the dates
// of the data, in statements that grow with the file, not the database.
func TestSitemap(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Kaggle, Paths: []string{"../ingest/testdata/kaggle.jsonl"}})
		if err != nil || !sum.OK() {
			t.Fatalf("import: %+v, %v", sum, err)
		}
		statements := &db.StatementCounter{}
		h := newTestServer(t, bdb.WithQueryHook(statements), Config{
			SiteURL: "https://papers.example.org/", sitemapSize: 3, sitemapBatch: 2,
		}).Handler()
		get := func(target string) (*httptest.ResponseRecorder, int) {
			before := statements.Count()
			rec := serve(h, httptest.NewRequest(http.MethodGet, target, nil))
			return rec, int(statements.Count() - before)
		}

		rec, n := get("/sitemap.xml")
		index := readSitemap(t, rec)
		if index.XMLName.Local != "sitemapindex" || n != 2 {
			t.Fatalf("root %s in %d statements, want sitemapindex in 2", index.XMLName.Local, n)
		}
		urls := map[string]string{}
		for _, e := range index.Entries {
			path, ok := strings.CutPrefix(e.Loc, "https://papers.example.org/sitemaps/")
			if !ok {
				t.Fatalf("index entry %q is not under the site's /sitemaps/", e.Loc)
			}
			rec, n := get("/sitemaps/" + path)
			file := readSitemap(t, rec)
			if file.XMLName.Local != "urlset" || len(file.URLs) == 0 || len(file.URLs) > 3 {
				t.Fatalf("%s: root %s with %d URLs, want urlset with 1 to 3", path, file.XMLName.Local, len(file.URLs))
			}
			// A batch per two URLs, and the one that finds the end.
			if want := len(file.URLs)/2 + 1; n != want {
				t.Errorf("%s: %d URLs in %d statements, want %d", path, len(file.URLs), n, want)
			}
			newest := ""
			for _, u := range file.URLs {
				if _, dup := urls[u.Loc]; dup {
					t.Errorf("%s lists %s twice", path, u.Loc)
				}
				urls[u.Loc] = u.Lastmod
				newest = max(newest, u.Lastmod)
			}
			if e.Lastmod != newest {
				t.Errorf("index says %s changed at %q, its newest URL at %q", path, e.Lastmod, newest)
			}
		}
		var papers []db.Paper
		if err := bdb.NewSelect().Model(&papers).Where("arxiv_id IS NOT NULL").Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		var researchers []db.Researcher
		if err := bdb.NewSelect().Model(&researchers).Where("paper_count > 0").Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		if len(urls) != len(papers)+len(researchers) || len(papers) != 5 {
			t.Errorf("the sitemap lists %d URLs, want the %d papers and %d researchers", len(urls), len(papers), len(researchers))
		}
		// The reference site's forms: /papers/<arXiv id>-<title slug>,
		// /researchers/<id>-<name slug>.
		paper := "https://papers.example.org/papers/0704.0001-calculation-of-prompt-diphoton-production-cross-sections-at-tevatron-and-lhc"
		lastmod, ok := urls[paper]
		if !ok {
			t.Errorf("no %s in %v", paper, slices.Sorted(func(yield func(string) bool) {
				for u := range urls {
					yield(u)
				}
			}))
		}
		for _, p := range papers {
			if p.ArxivID == "0704.0001" && lastmod != p.Updated.UTC().Format(time.RFC3339) {
				t.Errorf("0704.0001's lastmod %q, want its latest version's date %v", lastmod, p.Updated)
			}
		}
		for _, r := range researchers {
			u := "https://papers.example.org/researchers/" + strconv.FormatInt(r.ID, 10) + "-" + r.Slug
			if _, ok := urls[u]; !ok || r.Slug == "" {
				t.Errorf("researcher %d %q: no %s", r.ID, r.Name, u)
			}
		}

		for _, target := range []string{"/sitemaps/papers-0.xml", "/sitemaps/papers-01.xml", "/sitemaps/people-1.xml",
			"/sitemaps/papers-1", "/sitemaps/papers-99.xml", "/sitemaps/researchers--1.xml"} {
			if rec, _ := get(target); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "/sitemap.xml") {
				t.Errorf("GET %s: %d %q, want a 404 that points at /sitemap.xml", target, rec.Code, rec.Body)
			}
		}
	})
}

// TestSitemapWithoutSiteURL: a server that does not know the front end's
// base URL cannot make its page URLs, and says why.
func TestSitemapWithoutSiteURL(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	for _, target := range []string{"/sitemap.xml", "/sitemaps/papers-1.xml"} {
		rec := serve(h, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "--site-url") {
			t.Errorf("GET %s: %d %q, want a 404 naming --site-url", target, rec.Code, rec.Body)
		}
	}
}

func TestParseSiteURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://papers.example.org":         "https://papers.example.org",
		"https://papers.example.org/":        "https://papers.example.org",
		"http://localhost:3000/graph/":       "http://localhost:3000/graph",
		"https://example.org/a%20b/":         "https://example.org/a%20b",
		"ftp://example.org":                  "",
		"example.org":                        "",
		"/relative":                          "",
		"https://example.org/?utm=1":         "",
		"https://example.org/#top":           "",
		"https://user:secret@example.org":    "",
		"https://":                           "",
		"https://example.org/%zz":            "",
		"https://papers.example.org/sitemap": "https://papers.example.org/sitemap",
	} {
		got, err := ParseSiteURL(in)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("ParseSiteURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := New(Config{DB: dbtest.Open(t, dbtest.NewMigrated(t, "sqlite")), SiteURL: "papers.example.org"}); err == nil ||
		!strings.Contains(err.Error(), "papers.example.org") {
		t.Errorf("New with a site URL without a scheme: %v, want an error naming it", err)
	}
}

// failAfter is a query hook that lets n statements through and cancels
// the ones after them, as a database lost in the middle of a file would.
type failAfter struct{ n *atomic.Int64 }

func (f failAfter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	if f.n.Add(-1) >= 0 {
		return ctx
	}
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	return ctx
}

func (failAfter) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestSitemapCutShort: a sitemap file whose read fails after its first
// batch has been sent ends with a cut connection, never with a closing
// tag that would make a crawler take the part for the whole.
func TestSitemapCutShort(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Kaggle, Paths: []string{"../ingest/testdata/kaggle.jsonl"}})
		if err != nil || !sum.OK() {
			t.Fatalf("import: %+v, %v", sum, err)
		}
		left := &atomic.Int64{}
		srv := httptest.NewServer(newTestServer(t, bdb.WithQueryHook(failAfter{left}), Config{
			SiteURL: "https://papers.example.org", sitemapBatch: 2,
		}).Handler())
		defer srv.Close()
		for _, c := range []struct {
			statements int64
			whole      bool
		}{{3, true}, {1, false}} {
			left.Store(c.statements)
			resp, err := http.Get(srv.URL + "/sitemaps/papers-1.xml")
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			closed := strings.HasSuffix(string(body), "</urlset>\n")
			if resp.StatusCode != http.StatusOK || closed != c.whole || (err == nil) != c.whole {
				t.Errorf("%d statements allowed: status %d, closing tag %v, read error %v; want a whole file: %v\n%s",
					c.statements, resp.StatusCode, closed, err, c.whole, body)
			}
		}
	})
}
