// Package ingest reads scholarly data files (arXiv metadata, Paperscape,
// OpenAlex, ROR, Semantic Scholar) and weaves them into the papergraph
// database: one reader per format produces records, one writer upserts them.
package ingest

import (
	"fmt"
	"strconv"
	"time"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/names"
)

// Record is what a reader hands to the writer: a *Paper, a *Researcher or an
// *Institution.
type Record interface{ record() }

// Paper is one paper as a source describes it. Empty strings, nil pointers
// and zero times mean "this source does not say"; the writer never lets them
// blank what another source already stored.
type Paper struct {
	// ArxivID is the canonical arXiv id without version ("hep-th/9407087",
	// "2111.04949"); empty for a work known only by DOI.
	ArxivID    string
	Version    int // latest version number known to this source, 0 if unknown
	DOI        string
	Title      string
	Abstract   string
	Comments   string
	JournalRef string
	ReportNo   string
	License    string
	Published  time.Time // first version
	Updated    time.Time // latest version
	// Categories holds arXiv category codes in the source's order, the
	// primary category first. Readers pass codes through as printed; the
	// writer maps defunct archives and aliases and drops MSC/ACM classes.
	Categories []string
	// CitedByCount is an external citation count (OpenAlex, S2), nil if unknown.
	CitedByCount *int
	// CitedBySource is the source of CitedByCount: db.SourceOpenAlex or
	// db.SourceS2.
	CitedBySource string
	OpenAlexID    string // "W2741809807"
	S2ID          string // Semantic Scholar paper id (sha or corpus id)
	// Byline is the author line as printed, when the source has one.
	Byline string
	// Authors in byline order. AuthorsComplete says the list is the paper's
	// full author list (false for a source that truncates or only lists some).
	Authors         []Author
	AuthorsComplete bool
	// References are the canonical arXiv ids of the works this paper cites.
	References []string

	// row is the paper as a row of its own, made by prepare.
	row *db.Paper
}

// Author is one byline entry.
type Author struct {
	Name         string // exactly as printed (accents decoded)
	ORCID        string // bare "0000-0002-1825-0097"
	OpenAlexID   string // "A5023888391"
	S2ID         string
	Affiliations []Affiliation

	// key and family are the name's keys (names.Keys), set by prepare.
	key, family string
}

// Affiliation is an affiliation string with the ROR id when the source gives one.
type Affiliation struct {
	Raw string
	ROR string // bare ROR id ("00f54p054"), empty when unknown
}

// Researcher is an author profile from an external source (OpenAlex or S2
// authors). At least one external id is set.
type Researcher struct {
	Name          string
	ORCID         string
	OpenAlexID    string
	S2ID          string
	HIndex        *int
	CitationCount *int
	WorksCount    *int
	// FiguresSource is the source of HIndex, CitationCount and
	// WorksCount: db.SourceOpenAlex or db.SourceS2.
	FiguresSource string
}

// Institution is one organisation, typically a ROR record.
type Institution struct {
	ROR         string // bare id, "05dxps055"
	Name        string // display name
	Country     string // ISO 3166-1 alpha-2
	Types       []string
	Status      string
	Established int
	OpenAlexID  string
	// Names are the other names it goes by: labels, aliases, acronyms.
	Names []InstitutionName
}

// InstitutionName is one alternative name of an institution.
type InstitutionName struct {
	Value string
	Kind  string // "label", "alias" or "acronym"
}

func (*Paper) record()       {}
func (*Researcher) record()  {}
func (*Institution) record() {}

// Position locates a record in its input: a file, a tar member inside it,
// and a 1-based line number (0 when the format has no lines).
type Position struct {
	File   string
	Member string
	Line   int
}

func (p Position) String() string {
	s := p.File
	if p.Member != "" {
		s += ":" + p.Member
	}
	if p.Line > 0 {
		s += ":" + strconv.Itoa(p.Line)
	}
	return s
}

// RecordError is a malformed record: where it is and why it was skipped.
type RecordError struct {
	Pos    Position
	Reason string
}

func (e *RecordError) Error() string { return e.Pos.String() + ": " + e.Reason }

// prepare does the part of the writer's work on a record that needs no
// database (cleaning text, taking author names apart) ahead of the writer,
// on the reader's goroutine: that one has a core to spare while the writer
// waits for the database. The writer prepares a paper that comes to it
// unprepared.
func prepare(r Record) {
	p, ok := r.(*Paper)
	if !ok {
		return
	}
	p.row = newPaperRow(p)
	for i := range p.Authors {
		a := &p.Authors[i]
		a.key, a.family = names.Keys(a.Name)
	}
}

// The most a paper's fields may hold, far above any real paper's (arXiv
// takes titles and abstracts of a few thousand characters; the longest
// real byline has under ten thousand names), so that a record past them is
// not a paper but a broken or hostile source, skipped and reported.
const (
	maxTitleBytes    = 4 << 10
	maxAbstractBytes = 64 << 10
	maxNoteBytes     = 16 << 10 // comments, journal reference, report number
	maxAuthors       = 20_000
	maxCategories    = 100
)

// oversized says which field of p is past its bound, or "" when none is.
func (p *Paper) oversized() string {
	for _, f := range []struct {
		name      string
		size, max int
	}{
		{"title", len(p.Title), maxTitleBytes},
		{"abstract", len(p.Abstract), maxAbstractBytes},
		{"comments", len(p.Comments), maxNoteBytes},
		{"journal reference", len(p.JournalRef), maxNoteBytes},
		{"report number", len(p.ReportNo), maxNoteBytes},
		{"authors", len(p.Authors), maxAuthors},
		{"categories", len(p.Categories), maxCategories},
	} {
		if f.size > f.max {
			unit := " bytes"
			if f.name == "authors" || f.name == "categories" {
				unit = ""
			}
			return fmt.Sprintf("%s %s: %d%s, over the bound of %d", p.ArxivID, f.name, f.size, unit, f.max)
		}
	}
	return ""
}

// sourceOf is source when any of the figures is known, "" otherwise: a
// record names the source of the figures it carries only.
func sourceOf(source string, figures ...*int) string {
	for _, f := range figures {
		if f != nil {
			return source
		}
	}
	return ""
}
