// Package model holds the Go types GraphQL shows: stored rows as GraphQL
// shows them (Paper, Researcher and Institution wrap the db package's
// models, which other types such as Category use directly), byline
// entries with their role, counts, and connections.
package model

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
)

// Authorship is a byline entry with its role.
type Authorship struct {
	db.Authorship
	Role *AuthorRole
	// Window is the stretch of the byline the entry was read in; its
	// affiliations are read for the same stretch.
	Window db.Window
}

// ResearcherField counts a researcher's papers in one category.
type ResearcherField struct {
	Category *db.Category
	Count    int
}

// Coauthor is a co-author with the number of papers shared.
type Coauthor struct {
	Researcher       *Researcher
	SharedPaperCount int
}

// PageInfo is where a page lies in its connection.
type PageInfo struct {
	HasNextPage     bool
	HasPreviousPage bool
	StartCursor     *string
	EndCursor       *string
}

// PaperEdge is a paper with its cursor.
type PaperEdge struct {
	Cursor string
	Node   *Paper
}

// PaperConnection is a page of papers. The total and the facets are
// counted only when a client asks for them, and the page is read only
// when it asks for edges, nodes or pageInfo.
type PaperConnection struct {
	Edges    []*PaperEdge
	Nodes    []*Paper
	PageInfo *PageInfo
	Total    func(context.Context) (int, error)
	// Exact, when not nil, tells whether Total is exact (a search's count
	// stops at a cap); nil is exact.
	Exact func(context.Context) (bool, error)
	// FacetCounts are read by Facets.
	FacetCounts *PaperFacets
}

// TotalCount counts the papers of the whole list.
func (c *PaperConnection) TotalCount(ctx context.Context) (int, error) { return c.Total(ctx) }

// TotalCountIsExact tells whether TotalCount is the exact length of the
// list rather than a lower bound.
func (c *PaperConnection) TotalCountIsExact(ctx context.Context) (bool, error) {
	if c.Exact == nil {
		return true, nil
	}
	return c.Exact(ctx)
}

// Facets are the counts over the whole list, each read when asked for.
func (c *PaperConnection) Facets() *PaperFacets { return c.FacetCounts }

// MaxFacets is the most rows a facet returns (arXiv has about 150
// categories; papers span decades): the cost calculator's bound.
const MaxFacets = 200

// PaperFacets counts the papers of a whole list by category and by year;
// each count is read only when a client asks for it.
type PaperFacets struct {
	CategoryCounts func(context.Context) ([]db.CategoryCount, error)
	YearCounts     func(context.Context) ([]db.YearCount, error)
}

// Categories counts the papers per category, most first.
func (f *PaperFacets) Categories(ctx context.Context) ([]*CategoryCount, error) {
	rows, err := f.CategoryCounts(ctx)
	rows = rows[:min(len(rows), MaxFacets)]
	out := make([]*CategoryCount, len(rows))
	for i := range rows {
		out[i] = &CategoryCount{Category: &rows[i].Category, Count: rows[i].Count}
	}
	return out, err
}

// Years counts the papers per year, oldest first.
func (f *PaperFacets) Years(ctx context.Context) ([]*db.YearCount, error) {
	rows, err := f.YearCounts(ctx)
	rows = rows[:min(len(rows), MaxFacets)]
	out := make([]*db.YearCount, len(rows))
	for i := range rows {
		out[i] = &rows[i]
	}
	return out, err
}

// CategoryCount is the number of papers of a list in a category.
type CategoryCount struct {
	Category *db.Category
	Count    int
}

// SuggestTarget is what a suggestion points at: *Paper, *Researcher,
// *Institution or *db.Category.
type SuggestTarget interface{}

// CoauthorEdge is a co-author with its cursor.
type CoauthorEdge struct {
	Cursor string
	Node   *Coauthor
}

// CoauthorConnection is a page of co-authors. The total is counted only
// when a client asks for it.
type CoauthorConnection struct {
	Edges    []*CoauthorEdge
	Nodes    []*Coauthor
	PageInfo *PageInfo
	Total    func(context.Context) (int, error)
}

// TotalCount counts the co-authors of the whole list.
func (c *CoauthorConnection) TotalCount(ctx context.Context) (int, error) { return c.Total(ctx) }

// InstitutionResearcherEdge is a researcher of an institution with their
// cursor and their number of papers there.
type InstitutionResearcherEdge struct {
	Cursor     string
	Node       *Researcher
	PaperCount int
}

// InstitutionResearcherConnection is a page of an institution's
// researchers. The total is counted only when a client asks for it.
type InstitutionResearcherConnection struct {
	Edges    []*InstitutionResearcherEdge
	Nodes    []*Researcher
	PageInfo *PageInfo
	Total    func(context.Context) (int, error)
}

// TotalCount counts the researchers of the whole list.
func (c *InstitutionResearcherConnection) TotalCount(ctx context.Context) (int, error) {
	return c.Total(ctx)
}

// ResearcherConnection is a page of researchers found by name. The total
// is counted only when a client asks for it.
type ResearcherConnection struct {
	Edges    []*ResearcherEdge
	Nodes    []*Researcher
	PageInfo *PageInfo
	Total    func(context.Context) (int, error)
}

// TotalCount counts the researchers of the whole list.
func (c *ResearcherConnection) TotalCount(ctx context.Context) (int, error) { return c.Total(ctx) }

// InstitutionConnection is a page of institutions found by name. The
// total is counted only when a client asks for it.
type InstitutionConnection struct {
	Edges    []*InstitutionEdge
	Nodes    []*Institution
	PageInfo *PageInfo
	Total    func(context.Context) (int, error)
}

// TotalCount counts the institutions of the whole list.
func (c *InstitutionConnection) TotalCount(ctx context.Context) (int, error) { return c.Total(ctx) }

// Node is any object with a global id: *Paper, *Researcher or
// *Institution. gqlgen tells them apart by their Go type, so it asks
// nothing of them.
type Node interface{}

// Kinds of global ids.
const (
	KindPaper       = "Paper"
	KindResearcher  = "Researcher"
	KindInstitution = "Institution"
	KindTopic       = "Topic"
)

// GlobalID is the Node id of the object of the given kind and primary key:
// "Paper:123" in unpadded URL-safe base64, opaque to clients and stable as
// long as the row keeps its key.
func GlobalID(kind string, id int64) string {
	var raw, enc [48]byte // "Institution:" and 19 digits, and their base64
	b := strconv.AppendInt(append(append(raw[:0], kind...), ':'), id, 10)
	n := base64.RawURLEncoding.EncodedLen(len(b))
	base64.RawURLEncoding.Encode(enc[:n], b)
	return string(enc[:n])
}

// ParseGlobalID takes a Node id apart; ok is false for anything GlobalID
// cannot have made.
func ParseGlobalID(s string) (kind string, id int64, ok bool) {
	kind, id, ok = parseGlobalID(s)
	switch {
	case !ok:
	case kind == KindPaper, kind == KindResearcher, kind == KindInstitution:
		return kind, id, true
	}
	return "", 0, false
}

// ParseTopicID takes a topic's id apart: a topic has a global id but is
// no Node, as a rebuild of the topics renumbers them.
func ParseTopicID(s string) (int64, bool) {
	kind, id, ok := parseGlobalID(s)
	return id, ok && kind == KindTopic
}

func parseGlobalID(s string) (kind string, id int64, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", 0, false
	}
	kind, num, found := strings.Cut(string(b), ":")
	id, err = strconv.ParseInt(num, 10, 64)
	if !found || err != nil || id <= 0 || strconv.FormatInt(id, 10) != num {
		return "", 0, false
	}
	return kind, id, true
}

// Nullable is s, or nil when *s is empty. It points into the row read from
// the database rather than at a copy, which would cost an allocation per
// field; rows are never changed once read.
func Nullable(s *string) *string {
	if *s == "" {
		return nil
	}
	return s
}

// Paper is a stored paper as GraphQL shows it.
type Paper struct{ *db.Paper }

// CitedByCountSource is where CitedByCount comes from, nil if it is nil
// or its source unknown.
func (p Paper) CitedByCountSource() *FiguresSource {
	if p.Paper.CitedByCount == nil {
		return nil
	}
	return figuresSource(p.Paper.CitedBySource, p.Paper.CitedByAt)
}

// figuresSource is the FiguresSource of figures written from source
// (db.SourceOpenAlex, db.SourceS2) at at; nil for an unknown source.
func figuresSource(source string, at time.Time) *FiguresSource {
	var s ExternalSource
	switch source {
	case db.SourceOpenAlex:
		s = ExternalSourceOpenalex
	case db.SourceS2:
		s = ExternalSourceSemanticScholar
	default:
		return nil
	}
	return &FiguresSource{Source: s, UpdatedAt: at}
}

// ID is the paper's global id.
func (p Paper) ID() string { return GlobalID(KindPaper, p.Paper.ID) }

// ArxivID is the canonical arXiv id, nil for a work known only by DOI.
func (p Paper) ArxivID() *string { return Nullable(&p.Paper.ArxivID) }

// Version is the latest version known, nil if unknown.
func (p Paper) Version() *int {
	if p.Paper.Version == 0 {
		return nil
	}
	return &p.Paper.Version
}

// Slug is the paper's URL slug.
func (p Paper) Slug() string {
	if p.Paper.ArxivID == "" {
		return arxivid.TitleSlug(p.Title)
	}
	return arxivid.Slug(p.Paper.ArxivID, p.Title)
}

// DOI is the bare DOI, nil if none.
func (p Paper) DOI() *string { return Nullable(&p.Paper.DOI) }

// Published is the first version's date, nil if unknown.
func (p Paper) Published() *time.Time { return nullTime(p.Paper.Published) }

// Updated is the latest version's date, nil if unknown.
func (p Paper) Updated() *time.Time { return nullTime(p.Paper.Updated) }

// AbsURL is the paper's page on arXiv, nil without an arXiv id.
func (p Paper) AbsURL() *string { return p.arxivURL("https://arxiv.org/abs/") }

// PDFURL is the paper's PDF on arXiv, nil without an arXiv id.
func (p Paper) PDFURL() *string { return p.arxivURL("https://arxiv.org/pdf/") }

func (p Paper) arxivURL(prefix string) *string {
	if p.Paper.ArxivID == "" {
		return nil
	}
	s := prefix + p.Paper.ArxivID
	return &s
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// Role is where an author at position stands on a byline of n authors;
// nil when the byline is incomplete.
func Role(position, n int, complete bool) *AuthorRole {
	switch {
	case !complete:
		return nil
	case n == 1:
		return &roles[3]
	case position == 1:
		return &roles[0]
	case position == n:
		return &roles[2]
	}
	return &roles[1]
}

// roles are the values Role points at, shared so that a byline costs no
// allocation per entry; nothing writes through the pointers.
var roles = [...]AuthorRole{AuthorRoleFirst, AuthorRoleMiddle, AuthorRoleLast, AuthorRoleSole}

// Researcher is a stored researcher profile as GraphQL shows it.
type Researcher struct{ *db.Researcher }

// Figures is where the researcher's external figures come from, nil if
// unknown (the figuresSource field).
func (r Researcher) Figures() *FiguresSource {
	return figuresSource(r.Researcher.FiguresSource, r.Researcher.FiguresAt)
}

// ID is the profile's global id.
func (r Researcher) ID() string { return GlobalID(KindResearcher, r.Researcher.ID) }

// ResearcherID is the numeric id.
func (r Researcher) ResearcherID() int { return int(r.Researcher.ID) }

// Slug is the URL path segment "<id>-<name-slug>".
func (r Researcher) Slug() string { return pathSegment(r.Researcher.ID, r.Researcher.Slug) }

// ORCID is the bare ORCID, nil if unknown.
func (r Researcher) ORCID() *string { return Nullable(&r.Researcher.ORCID) }

// OpenAlexID is the OpenAlex author id, nil if unknown.
func (r Researcher) OpenAlexID() *string { return Nullable(&r.Researcher.OpenAlexID) }

// SemanticScholarID is the Semantic Scholar author id, nil if unknown.
func (r Researcher) SemanticScholarID() *string { return Nullable(&r.Researcher.S2ID) }

// CitedByCount is the citation count an external source reports over all
// the person's works, nil if unknown.
func (r Researcher) CitedByCount() *int { return r.Researcher.CitationCount }

// PositionKnownPaperCount counts the papers with a complete author list.
func (r Researcher) PositionKnownPaperCount() int { return r.PositionKnownCount }

// AuthorPositions counts the papers per author role.
func (r Researcher) AuthorPositions() []*AuthorPositionCount {
	return []*AuthorPositionCount{
		{Role: AuthorRoleFirst, Count: r.FirstCount},
		{Role: AuthorRoleMiddle, Count: r.MiddleCount},
		{Role: AuthorRoleLast, Count: r.LastCount},
		{Role: AuthorRoleSole, Count: r.SoleCount},
	}
}

func pathSegment(id int64, slug string) string {
	s := strconv.FormatInt(id, 10)
	if slug == "" {
		return s
	}
	return s + "-" + slug
}

// Institution is a stored institution as GraphQL shows it.
type Institution struct{ *db.Institution }

// ID is the institution's global id.
func (i Institution) ID() string { return GlobalID(KindInstitution, i.Institution.ID) }

// InstitutionID is the numeric id.
func (i Institution) InstitutionID() int { return int(i.Institution.ID) }

// Slug is the URL path segment "<id>-<name-slug>".
func (i Institution) Slug() string {
	return pathSegment(i.Institution.ID, arxivid.TitleSlug(i.Name))
}

// RorID is the bare ROR id, nil if unknown.
func (i Institution) RorID() *string { return Nullable(&i.RORID) }

// RorURL is the ROR URL, nil if unknown.
func (i Institution) RorURL() *string {
	if i.RORID == "" {
		return nil
	}
	s := "https://ror.org/" + i.RORID
	return &s
}

// Country is the country code, nil if unknown.
func (i Institution) Country() *string { return Nullable(&i.Institution.Country) }

// Status is ROR's status as the enum, nil if unknown (or a status ROR
// did not have when the schema was written).
func (i Institution) Status() *InstitutionStatus {
	st := InstitutionStatus(strings.ToUpper(i.Institution.Status))
	if !st.IsValid() {
		return nil
	}
	return &st
}

// InstitutionName is another name of an institution as GraphQL shows it.
type InstitutionName struct{ *db.InstitutionName }

// Kind is the kind of name as the enum; the importers store only the
// three kinds, in lower case.
func (n InstitutionName) Kind() InstitutionNameKind {
	return InstitutionNameKind(strings.ToUpper(n.InstitutionName.Kind))
}

// Established is the founding year, nil if unknown.
func (i Institution) Established() *int {
	if i.Institution.Established == 0 {
		return nil
	}
	return &i.Institution.Established
}

// MaxTypes is the most organisation types Types returns (ROR gives one or
// two); the cost calculator's bound of Institution.types.
const MaxTypes = 20

// Types are ROR's organisation types, at most MaxTypes.
func (i Institution) Types() []string {
	if i.Institution.Types == "" {
		return []string{}
	}
	types := strings.Split(i.Institution.Types, ",")
	return types[:min(len(types), MaxTypes)]
}
