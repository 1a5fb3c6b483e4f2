package server

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
)

// The sitemaps protocol's bound on the URLs of one file, and how many of
// them a sitemap file reads per statement: its memory is one batch, and
// the statements it sends are its URLs over sitemapBatch, plus one.
const (
	sitemapMaxURLs = 50000
	sitemapBatch   = 5000
)

// sitemapNS is the sitemaps protocol's XML namespace.
const sitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"

// ParseSiteURL checks the front end's base URL (serve --site-url): an
// absolute http or https URL with no query or fragment. It returns it
// without a trailing slash, as the sitemap's URLs are made of it.
func ParseSiteURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("site URL %q: want an absolute http or https URL without a query or fragment", s)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// sitemaps serves the sitemap of the front end at site: its index and
// its files of at most size URLs each, read batch URLs a statement.
type sitemaps struct {
	db          bun.IDB
	log         *slog.Logger
	site        string
	size, batch int
}

// noSite answers the sitemap's routes of a server started without
// --site-url: it does not know the front end's URLs.
func (s *sitemaps) noSite(w http.ResponseWriter) bool {
	if s.site != "" {
		return false
	}
	http.Error(w, "no sitemap: this server was started without --site-url, the front end's base URL its pages are under", http.StatusNotFound)
	return true
}

// index serves GET /sitemap.xml: a sitemap index of the non-empty paper
// and researcher files, each with the newest date of its entries.
func (s *sitemaps) index(w http.ResponseWriter, r *http.Request) {
	if s.noSite(w) {
		return
	}
	var files [2][]db.SitemapFile
	_, err := spendPoints(r.Context(), exportPoints)
	for i, kind := range []db.SitemapKind{db.SitemapPapers, db.SitemapResearchers} {
		if err == nil {
			files[i], err = db.SitemapFiles(r.Context(), s.db, kind, s.size)
		}
	}
	if err != nil {
		exportError(w, failure(r, s.log, "sitemap index", err))
		return
	}
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	bw := bufio.NewWriter(w)
	bw.WriteString(xml.Header + `<sitemapindex xmlns="` + sitemapNS + `">` + "\n")
	for i, kind := range []db.SitemapKind{db.SitemapPapers, db.SitemapResearchers} {
		for _, f := range files[i] {
			writeSitemapEntry(bw, "sitemap", s.site+"/sitemaps/"+string(kind)+"-"+strconv.FormatInt(f.Number, 10)+".xml", f.Lastmod)
		}
	}
	bw.WriteString("</sitemapindex>\n")
	bw.Flush() //nolint:errcheck // a client gone is not an error here
}

// file serves GET /sitemaps/{file}: papers-N.xml or researchers-N.xml,
// streamed: each batch is sent before the next is read. A file the index
// does not list is a 404. An error after the first batch cuts the
// connection, so that a crawler never takes a truncated file for a whole
// one.
func (s *sitemaps) file(w http.ResponseWriter, r *http.Request) {
	if s.noSite(w) {
		return
	}
	kind, n, ok := parseSitemapFile(r.PathValue("file"))
	if !ok {
		http.Error(w, "no sitemap file "+r.PathValue("file")+": the files are papers-N.xml and researchers-N.xml, listed in /sitemap.xml", http.StatusNotFound)
		return
	}
	lo, hi := (n-1)*int64(s.size), n*int64(s.size)
	_, err := spendPoints(r.Context(), exportPoints)
	var batch []db.SitemapEntry
	if err == nil {
		batch, err = db.SitemapEntries(r.Context(), s.db, kind, lo, hi, s.batch)
	}
	if err != nil {
		exportError(w, failure(r, s.log, "sitemap", err))
		return
	}
	if len(batch) == 0 {
		http.Error(w, "no sitemap file "+r.PathValue("file")+": it would be empty; /sitemap.xml lists the files there are", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	bw := bufio.NewWriter(w)
	bw.WriteString(xml.Header + `<urlset xmlns="` + sitemapNS + `">` + "\n")
	for len(batch) > 0 {
		for _, e := range batch {
			writeSitemapEntry(bw, "url", s.entryURL(kind, e), e.Lastmod)
		}
		if len(batch) < s.batch {
			break
		}
		// Each batch reaches the client before the next is read; a write
		// that fails means the client is gone.
		if err := bw.Flush(); err != nil {
			return
		}
		if err := http.NewResponseController(w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return
		}
		if batch, err = db.SitemapEntries(r.Context(), s.db, kind, batch[len(batch)-1].ID, hi, s.batch); err != nil {
			failure(r, s.log, "sitemap", err)
			bw.Flush()                  //nolint:errcheck // the connection is cut next
			panic(http.ErrAbortHandler) // the status is sent: only a cut connection says the file is not whole
		}
	}
	bw.WriteString("</urlset>\n")
	bw.Flush() //nolint:errcheck // a client gone is not an error here
}

// entryURL is the front end's page of e: /papers/<arXiv id>-<title slug>
// or /researchers/<id>-<name slug>.
func (s *sitemaps) entryURL(kind db.SitemapKind, e db.SitemapEntry) string {
	if kind == db.SitemapPapers {
		return s.site + "/papers/" + arxivid.Slug(e.ArxivID, e.Title)
	}
	seg := strconv.FormatInt(e.ID, 10)
	if e.Slug != "" {
		seg += "-" + e.Slug
	}
	return s.site + "/researchers/" + seg
}

// parseSitemapFile reads a sitemap file's name, kind-N.xml with N a
// positive number written without leading zeros.
func parseSitemapFile(name string) (db.SitemapKind, int64, bool) {
	base, ok := strings.CutSuffix(name, ".xml")
	i := strings.LastIndexByte(base, '-')
	if !ok || i < 0 {
		return "", 0, false
	}
	kind, num := db.SitemapKind(base[:i]), base[i+1:]
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != num || n > 1<<40 ||
		(kind != db.SitemapPapers && kind != db.SitemapResearchers) {
		return "", 0, false
	}
	return kind, n, true
}

// writeSitemapEntry writes <elem><loc>loc</loc><lastmod>…</lastmod></elem>,
// without lastmod when it is zero.
func writeSitemapEntry(w io.Writer, elem, loc string, lastmod time.Time) {
	io.WriteString(w, "  <"+elem+"><loc>")
	xml.EscapeText(w, []byte(loc)) //nolint:errcheck // bufio keeps the first error, Flush reports it
	io.WriteString(w, "</loc>")
	if !lastmod.IsZero() {
		io.WriteString(w, "<lastmod>"+lastmod.UTC().Format(time.RFC3339)+"</lastmod>")
	}
	io.WriteString(w, "</"+elem+">\n")
}
