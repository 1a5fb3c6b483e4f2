package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/demo"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/ratelimit"
)

// frontendManifest is the front end's trusted-documents manifest, which
// `go generate ./frontend` builds from frontend/operations.
const frontendManifest = "../frontend/persisted-documents.json"

// pageSize is the page of papers the reference site shows.
const pageSize = 24

// boundedCodes are the codes with which an answer touching the
// 2,832-author paper may stop short instead of answering whole.
var boundedCodes = []string{codeNodeLimit, codeAnswerTooBig}

// TestFrontendDocuments runs every document of the front end's manifest,
// by its id as a trusted-documents server receives it, on the demo set
// under serve's default limits and rate limit, for real papers and
// researchers: the most prolific researcher, a typical one, one with
// profiles of the same name, the papers with most references and most
// citations, and the 2,832-author paper 1411.4413 and its authors. Every
// answer is whole and holds what the page shows (24 papers when there
// are as many); only an answer over 1411.4413 may instead stop at a
// bound with its code.
func TestFrontendDocuments(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the demo set")
	}
	docs, err := ReadTrustedDocuments(frontendManifest)
	if err != nil {
		t.Fatal(err)
	}
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importDemo(t, bdb)
		key, _, err := db.CreateAPIKey(t.Context(), bdb, "reader", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		limiter, err := ratelimit.NewMemory(ratelimit.DefaultLimit, 0)
		if err != nil {
			t.Fatal(err)
		}
		// As serve builds it on a writable database: the default limits
		// and budget, and the manifest as its only documents.
		h := newTestServer(t, bdb, Config{Writer: bdb, RateLimiter: limiter, TrustedDocuments: docs}).Handler()
		fe := &frontend{h: h, ids: manifestIDs(t), key: key, ran: map[string]bool{}}
		people := fe.paperPages(t)
		fe.researcherPages(t, people)
		fe.searchPages(t, people)
		fe.categoryPages(t)
		fe.signedIn(t, people)
		for name := range fe.ids {
			if !fe.ran[name] {
				t.Errorf("the manifest's %s was never run", name)
			}
		}
	})
}

// importDemo loads the demo set into bdb as `papergraph import demo` does,
// deriving once at the end.
func importDemo(t *testing.T, bdb *bun.DB) {
	t.Helper()
	jobs := demo.Imports()
	for i, o := range jobs {
		o.SkipDerive = i < len(jobs)-1
		if _, err := ingest.Import(t.Context(), bdb, o); err != nil {
			t.Fatalf("import %s: %v", o.Format.Name, err)
		}
	}
}

// manifestIDs maps the manifest's operation names to their ids.
func manifestIDs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(frontendManifest)
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Operations []struct{ ID, Name string } }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, op := range m.Operations {
		ids[op.Name] = op.ID
	}
	return ids
}

// frontend sends the manifest's documents as the site's pages do.
type frontend struct {
	h   http.Handler
	ids map[string]string
	key string
	// visitors counts the requests, each sent from an address of its own
	// as from another visitor of the site.
	visitors int
	ran      map[string]bool
}

// request is one document sent with its variables.
type request struct {
	doc  string
	vars map[string]any
	// signedIn sends the API key.
	signedIn bool
	// bounded allows the answer to stop at a bound (boundedCodes).
	bounded bool
}

// run sends r and decodes its data into out. It returns false when the
// answer stopped at a bound, which only a bounded request may; any other
// error fails the test.
func (fe *frontend) run(t *testing.T, r request, out any) bool {
	t.Helper()
	id, ok := fe.ids[r.doc]
	if !ok {
		t.Fatalf("no document %s in %s", r.doc, frontendManifest)
	}
	fe.ran[r.doc] = true
	fe.visitors++
	req := post(t, map[string]any{"documentId": "sha256:" + id, "operationName": r.doc, "variables": r.vars}, mediaJSON)
	req.RemoteAddr = fmt.Sprintf("198.51.100.%d:4000", fe.visitors%250+1)
	if r.signedIn {
		req.Header.Set("Authorization", "Bearer "+fe.key)
	}
	rec := serve(fe.h, req)
	var resp struct {
		Data   json.RawMessage
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
		Extensions struct{ Cost struct{ Cost, NodeCount int } }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("%s %v: status %d, body %.300q: %v", r.doc, r.vars, rec.Code, rec.Body.String(), err)
	}
	t.Logf("%s %v: cost %d, nodes %d", r.doc, r.vars, resp.Extensions.Cost.Cost, resp.Extensions.Cost.NodeCount)
	if len(resp.Errors) > 0 {
		for _, e := range resp.Errors {
			if !r.bounded || !slices.Contains(boundedCodes, e.Extensions.Code) {
				t.Fatalf("%s %v: status %d, error %s: %s", r.doc, r.vars, rec.Code, e.Extensions.Code, e.Message)
			}
		}
		t.Logf("%s %v: bounded: %s", r.doc, r.vars, resp.Errors[0].Extensions.Code)
		return false
	}
	if rec.Code != http.StatusOK {
		t.Fatalf("%s %v: status %d", r.doc, r.vars, rec.Code)
	}
	if err := json.Unmarshal(resp.Data, out); err != nil {
		t.Fatalf("%s %v: data %.300q: %v", r.doc, r.vars, resp.Data, err)
	}
	return true
}

// paperCard is the PaperCard fragment as the test reads it.
type paperCard struct {
	ID, Slug, Title string
	Abstract        *string
	Byline          *string
	Published       *time.Time
	Categories      []struct{ Code string }
	AuthorCount     int
	Authors         []struct {
		Position   int
		Name       string
		Researcher *struct{ ID, Slug string }
	}
}

// paperList is the PaperList fragment as the test reads it.
type paperList struct {
	TotalCount int
	PageInfo   struct {
		HasNextPage, HasPreviousPage bool
		EndCursor                    *string
	}
	Nodes []paperCard
}

// check fails t unless l is the page of first papers a pager shows, from
// the list's start or after a cursor: min(first, the rest) papers, each
// with a title and its byline's first 100 authors in order.
func (l paperList) check(t *testing.T, what string, first int, after bool) {
	t.Helper()
	if !after {
		if l.PageInfo.HasPreviousPage {
			t.Errorf("%s: hasPreviousPage on the first page", what)
		}
		if want := min(first, l.TotalCount); len(l.Nodes) != want {
			t.Errorf("%s: %d papers of %d, want %d", what, len(l.Nodes), l.TotalCount, want)
		}
		if want := l.TotalCount > first; l.PageInfo.HasNextPage != want {
			t.Errorf("%s: hasNextPage %v with %d of %d", what, l.PageInfo.HasNextPage, len(l.Nodes), l.TotalCount)
		}
	}
	for _, p := range l.Nodes {
		if p.Title == "" || p.Slug == "" || len(p.Categories) == 0 {
			t.Errorf("%s: paper %s without title, slug or categories", what, p.ID)
		}
		if want := min(p.AuthorCount, 100); len(p.Authors) != want {
			t.Errorf("%s: paper %s lists %d of its %d authors, want %d", what, p.Slug, len(p.Authors), p.AuthorCount, want)
		}
		for i, a := range p.Authors {
			if a.Position != i+1 || a.Name == "" {
				t.Errorf("%s: paper %s author %d is %+v", what, p.Slug, i+1, a)
				break
			}
		}
	}
}

// checkNewestFirst fails t unless l's papers are newest first, those with
// no date last.
func (l paperList) checkNewestFirst(t *testing.T, what string) {
	t.Helper()
	for i := 1; i < len(l.Nodes); i++ {
		a, b := l.Nodes[i-1].Published, l.Nodes[i].Published
		if a == nil && b != nil || a != nil && b != nil && a.Before(*b) {
			t.Errorf("%s: %s (%v) before %s (%v), want newest first", what, l.Nodes[i-1].Slug, a, l.Nodes[i].Slug, b)
		}
	}
}

// slugs returns the slugs of l's papers.
func (l paperList) slugs() []string {
	s := make([]string, len(l.Nodes))
	for i, p := range l.Nodes {
		s[i] = p.Slug
	}
	return s
}

// people are the researchers whose pages the test shows, by global id,
// found as a visitor finds them: on the bylines of paper pages.
type people struct {
	prolific string // S. Shelah, 169 papers
	typical  string // D. Kabat, 3 papers, profiles of the same name
	sameName string // J. Lee, 28 papers, 17 profiles of the same name
	cms      string // "The CMS", first on 1411.4413's byline, that paper only
	thomas   string // S. Thomas, 39 papers, 1411.4413 among them
}

// paperPage is the PaperPage document's answer as the test reads it.
type paperPage struct {
	Paper *struct {
		ID, Slug, Title string
		Abstract        *string
		AuthorCount     int
		PrimaryCategory *struct{ Code string }
		Categories      []struct{ Code, Name string }
		Authors         []struct {
			Position     int
			Name         string
			Affiliations []string
			Researcher   *struct{ ID string }
		}
		References, Citations paperList
	}
}

// paper shows the paper page of id with its authors after the position
// after, checks what every paper page shows, and returns it; ok is false
// when the answer stopped at a bound (only bounded may).
func (fe *frontend) paper(t *testing.T, id string, after int, bounded bool) (p paperPage, ok bool) {
	t.Helper()
	vars := map[string]any{"id": id, "authorsFirst": 100, "authorsAfter": after, "first": pageSize}
	if !fe.run(t, request{doc: "PaperPage", vars: vars, bounded: bounded}, &p) {
		return p, false
	}
	q := p.Paper
	if q == nil {
		t.Fatalf("paper %s: null", id)
	}
	if q.Title == "" || len(q.Categories) == 0 || q.PrimaryCategory == nil || q.PrimaryCategory.Code != q.Categories[0].Code {
		t.Errorf("paper %s: title %q, categories %+v, primary %+v", id, q.Title, q.Categories, q.PrimaryCategory)
	}
	if want := min(q.AuthorCount-after, 100); len(q.Authors) != want || want > 0 && q.Authors[0].Position != after+1 {
		t.Errorf("paper %s: %d authors after %d of %d, want %d from %d", id, len(q.Authors), after, q.AuthorCount, want, after+1)
	}
	q.References.check(t, id+" references", pageSize, false)
	q.Citations.check(t, id+" citations", pageSize, false)
	return p, true
}

// paperPages shows the pages of papers with the most references, the
// most citations, the most affiliations, a typical paper and the
// 2,832-author paper, and returns the researchers found on them.
func (fe *frontend) paperPages(t *testing.T) people {
	var ps people
	author := func(p paperPage, i int) string {
		if i >= len(p.Paper.Authors) || p.Paper.Authors[i].Researcher == nil {
			t.Fatalf("paper %s: no researcher at author %d", p.Paper.Slug, i)
		}
		return p.Paper.Authors[i].Researcher.ID
	}
	if p, _ := fe.paper(t, "hep-ph/9601208", 0, false); p.Paper.References.TotalCount < 100 {
		t.Errorf("hep-ph/9601208: %d references, want its 195", p.Paper.References.TotalCount)
	}
	if p, _ := fe.paper(t, "hep-th/9407087", 0, false); p.Paper.Citations.TotalCount < 400 || p.Paper.Abstract == nil {
		t.Errorf("hep-th/9407087: %d citations, want its 403, and its abstract", p.Paper.Citations.TotalCount)
	}
	p, _ := fe.paper(t, "1902.05884", 0, false)
	if len(p.Paper.Authors) == 0 || len(p.Paper.Authors[0].Affiliations) == 0 || p.Paper.Abstract == nil {
		t.Errorf("1902.05884: no affiliations or abstract: %+v", p.Paper.Authors)
	}
	p, _ = fe.paper(t, "math/9201238", 0, false)
	ps.prolific = author(p, 0)
	p, _ = fe.paper(t, "hep-th/9506182", 0, false)
	ps.typical = author(p, 0)
	p, _ = fe.paper(t, "cond-mat/9211016", 0, false)
	ps.sameName = author(p, 0)
	p, ok := fe.paper(t, "1411.4413", 0, true)
	if !ok {
		t.Fatal("1411.4413: the first page of its authors stopped at a bound")
	}
	if p.Paper.AuthorCount != 2832 {
		t.Errorf("1411.4413: %d authors, want 2,832", p.Paper.AuthorCount)
	}
	ps.cms = author(p, 0)
	if p, ok = fe.paper(t, "1411.4413", 2000, true); !ok {
		t.Fatal("1411.4413: its authors after 2,000 stopped at a bound")
	}
	ps.thomas = author(p, 35)
	return ps
}

// researcherPage is the ResearcherPage document's answer as the test
// reads it.
type researcherPage struct {
	Researcher *struct {
		ID, Name, Slug          string
		PaperCount              int
		AuthorPositions         []struct{ Count int }
		PositionKnownPaperCount int
		Fields                  []struct {
			Category struct{ Code string }
			Count    int
		}
		SameName       []struct{ ID string }
		MostCitedPaper *struct{ Slug string }
		Papers         paperList
	}
}

// researcher shows the page of papers of the researcher id after the
// cursor after (nil for the first page) in category (nil for all), checks
// what every researcher page shows, and returns it; ok is false when the
// answer stopped at a bound (only bounded may).
func (fe *frontend) researcher(t *testing.T, id string, after, category *string, bounded bool) (p researcherPage, ok bool) {
	t.Helper()
	vars := map[string]any{"id": id, "first": pageSize, "after": after, "category": category}
	if !fe.run(t, request{doc: "ResearcherPage", vars: vars, bounded: bounded}, &p) {
		return p, false
	}
	r := p.Researcher
	if r == nil {
		t.Fatalf("researcher %s: null", id)
	}
	known := 0
	for _, c := range r.AuthorPositions {
		known += c.Count
	}
	if r.Name == "" || len(r.AuthorPositions) != 4 || known != r.PositionKnownPaperCount || len(r.Fields) == 0 {
		t.Errorf("researcher %s: name %q, positions %+v of %d known, fields %+v", id, r.Name, r.AuthorPositions, r.PositionKnownPaperCount, r.Fields)
	}
	if category == nil && after == nil && r.Papers.TotalCount != r.PaperCount {
		t.Errorf("researcher %s: %d papers listed, paperCount %d", r.Slug, r.Papers.TotalCount, r.PaperCount)
	}
	r.Papers.check(t, r.Slug+" papers", pageSize, after != nil)
	r.Papers.checkNewestFirst(t, r.Slug+" papers")
	return p, true
}

// researcherPages shows the researchers' pages: the first page of each,
// the next page and a field's papers of the prolific one, and their
// co-author network widgets.
func (fe *frontend) researcherPages(t *testing.T, ps people) {
	for _, c := range []struct {
		id            string
		min, sameName int // the fewest papers and profiles of the same name
		bounded       bool
	}{
		{ps.prolific, 169, 0, false},
		{ps.typical, 3, 1, false},
		{ps.sameName, 28, 10, false},
		{ps.cms, 1, 0, true},
		{ps.thomas, 24, 0, true},
	} {
		if p, ok := fe.researcher(t, c.id, nil, nil, c.bounded); ok {
			r := p.Researcher
			if r.PaperCount < c.min || len(r.SameName) < c.sameName {
				t.Errorf("researcher %s: %d papers, %d of the same name; want at least %d and %d", r.Slug, r.PaperCount, len(r.SameName), c.min, c.sameName)
			}
		}
		fe.network(t, c.id, c.bounded)
	}
	first, _ := fe.researcher(t, ps.prolific, nil, nil, false)
	r := first.Researcher
	if r.MostCitedPaper == nil {
		t.Errorf("researcher %s: no most cited paper", r.Slug)
	}
	next, _ := fe.researcher(t, ps.prolific, r.Papers.PageInfo.EndCursor, nil, false)
	if got := next.Researcher.Papers.slugs(); len(got) != pageSize || slices.ContainsFunc(got, func(s string) bool { return slices.Contains(r.Papers.slugs(), s) }) {
		t.Errorf("researcher %s: page 2 is %v after page 1 %v", r.Slug, got, r.Papers.slugs())
	}
	field := r.Fields[0]
	in, _ := fe.researcher(t, ps.prolific, nil, &field.Category.Code, false)
	if got := in.Researcher.Papers; got.TotalCount != field.Count {
		t.Errorf("researcher %s in %s: %d papers, fields says %d", r.Slug, field.Category.Code, got.TotalCount, field.Count)
	}
	for _, p := range in.Researcher.Papers.Nodes {
		if !slices.ContainsFunc(p.Categories, func(c struct{ Code string }) bool { return c.Code == field.Category.Code }) {
			t.Errorf("researcher %s in %s: paper %s is in %+v", r.Slug, field.Category.Code, p.Slug, p.Categories)
		}
	}
}

// network shows the researcher's co-author network widget: the
// researcher at its centre, at most 100 researchers, edges among them.
func (fe *frontend) network(t *testing.T, id string, bounded bool) {
	t.Helper()
	var w struct {
		Researcher struct {
			Coauthors struct {
				TotalCount int
				Nodes      []struct{ SharedPaperCount int }
			}
			Network struct {
				Nodes []struct {
					Depth      int
					Researcher struct{ ID string }
				}
				Edges []struct{ Source, Target string }
			}
		}
	}
	if !fe.run(t, request{doc: "ResearcherNetwork", vars: map[string]any{"id": id, "maxNodes": 100}, bounded: bounded}, &w) {
		return
	}
	n := w.Researcher.Network
	if len(n.Nodes) == 0 || len(n.Nodes) > 100 || n.Nodes[0].Depth != 0 || n.Nodes[0].Researcher.ID != id {
		t.Fatalf("network of %s: %d nodes, the first %+v", id, len(n.Nodes), n.Nodes[:min(1, len(n.Nodes))])
	}
	if c := w.Researcher.Coauthors; len(c.Nodes) != min(10, c.TotalCount) {
		t.Errorf("network of %s: %d co-authors of %d", id, len(c.Nodes), c.TotalCount)
	}
	ids := map[string]bool{}
	for _, x := range n.Nodes {
		ids[x.Researcher.ID] = true
	}
	for _, e := range n.Edges {
		if !ids[e.Source] || !ids[e.Target] {
			t.Errorf("network of %s: edge %+v leaves the nodes", id, e)
		}
	}
}

// facetedList is a page of papers with its facets, as SearchPage and
// CategoryPage ask for them.
type facetedList struct {
	paperList
	TotalCountIsExact bool
	Facets            struct {
		Categories []struct{ Count int }
		Years      []struct{ Count int }
	}
}

// checkYears fails t unless the years facet counts every paper of l.
func (l facetedList) checkYears(t *testing.T, what string) {
	t.Helper()
	n := 0
	for _, y := range l.Facets.Years {
		n += y.Count
	}
	if n != l.TotalCount {
		t.Errorf("%s: the years count %d papers of %d", what, n, l.TotalCount)
	}
}

// searchPages shows the search page for words, for filters alone (with
// its second page) and for a researcher's papers, and the search box's
// completions.
func (fe *frontend) searchPages(t *testing.T, ps people) {
	search := func(vars map[string]any) facetedList {
		t.Helper()
		var s struct{ SearchPapers facetedList }
		vars["first"] = pageSize
		fe.run(t, request{doc: "SearchPage", vars: vars}, &s)
		l := s.SearchPapers
		what := fmt.Sprintf("search %v", vars)
		l.check(t, what, pageSize, vars["after"] != nil)
		if len(l.Facets.Categories) == 0 {
			t.Errorf("%s: no category facets", what)
		}
		if l.TotalCountIsExact {
			l.checkYears(t, what)
		}
		return l
	}
	if l := search(map[string]any{"query": "black hole entropy"}); l.TotalCount < pageSize {
		t.Errorf("search black hole entropy: %d papers", l.TotalCount)
	}
	browse := map[string]any{"filter": map[string]any{"categories": []string{"hep-th"}}, "sort": "NEWEST"}
	first := search(browse)
	first.checkNewestFirst(t, "browse hep-th")
	browse["after"] = first.PageInfo.EndCursor
	if next := search(browse); len(next.Nodes) != pageSize || next.Nodes[0].Slug == first.Nodes[0].Slug {
		t.Errorf("browse hep-th: page 2 %v after page 1 %v", next.slugs(), first.slugs())
	}
	if l := search(map[string]any{"filter": map[string]any{"researcher": ps.prolific}}); l.TotalCount != 169 {
		t.Errorf("search by researcher %s: %d papers, want 169", ps.prolific, l.TotalCount)
	}
	var s struct {
		Suggest []struct {
			Type, Label string
			Target      struct {
				Typename string `json:"__typename"`
			}
		}
	}
	fe.run(t, request{doc: "SearchSuggestions", vars: map[string]any{"prefix": "witt"}}, &s)
	if len(s.Suggest) == 0 || s.Suggest[0].Label == "" || s.Suggest[0].Target.Typename == "" {
		t.Errorf("suggestions for witt: %+v", s.Suggest)
	}
}

// categoryPages shows the pages of a large category and a small one.
func (fe *frontend) categoryPages(t *testing.T) {
	for _, code := range []string{"hep-th", "math.LO"} {
		var c struct {
			Category *struct {
				Code, Name     string
				TopResearchers []struct {
					PaperCount int
					Researcher struct{ ID string }
				}
				Papers facetedList
			}
		}
		fe.run(t, request{doc: "CategoryPage", vars: map[string]any{"code": code, "first": pageSize}}, &c)
		if c.Category == nil || c.Category.Name == "" || len(c.Category.TopResearchers) != 10 {
			t.Fatalf("category %s: %+v", code, c.Category)
		}
		l := c.Category.Papers
		l.check(t, code, pageSize, false)
		l.checkNewestFirst(t, code)
		l.checkYears(t, code)
		if l.TotalCount < pageSize {
			t.Errorf("category %s: %d papers", code, l.TotalCount)
		}
	}
}

// feedPage is the Feed document's answer as the test reads it.
type feedPage struct {
	Viewer *struct {
		Name      string
		Following struct {
			Researchers []struct{ ID string }
			Categories  []struct{ Code string }
		}
		Feed paperList
	}
}

// signedIn follows a researcher and a category, shows the feed, and
// unfollows them again; without a key the feed has no viewer.
func (fe *frontend) signedIn(t *testing.T, ps people) {
	feed := func(signedIn bool) feedPage {
		t.Helper()
		var f feedPage
		fe.run(t, request{doc: "Feed", vars: map[string]any{"first": pageSize}, signedIn: signedIn}, &f)
		return f
	}
	if f := feed(false); f.Viewer != nil {
		t.Errorf("feed without a key: viewer %+v", f.Viewer)
	}
	var done map[string]any
	fe.run(t, request{doc: "FollowResearcher", vars: map[string]any{"id": ps.typical}, signedIn: true}, &done)
	fe.run(t, request{doc: "FollowCategory", vars: map[string]any{"code": "math.LO"}, signedIn: true}, &done)
	f := feed(true)
	if f.Viewer == nil {
		t.Fatal("feed: no viewer with a key")
	}
	v := f.Viewer
	if len(v.Following.Researchers) != 1 || v.Following.Researchers[0].ID != ps.typical ||
		len(v.Following.Categories) != 1 || v.Following.Categories[0].Code != "math.LO" {
		t.Errorf("feed: following %+v", v.Following)
	}
	v.Feed.check(t, "feed", pageSize, false)
	v.Feed.checkNewestFirst(t, "feed")
	if v.Feed.TotalCount < pageSize {
		t.Errorf("feed: %d papers", v.Feed.TotalCount)
	}
	fe.run(t, request{doc: "UnfollowResearcher", vars: map[string]any{"id": ps.typical}, signedIn: true}, &done)
	fe.run(t, request{doc: "UnfollowCategory", vars: map[string]any{"code": "math.LO"}, signedIn: true}, &done)
	if f := feed(true); f.Viewer == nil || len(f.Viewer.Following.Researchers)+len(f.Viewer.Following.Categories) != 0 || f.Viewer.Feed.TotalCount != 0 {
		t.Errorf("feed after unfollowing: %+v", f.Viewer)
	}
}
