package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/resolvers"
)

// A feed holds the newest feedEntries papers that match its filters; an
// entry names the first feedAuthors authors of its byline and says how
// many more there are, so that a collaboration of thousands stays small.
const (
	feedEntries = 50
	feedAuthors = 20
)

// feedParams are the parameters /feeds/latest.atom takes: the filters of
// /export/search. Its order is always newest first.
var feedParams = []string{"query", "categories", "from", "to", "researcher", "institution", "hasDoi", "mode"}

// Atom 1.0 (RFC 4287) as the feed writes it.
type (
	atomFeed struct {
		XMLName   xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
		ID        string      `xml:"id"`
		Title     string      `xml:"title"`
		Subtitle  string      `xml:"subtitle,omitempty"`
		Updated   string      `xml:"updated"`
		Links     []atomLink  `xml:"link"`
		Author    atomPerson  `xml:"author"`
		Generator string      `xml:"generator"`
		Entries   []atomEntry `xml:"entry"`
	}
	atomEntry struct {
		ID         string         `xml:"id"`
		Title      string         `xml:"title"`
		Updated    string         `xml:"updated"`
		Published  string         `xml:"published,omitempty"`
		Authors    []atomPerson   `xml:"author"`
		Links      []atomLink     `xml:"link"`
		Categories []atomCategory `xml:"category"`
		Summary    *atomText      `xml:"summary"`
	}
	atomPerson struct {
		Name string `xml:"name"`
		URI  string `xml:"uri,omitempty"`
	}
	atomLink struct {
		Rel  string `xml:"rel,attr"`
		Href string `xml:"href,attr"`
		Type string `xml:"type,attr,omitempty"`
	}
	atomCategory struct {
		Term  string `xml:"term,attr"`
		Label string `xml:"label,attr,omitempty"`
	}
	atomText struct {
		Type string `xml:"type,attr"`
		Text string `xml:",chardata"`
	}
)

// latestFeed serves GET /feeds/latest.atom: the newest papers matching the
// filters of /export/search (query, categories, from, to, researcher,
// institution, hasDoi, mode), as an Atom 1.0 feed. It answers If-None-Match and
// If-Modified-Since with 304 when the feed has not changed. Each request
// spends one rate-limit point, like an export, 304 or not.
func latestFeed(bdb bun.IDB, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for name := range q {
			if !slices.Contains(feedParams, name) {
				http.Error(w, name+": not a feed parameter (the feed takes "+strings.Join(feedParams, ", ")+")", http.StatusBadRequest)
				return
			}
		}
		query, filter, _, err := searchParams(q)
		var feed *atomFeed
		var updated time.Time
		if err == nil {
			feed, updated, err = buildFeed(r.Context(), bdb, q, query, filter, feedSelf(r))
		}
		if answerError(w, r, log, "feed", err) {
			return
		}
		body, err := xml.MarshalIndent(feed, "", "  ")
		if err != nil {
			exportError(w, failure(r, log, "feed", err))
			return
		}
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:12]) + `"`
		h := w.Header()
		h.Set("ETag", etag)
		h.Set("Last-Modified", updated.UTC().Format(http.TimeFormat))
		h.Set("Cache-Control", "public, max-age=300")
		if notModified(r, etag, updated) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", "application/atom+xml; charset=utf-8")
		w.Write([]byte(xml.Header)) //nolint:errcheck // a client gone is not an error here
		w.Write(body)               //nolint:errcheck // likewise
	})
}

// notModified reports whether the client's copy, named by its
// If-None-Match (which wins when present) or If-Modified-Since, is current.
func notModified(r *http.Request, etag string, updated time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for tag := range strings.SplitSeq(inm, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == etag || tag == "*" {
				return true
			}
		}
		return false
	}
	if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil {
		return !updated.Truncate(time.Second).After(ims)
	}
	return false
}

// feedSelf is the feed's own URL, its parameters in a canonical order.
func feedSelf(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	u := url.URL{Scheme: scheme, Host: r.Host, Path: "/feeds/latest.atom", RawQuery: r.URL.Query().Encode()}
	return u.String()
}

// buildFeed reads the newest papers that match and makes the feed, and
// returns with it when it last changed: its newest entry's update. It
// takes four statements whatever the filters: the search, the papers,
// their categories and the first authors of their bylines. Its mode
// parameter (q's) is that of the export: SEMANTIC's newest are those of
// the query's nearest papers, HYBRID's those of its keyword matches.
func buildFeed(ctx context.Context, bdb bun.IDB, q map[string][]string, query *string, filter *model.PaperFilter, self string) (*atomFeed, time.Time, error) {
	newest := model.PaperSearchSortNewest
	s, order, err := resolvers.SearchArgs(ctx, bdb, query, filter, &newest)
	if err == nil {
		s, err = modeSearch(ctx, bdb, q, s, deref(query), order)
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	if _, err := spendPoints(ctx, exportPoints); err != nil {
		return nil, time.Time{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	page, err := db.SearchPapers(ctx, bdb, s, db.PageArgs{First: feedEntries, Order: order})
	if err != nil {
		return nil, time.Time{}, err
	}
	ids := make([]int64, len(page.Items))
	for i, p := range page.Items {
		ids[i] = p.ID
	}
	papers, err := db.PapersByIDs(ctx, bdb, ids)
	if err != nil {
		return nil, time.Time{}, err
	}
	cats, err := db.CategoriesByPaperIDs(ctx, bdb, ids)
	if err != nil {
		return nil, time.Time{}, err
	}
	authors, err := db.AuthorshipsByPaperIDs(ctx, bdb, ids, db.Window{First: feedAuthors})
	if err != nil {
		return nil, time.Time{}, err
	}
	u, _ := url.Parse(self)
	feed := &atomFeed{
		ID:        "tag:papergraph,2026:feeds/latest?" + u.RawQuery,
		Title:     feedTitle(u.Query()),
		Links:     []atomLink{{Rel: "self", Href: self, Type: "application/atom+xml"}},
		Author:    atomPerson{Name: "papergraph"},
		Generator: "papergraph",
	}
	var updated time.Time
	for _, id := range ids {
		p := papers[id]
		if p == nil {
			continue
		}
		e := feedEntry(p, cats[id], authors[id])
		feed.Entries = append(feed.Entries, e.entry)
		if e.updated.After(updated) {
			updated = e.updated
		}
	}
	if updated.IsZero() {
		updated = time.Unix(0, 0) // no entries: a feed that never changed
	}
	feed.Updated = updated.UTC().Format(time.RFC3339)
	return feed, updated, nil
}

// feedTitle says what the feed follows.
func feedTitle(q url.Values) string {
	var parts []string
	for _, name := range []string{"query", "categories", "researcher", "institution", "from", "to"} {
		if v := q.Get(name); v != "" {
			parts = append(parts, name+" "+v)
		}
	}
	if len(parts) == 0 {
		return "papergraph: latest papers"
	}
	return "papergraph: latest papers, " + strings.Join(parts, ", ")
}

type datedEntry struct {
	entry   atomEntry
	updated time.Time
}

// feedEntry is a paper as an entry. Its id is the paper's arXiv abstract
// page, which stays the same from version to version; updated is the
// newest version's date (or, for a paper without dates, the month its
// arXiv id names).
func feedEntry(p *db.Paper, cats []db.Category, authors []db.Authorship) datedEntry {
	abs := "https://arxiv.org/abs/" + p.ArxivID
	id := abs
	if p.ArxivID == "" {
		id = "tag:papergraph,2026:paper/" + strconv.FormatInt(p.ID, 10)
		abs = ""
	}
	published := p.Published
	if published.IsZero() && p.ArxivID != "" {
		published = arxivid.Month(p.ArxivID)
	}
	updated := p.Updated
	if published.After(updated) {
		updated = published
	}
	if updated.IsZero() {
		updated = time.Unix(0, 0)
	}
	e := atomEntry{ID: id, Title: oneLine(p.Title), Updated: updated.UTC().Format(time.RFC3339)}
	if !published.IsZero() {
		e.Published = published.UTC().Format(time.RFC3339)
	}
	for _, a := range authors {
		e.Authors = append(e.Authors, atomPerson{Name: a.Name})
	}
	if more := p.AuthorCount - len(authors); more > 0 {
		e.Authors = append(e.Authors, atomPerson{Name: fmt.Sprintf("and %d more", more)})
	}
	if abs != "" {
		e.Links = append(e.Links, atomLink{Rel: "alternate", Href: abs, Type: "text/html"})
	}
	if p.DOI != "" {
		e.Links = append(e.Links, atomLink{Rel: "related", Href: "https://doi.org/" + p.DOI})
	}
	for _, c := range cats {
		e.Categories = append(e.Categories, atomCategory{Term: c.Code, Label: c.Name})
	}
	if p.Abstract != "" {
		e.Summary = &atomText{Type: "text", Text: strings.TrimSpace(p.Abstract)}
	}
	return datedEntry{entry: e, updated: updated}
}

// oneLine folds the line breaks of a title as printed.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
