package db

import (
	"time"

	"github.com/uptrace/bun"
)

// Paper is one paper of the archive. Zero strings and times are stored as
// NULL.
type Paper struct {
	bun.BaseModel `bun:"table:papers"`

	ID              int64     `bun:"id,pk,autoincrement"`
	ArxivID         string    `bun:"arxiv_id,nullzero"`
	Version         int       `bun:"version,notnull"`
	DOI             string    `bun:"doi,nullzero"`
	Title           string    `bun:"title,notnull"`
	Abstract        string    `bun:"abstract,nullzero"`
	Comments        string    `bun:"comments,nullzero"`
	JournalRef      string    `bun:"journal_ref,nullzero"`
	ReportNo        string    `bun:"report_no,nullzero"`
	License         string    `bun:"license,nullzero"`
	Published       time.Time `bun:"published,nullzero"`
	Updated         time.Time `bun:"updated,nullzero"`
	PrimaryCategory string    `bun:"primary_category,nullzero"`
	Byline          string    `bun:"byline,nullzero"`
	CitedByCount    *int      `bun:"cited_by_count"`
	// CitedBySource is the source of CitedByCount (SourceOpenAlex,
	// SourceS2), CitedByAt when it was written from it; empty and zero
	// when CitedByCount is nil or was written before they were kept.
	CitedBySource   string    `bun:"cited_by_source,nullzero"`
	CitedByAt       time.Time `bun:"cited_by_at,nullzero"`
	OpenAlexID      string    `bun:"openalex_id,nullzero"`
	S2ID            string    `bun:"s2_id,nullzero"`
	AuthorCount     int       `bun:"author_count,notnull"`
	AuthorsComplete bool      `bun:"authors_complete,notnull"`
	AuthorsScore    int       `bun:"authors_score,notnull"`

	// ArchiveCitationCount counts the papers of the archive citing it;
	// CitationCount is the larger of it and CitedByCount.
	ArchiveCitationCount int `bun:"archive_citation_count,notnull"`
	CitationCount        int `bun:"citation_count,notnull"`

	// Partial marks a paper read for a page of a list, with only the
	// columns of a list page (see PaperPages): its long text fields and external ids
	// are empty whatever the database holds. Read it by id for them.
	Partial bool `bun:"-"`
	// Score is the relevance of a paper found by SearchPapers to its
	// query, higher is better; zero elsewhere.
	Score float64 `bun:"-"`
}

// PaperCategory files a paper under a category; position 0 is the primary.
type PaperCategory struct {
	bun.BaseModel `bun:"table:paper_categories"`

	PaperID  int64  `bun:"paper_id,pk"`
	Position int    `bun:"position,pk"`
	Category string `bun:"category,notnull"`
	// Published is the paper's, kept equal to papers.published by the
	// writer so that a category's pages are ranges of one index.
	Published time.Time `bun:"published,nullzero"`
}

// The external sources of figures, as papers.cited_by_source and
// researchers.figures_source name them.
const (
	SourceOpenAlex = "openalex"
	SourceS2       = "s2"
)

// Researcher is one author profile.
type Researcher struct {
	bun.BaseModel `bun:"table:researchers"`

	ID            int64  `bun:"id,pk,autoincrement"`
	Name          string `bun:"name,notnull"`
	NameKey       string `bun:"name_key,notnull"`
	FamilyKey     string `bun:"family_key,notnull"`
	Slug          string `bun:"slug,notnull"`
	ORCID         string `bun:"orcid,nullzero"`
	OpenAlexID    string `bun:"openalex_id,nullzero"`
	S2ID          string `bun:"s2_id,nullzero"`
	HIndex        *int   `bun:"h_index"`
	CitationCount *int   `bun:"citation_count"`
	WorksCount    *int   `bun:"works_count"`
	// FiguresSource is the source of HIndex, CitationCount and
	// WorksCount (SourceOpenAlex, SourceS2), FiguresAt when they were
	// written from it; empty and zero when none is known or they were
	// written before these were kept.
	FiguresSource string    `bun:"figures_source,nullzero"`
	FiguresAt     time.Time `bun:"figures_at,nullzero"`

	// Derived after each import.
	PaperCount         int   `bun:"paper_count,notnull"`
	PositionKnownCount int   `bun:"position_known_count,notnull"`
	FirstCount         int   `bun:"first_count,notnull"`
	MiddleCount        int   `bun:"middle_count,notnull"`
	LastCount          int   `bun:"last_count,notnull"`
	SoleCount          int   `bun:"sole_count,notnull"`
	ArchiveHIndex      int   `bun:"archive_h_index,notnull"`
	MostCitedPaperID   int64 `bun:"most_cited_paper_id,nullzero"`
	// CoauthorCount is the researcher's rows in coauthors.
	CoauthorCount int `bun:"coauthor_count,notnull"`
}

// Institution is one organisation, usually from ROR.
type Institution struct {
	bun.BaseModel `bun:"table:institutions"`

	ID          int64  `bun:"id,pk,autoincrement"`
	RORID       string `bun:"ror_id,nullzero"`
	OpenAlexID  string `bun:"openalex_id,nullzero"`
	Name        string `bun:"name,notnull"`
	Country     string `bun:"country,nullzero"`
	Types       string `bun:"types,nullzero"` // comma-separated
	Status      string `bun:"status,nullzero"`
	Established int    `bun:"established,nullzero"`
}

// InstitutionName is a label, alias or acronym of an institution.
type InstitutionName struct {
	bun.BaseModel `bun:"table:institution_names"`

	InstitutionID int64  `bun:"institution_id,pk"`
	Name          string `bun:"name,pk"`
	Kind          string `bun:"kind,notnull"`
	NameKey       string `bun:"name_key,notnull"`
}

// Authorship is one byline entry of a paper.
type Authorship struct {
	bun.BaseModel `bun:"table:authorships"`

	PaperID      int64  `bun:"paper_id,pk"`
	Position     int    `bun:"position,pk"` // 1-based
	Name         string `bun:"name,notnull"`
	ResearcherID int64  `bun:"researcher_id,nullzero"`
}

// Affiliation is one affiliation of an authorship, raw string kept.
type Affiliation struct {
	bun.BaseModel `bun:"table:affiliations"`

	PaperID       int64  `bun:"paper_id,pk"`
	Position      int    `bun:"position,pk"`
	Seq           int    `bun:"seq,pk"`
	Raw           string `bun:"raw,notnull"`
	RORID         string `bun:"ror_id,nullzero"`
	InstitutionID int64  `bun:"institution_id,nullzero"`
}

// Reference is one entry of a paper's reference list; CitedID is set when
// the target is in the archive.
type Reference struct {
	bun.BaseModel `bun:"table:paper_references"`

	CitingID int64  `bun:"citing_id,pk"`
	Target   string `bun:"target,pk"`
	CitedID  int64  `bun:"cited_id,nullzero"`
	// CitingPublished is the citing paper's first-version date, nil when
	// unknown: the writer keeps it equal to papers.published, so that a
	// paper's citations by date are a range of the cited index.
	CitingPublished *time.Time `bun:"citing_published"`
}

// ResearcherCategory counts a researcher's papers in one category.
type ResearcherCategory struct {
	bun.BaseModel `bun:"table:researcher_categories"`

	ResearcherID int64  `bun:"researcher_id,pk"`
	Category     string `bun:"category,pk"`
	PaperCount   int    `bun:"paper_count,notnull"`
}

// Coauthor is one co-author of a researcher with their shared papers.
type Coauthor struct {
	bun.BaseModel `bun:"table:coauthors"`

	ResearcherID int64 `bun:"researcher_id,pk"`
	CoauthorID   int64 `bun:"coauthor_id,pk"`
	PaperCount   int   `bun:"paper_count,notnull"`
}

// SameName links two profiles that may be the same person.
type SameName struct {
	bun.BaseModel `bun:"table:same_name"`

	ResearcherID int64 `bun:"researcher_id,pk"`
	OtherID      int64 `bun:"other_id,pk"`
}
