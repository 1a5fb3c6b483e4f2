package ingest

import (
	"strings"
	"time"

	"github.com/papergraph/papergraph/arxivid"
)

// This file holds what the readers of external catalogues (OpenAlex, ROR,
// Semantic Scholar) share: they all name things by URL and by DOI.

// bareID strips the URL from an identifier that these sources print as a
// link: "https://ror.org/05ppvf150" → "05ppvf150", likewise for ORCID
// and OpenAlex ids. An id without a slash is returned as it is.
func bareID(s string) string { return s[strings.LastIndexByte(s, '/')+1:] }

// arxivDOIPrefix is arXiv's own DataCite DOI prefix, lowercased as
// arxivid.NormalizeDOI returns it.
const arxivDOIPrefix = "10.48550/arxiv."

// setDOI files doi under p. An arXiv DataCite DOI (10.48550/arXiv.2111.04949)
// names the preprint itself, so it sets ArxivID instead of DOI, which is
// meant for the published version. A string that is not a DOI is dropped:
// sources put the odd URL or "N/A" there, and the rest of the record is good.
func setDOI(p *Paper, doi string) {
	d, ok := arxivid.NormalizeDOI(doi)
	if !ok {
		return
	}
	if rest, ok := strings.CutPrefix(d, arxivDOIPrefix); ok {
		if id, _, err := arxivid.Parse(rest); err == nil && p.ArxivID == "" {
			p.ArxivID = id
		}
		return
	}
	p.DOI = d
}

// parseDate parses an ISO date ("2018-02-13"); an empty string is the zero
// time.
func parseDate(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.DateOnly, s)
}
