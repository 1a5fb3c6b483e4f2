package ingest

import (
	"context"
	"strconv"
	"strings"
)

// Kaggle reads the arXiv metadata snapshot that arXiv publishes on Kaggle.
var Kaggle = Format{
	Name:  "kaggle",
	Reads: "arXiv metadata snapshot from Kaggle (arxiv-metadata-oai-snapshot.json, JSON lines)",
	Read:  readKaggle,
}

// kaggleRecord is one line of the snapshot, with the fields papergraph
// uses; JSON nulls decode as empty strings.
type kaggleRecord struct {
	ID         string `json:"id"`
	Authors    string `json:"authors"`
	Title      string `json:"title"`
	Comments   string `json:"comments"`
	JournalRef string `json:"journal-ref"`
	DOI        string `json:"doi"`
	ReportNo   string `json:"report-no"`
	Categories string `json:"categories"`
	License    string `json:"license"`
	Abstract   string `json:"abstract"`
	Versions   []struct {
		Version string `json:"version"` // "v2"
		Created string `json:"created"` // "Mon, 2 Apr 2007 19:18:42 GMT"
	} `json:"versions"`
}

func readKaggle(ctx context.Context, e Entry, s Sink) error {
	return eachJSON(ctx, e, s, func(r *kaggleRecord, pos Position) error {
		p, reason := newArxivPaper(r.ID, r.Title)
		if reason != "" {
			return s.Bad(&RecordError{Pos: pos, Reason: reason})
		}
		p.Abstract = clean(r.Abstract)
		p.Comments = clean(r.Comments)
		p.JournalRef = clean(r.JournalRef)
		p.ReportNo = clean(r.ReportNo)
		p.License = strings.TrimSpace(r.License)
		p.Categories = strings.Fields(r.Categories)
		setFirstDOI(p, r.DOI)
		setByline(p, r.Authors)
		if n := len(r.Versions); n > 0 {
			p.Published, _ = parseSubmitDate(r.Versions[0].Created)
			p.Updated, _ = parseSubmitDate(r.Versions[n-1].Created)
			if v, err := strconv.Atoi(strings.TrimPrefix(r.Versions[n-1].Version, "v")); err == nil {
				p.Version = v
			}
		}
		return s.Record(p, pos)
	})
}
