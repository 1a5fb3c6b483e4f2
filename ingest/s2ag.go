package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
)

// S2AG reads the Semantic Scholar Academic Graph "papers" and "authors"
// datasets. The others hold nothing papergraph can place without a corpus
// id → arXiv id map (citations, abstracts, tldrs) or nothing it stores at
// all (embeddings, s2orc, venues); a file of one of them is refused with a
// single message at its first line rather than one per record.
var S2AG = Format{
	Name:  "s2ag",
	Reads: "Semantic Scholar (S2AG) papers and authors datasets (JSON lines, .gz or plain); other S2AG datasets are refused",
	Read:  readS2AG,
}

// s2Record holds the fields papergraph uses from papers and authors, and
// the fields that tell the other datasets apart.
type s2Record struct {
	ExternalIDs struct {
		ArXiv string `json:"ArXiv"`
		DOI   string `json:"DOI"`
		ORCID string `json:"ORCID"`
	} `json:"externalids"`
	CitationCount *int `json:"citationcount"`

	// Papers. The corpus id is a number here and a string in citations.
	CorpusID        json.Number `json:"corpusid"`
	Title           string      `json:"title"`
	PublicationDate string      `json:"publicationdate"`
	Authors         []struct {
		AuthorID string `json:"authorId"`
		Name     string `json:"name"`
	} `json:"authors"`

	// Authors.
	AuthorID   string `json:"authorid"`
	Name       string `json:"name"`
	PaperCount *int   `json:"papercount"`
	HIndex     *int   `json:"hindex"`

	// Other datasets, each known by a field only it has.
	CitingCorpusID json.RawMessage `json:"citingcorpusid"`
	SHA            json.RawMessage `json:"sha"`
	Vector         json.RawMessage `json:"vector"`
	Abstract       json.RawMessage `json:"abstract"`
	Content        json.RawMessage `json:"content"`
	Text           json.RawMessage `json:"text"`
	ISSN           json.RawMessage `json:"issn"`
}

// dataset names the S2AG dataset r comes from, "" if none.
func (r *s2Record) dataset() string {
	switch {
	case r.AuthorID != "":
		return "authors"
	case r.CitingCorpusID != nil:
		return "citations"
	case r.SHA != nil:
		return "paper-ids"
	case r.Vector != nil:
		return "embeddings"
	case r.Abstract != nil:
		return "abstracts"
	case r.Content != nil:
		return "s2orc"
	case r.Text != nil:
		return "tldrs"
	case r.ISSN != nil:
		return "publication-venues"
	case r.CorpusID != "":
		return "papers"
	}
	return ""
}

// errRefused stops reading an entry of a dataset the reader does not take.
var errRefused = errors.New("s2ag dataset refused")

func readS2AG(ctx context.Context, e Entry, s Sink) error {
	err := eachJSON(ctx, e, s, func(r *s2Record, pos Position) error {
		switch ds := r.dataset(); ds {
		case "papers":
			p, err := r.paper()
			if err != nil {
				return s.Bad(&RecordError{Pos: pos, Reason: err.Error()})
			}
			return s.Record(p, pos)
		case "authors":
			return s.Record(r.researcher(), pos)
		case "":
			return s.Bad(&RecordError{Pos: pos, Reason: "not a record of an S2AG dataset"})
		default:
			if err := s.Bad(&RecordError{Pos: pos,
				Reason: "s2ag " + ds + " dataset is not supported; import papers and authors"}); err != nil {
				return err
			}
			return errRefused
		}
	})
	if errors.Is(err, errRefused) {
		return nil
	}
	return err
}

// paper maps a papers record. Its year alone is not turned into a date:
// Published is a day, and January 1st would be a made-up one.
func (r *s2Record) paper() (*Paper, error) {
	published, err := parseDate(r.PublicationDate)
	if err != nil {
		return nil, fmt.Errorf("publicationdate: %w", err)
	}
	p := &Paper{
		S2ID:            r.CorpusID.String(),
		Title:           r.Title,
		Published:       published,
		CitedByCount:    r.CitationCount,
		CitedBySource:   sourceOf(db.SourceS2, r.CitationCount),
		AuthorsComplete: true,
	}
	if r.ExternalIDs.ArXiv != "" {
		if id, _, err := arxivid.Parse(r.ExternalIDs.ArXiv); err == nil {
			p.ArxivID = id
		}
	}
	setDOI(p, r.ExternalIDs.DOI)
	for _, a := range r.Authors {
		p.Authors = append(p.Authors, Author{Name: a.Name, S2ID: a.AuthorID})
	}
	return p, nil
}

func (r *s2Record) researcher() *Researcher {
	return &Researcher{
		Name:          r.Name,
		S2ID:          r.AuthorID,
		ORCID:         bareID(r.ExternalIDs.ORCID),
		HIndex:        r.HIndex,
		CitationCount: r.CitationCount,
		WorksCount:    r.PaperCount,
		FiguresSource: sourceOf(db.SourceS2, r.HIndex, r.CitationCount, r.PaperCount),
	}
}
