package ingest

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
)

// OpenAlex reads OpenAlex works, authors and institutions: the snapshot's
// JSON lines or objects saved from the API. Other OpenAlex entities
// (sources, publishers, funders, topics, concepts) are skipped silently, so
// that a whole snapshot directory can be fed in.
var OpenAlex = Format{
	Name:  "openalex",
	Reads: "OpenAlex works, authors and institutions (snapshot JSON lines or API objects, .gz or plain)",
	Read:  readOpenAlex,
}

const openAlexPrefix = "https://openalex.org/"

// openAlexEntity holds the fields papergraph uses from the three entity
// kinds; each kind fills its own and leaves the others empty.
type openAlexEntity struct {
	ID           string `json:"id"`
	DisplayName  string `json:"display_name"`
	CitedByCount *int   `json:"cited_by_count"`

	// Works.
	Title              string               `json:"title"`
	DOI                string               `json:"doi"`
	PublicationDate    string               `json:"publication_date"`
	PrimaryLocation    *openAlexLocation    `json:"primary_location"`
	Locations          []openAlexLocation   `json:"locations"`
	Authorships        []openAlexAuthorship `json:"authorships"`
	IsAuthorsTruncated bool                 `json:"is_authors_truncated"`

	// Authors.
	ORCID        string `json:"orcid"`
	WorksCount   *int   `json:"works_count"`
	SummaryStats struct {
		HIndex *int `json:"h_index"`
	} `json:"summary_stats"`

	// Institutions.
	ROR          string   `json:"ror"`
	CountryCode  string   `json:"country_code"`
	Type         string   `json:"type"`
	Alternatives []string `json:"display_name_alternatives"`
	Acronyms     []string `json:"display_name_acronyms"`
}

type openAlexLocation struct {
	LandingPageURL string `json:"landing_page_url"`
	PDFURL         string `json:"pdf_url"`
}

type openAlexAuthorship struct {
	Author struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		ORCID       string `json:"orcid"`
	} `json:"author"`
	RawAuthorName  string                `json:"raw_author_name"`
	Institutions   []openAlexInstitution `json:"institutions"`
	RawAffiliation []string              `json:"raw_affiliation_strings"`
	Affiliations   []struct {
		Raw          string   `json:"raw_affiliation_string"`
		Institutions []string `json:"institution_ids"`
	} `json:"affiliations"`
}

type openAlexInstitution struct {
	DisplayName string `json:"display_name"`
	ROR         string `json:"ror"`
}

func readOpenAlex(ctx context.Context, e Entry, s Sink) error {
	return eachJSON(ctx, e, s, func(o *openAlexEntity, pos Position) error {
		id, ok := strings.CutPrefix(o.ID, openAlexPrefix)
		if !ok || id == "" {
			return s.Bad(&RecordError{Pos: pos, Reason: fmt.Sprintf("id %q is not an OpenAlex id", o.ID)})
		}
		var r Record
		switch id[0] {
		case 'W':
			p, err := o.work(id)
			if err != nil {
				return s.Bad(&RecordError{Pos: pos, Reason: err.Error()})
			}
			r = p
		case 'A':
			r = o.researcher(id)
		case 'I':
			r = o.institution(id)
		default:
			return nil
		}
		return s.Record(r, pos)
	})
}

// work maps a work. Its referenced_works are OpenAlex ids, which
// cannot be resolved to arXiv ids or DOIs from the work alone, so they are
// left out rather than stored as ids no other source uses.
func (o *openAlexEntity) work(id string) (*Paper, error) {
	published, err := parseDate(o.PublicationDate)
	if err != nil {
		return nil, fmt.Errorf("publication_date: %w", err)
	}
	p := &Paper{
		OpenAlexID:      id,
		Title:           o.Title,
		Published:       published,
		CitedByCount:    o.CitedByCount,
		CitedBySource:   sourceOf(db.SourceOpenAlex, o.CitedByCount),
		AuthorsComplete: !o.IsAuthorsTruncated,
	}
	if p.Title == "" {
		p.Title = o.DisplayName
	}
	setDOI(p, o.DOI)
	if p.ArxivID == "" {
		p.ArxivID = o.arxivID()
	}
	for _, a := range o.Authorships {
		au := Author{
			Name:       a.Author.DisplayName,
			OpenAlexID: bareID(a.Author.ID),
			ORCID:      bareID(a.Author.ORCID),
		}
		if au.Name == "" {
			au.Name = a.RawAuthorName
		}
		au.Affiliations = openAlexAffiliations(a)
		p.Authors = append(p.Authors, au)
	}
	return p, nil
}

// arxivID finds the arXiv id of a work among its locations: OpenAlex
// lists an arXiv copy as a location whose landing page is on arxiv.org.
func (o *openAlexEntity) arxivID() string {
	locs := o.Locations
	if o.PrimaryLocation != nil {
		locs = append([]openAlexLocation{*o.PrimaryLocation}, locs...)
	}
	for _, l := range locs {
		for _, link := range []string{l.LandingPageURL, l.PDFURL} {
			u, err := url.Parse(link)
			if err != nil || !(u.Host == "arxiv.org" || strings.HasSuffix(u.Host, ".arxiv.org")) {
				continue
			}
			if id, _, err := arxivid.Parse(strings.TrimSuffix(link, ".pdf")); err == nil {
				return id
			}
		}
	}
	return ""
}

// openAlexAffiliations lists each affiliation once: an institution OpenAlex
// matched by its name and ROR id, then every raw affiliation string it
// matched to no institution, as printed. Snapshots older than the
// affiliations field cannot tell which raw strings were matched, so they
// give raw strings only for authors with no institution at all.
func openAlexAffiliations(a openAlexAuthorship) []Affiliation {
	var affs []Affiliation
	for _, in := range a.Institutions {
		affs = append(affs, Affiliation{Raw: in.DisplayName, ROR: bareID(in.ROR)})
	}
	switch {
	case a.Affiliations != nil:
		for _, af := range a.Affiliations {
			if len(af.Institutions) == 0 && af.Raw != "" {
				affs = append(affs, Affiliation{Raw: af.Raw})
			}
		}
	case len(a.Institutions) == 0:
		for _, raw := range a.RawAffiliation {
			affs = append(affs, Affiliation{Raw: raw})
		}
	}
	return affs
}

func (o *openAlexEntity) researcher(id string) *Researcher {
	r := &Researcher{
		Name:          o.DisplayName,
		OpenAlexID:    id,
		ORCID:         bareID(o.ORCID),
		HIndex:        o.SummaryStats.HIndex,
		CitationCount: o.CitedByCount,
		WorksCount:    o.WorksCount,
		FiguresSource: sourceOf(db.SourceOpenAlex, o.SummaryStats.HIndex, o.CitedByCount, o.WorksCount),
	}
	return r
}

func (o *openAlexEntity) institution(id string) *Institution {
	in := &Institution{
		ROR:        bareID(o.ROR),
		Name:       o.DisplayName,
		Country:    o.CountryCode,
		OpenAlexID: id,
	}
	if o.Type != "" {
		in.Types = []string{o.Type}
	}
	for _, n := range o.Alternatives {
		in.Names = addName(in.Names, in.Name, n, "alias")
	}
	for _, n := range o.Acronyms {
		in.Names = addName(in.Names, in.Name, n, "acronym")
	}
	return in
}
