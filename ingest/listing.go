package ingest

import (
	"context"
	"time"

	"github.com/papergraph/papergraph/arxivid"
)

// Listing reads papers collected from arXiv's daily listings.
var Listing = Format{
	Name:  "listing",
	Reads: "papers from arXiv's daily listings (JSON lines: id, categories[], authors[], title, summary, listing_file_date)",
	Read:  readListing,
}

// listingRecord is one line of a listing file. Categories also carry MSC
// and ACM class strings ("68T45, 62H30"), passed on for the writer to drop.
type listingRecord struct {
	ID              string   `json:"id"`
	Categories      []string `json:"categories"`
	Authors         []string `json:"authors"`
	Title           string   `json:"title"`
	Comment         string   `json:"comment"`
	Summary         string   `json:"summary"`
	ListingFileDate string   `json:"listing_file_date"` // "2025-10-13", first listing that carried the id
}

func readListing(ctx context.Context, e Entry, s Sink) error {
	return eachJSON(ctx, e, s, func(r *listingRecord, pos Position) error {
		p, reason := newArxivPaper(r.ID, r.Title)
		if reason != "" {
			return s.Bad(&RecordError{Pos: pos, Reason: reason})
		}
		p.Abstract = clean(r.Summary)
		p.Comments = clean(r.Comment)
		p.Categories = r.Categories
		p.Authors = make([]Author, 0, len(r.Authors))
		for _, name := range r.Authors {
			if name = clean(name); name != "" {
				p.Authors = append(p.Authors, Author{Name: name})
			}
		}
		p.AuthorsComplete = len(p.Authors) > 0
		if d, err := parseDate(r.ListingFileDate); err == nil && firstListed(p.ArxivID, d) {
			p.Published = d
		}
		return s.Record(p, pos)
	})
}

// firstListed reports whether a listing date can be the first listing of
// id: new submissions are listed within days, in the month the id was
// issued or the next. Older papers come back in later listings when they
// are replaced or cross-listed, and those dates are not their publication.
func firstListed(id string, listed time.Time) bool {
	issued := arxivid.Month(id)
	return !issued.IsZero() && !listed.Before(issued) && listed.Before(issued.AddDate(0, 2, 0))
}
