package ingest

import (
	"strconv"
	"strings"
	"time"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/names"
)

// This file holds what the readers of arXiv's own metadata (kaggle, abs,
// listing, paperscape) share: every record names a paper by its arXiv id
// and prints the authors as a byline.

// arxivRecord is arXiv's metadata of one paper as both the Kaggle snapshot
// (a JSON line) and OAI-PMH's arXivRaw format (an XML element) carry it,
// with the fields papergraph uses; JSON nulls and absent elements decode
// as empty strings.
type arxivRecord struct {
	ID         string `json:"id" xml:"id"`
	Authors    string `json:"authors" xml:"authors"`
	Title      string `json:"title" xml:"title"`
	Comments   string `json:"comments" xml:"comments"`
	JournalRef string `json:"journal-ref" xml:"journal-ref"`
	DOI        string `json:"doi" xml:"doi"`
	ReportNo   string `json:"report-no" xml:"report-no"`
	Categories string `json:"categories" xml:"categories"`
	License    string `json:"license" xml:"license"`
	Abstract   string `json:"abstract" xml:"abstract"`
	// Versions are the paper's versions, the first first:
	// {"version": "v2", "created": "Mon, 2 Apr 2007 19:18:42 GMT"} in
	// JSON, <version version="v2"><date>…</date></version> in arXivRaw.
	Versions []struct {
		Version string `json:"version" xml:"version,attr"`
		Created string `json:"created" xml:"date"`
	} `json:"versions" xml:"version"`
}

// paper turns r into a paper, or says why it is malformed.
func (r *arxivRecord) paper() (*Paper, string) {
	p, reason := newArxivPaper(r.ID, r.Title)
	if reason != "" {
		return nil, reason
	}
	p.Abstract = clean(r.Abstract)
	p.Comments = clean(r.Comments)
	p.JournalRef = clean(r.JournalRef)
	p.ReportNo = clean(r.ReportNo)
	p.License = strings.TrimSpace(r.License)
	p.Categories = strings.Fields(r.Categories)
	setFirstDOI(p, r.DOI)
	setByline(p, r.Authors)
	if reason := p.oversized(); reason != "" {
		return nil, reason
	}
	if n := len(r.Versions); n > 0 {
		p.Published, _ = parseSubmitDate(r.Versions[0].Created)
		p.Updated, _ = parseSubmitDate(r.Versions[n-1].Created)
		if v, err := strconv.Atoi(strings.TrimPrefix(r.Versions[n-1].Version, "v")); err == nil {
			p.Version = v
		}
	}
	return p, ""
}

// newArxivPaper starts the paper a record describes from its arXiv id and
// title. It returns why the record is malformed instead when either is
// unusable: a paper without an id cannot be woven with other sources, and
// one without a title cannot be shown.
func newArxivPaper(rawID, title string) (*Paper, string) {
	rawID = strings.TrimSpace(rawID)
	if rawID == "" {
		return nil, "missing arXiv id"
	}
	id, version, err := arxivid.Parse(rawID)
	if err != nil {
		return nil, "invalid arXiv id " + quoteShort(rawID)
	}
	title = clean(title)
	if title == "" {
		return nil, "missing title for " + id
	}
	return &Paper{ArxivID: id, Version: version, Title: title}, ""
}

// bylineAuthors splits an arXiv byline into authors with their
// affiliations, and reports whether the list is the full one (not cut
// short by "et al.").
func bylineAuthors(byline string) ([]Author, bool) {
	parsed, truncated := names.ParseByline(byline)
	authors := make([]Author, len(parsed))
	for i, a := range parsed {
		authors[i].Name = a.Name
		if len(a.Affiliations) == 0 {
			continue
		}
		authors[i].Affiliations = make([]Affiliation, len(a.Affiliations))
		for j, raw := range a.Affiliations {
			authors[i].Affiliations[j].Raw = clean(raw)
		}
	}
	return authors, len(authors) > 0 && !truncated
}

// setByline sets p's byline, as printed but with TeX accents decoded, and
// the authors it names.
func setByline(p *Paper, byline string) {
	p.Byline = clean(names.DecodeTeX(byline))
	p.Authors, p.AuthorsComplete = bylineAuthors(byline)
}

// setFirstDOI files the first of the DOIs in s under p. arXiv metadata
// lists a DOI for each published version, blank-separated, when an erratum
// followed the article; the first is the article.
func setFirstDOI(p *Paper, s string) {
	if doi, _, _ := strings.Cut(strings.TrimSpace(s), " "); doi != "" {
		setDOI(p, doi)
	}
}

// zoneHours are the offsets, in hours east of UTC, of the time zone
// abbreviations common in the mail headers arXiv copied into early .abs
// files. Ambiguous ones (IST, CST outside the US) take their most common
// meaning there; an hour off is of no consequence to a submission date.
var zoneHours = map[string]int{
	"UT": 0, "UTC": 0, "GMT": 0, "Z": 0, "WET": 0,
	"BST": 1, "MET": 1, "CET": 1, "MEZ": 1,
	"MEST": 2, "MESZ": 2, "CEST": 2, "METDST": 2, "EET": 2,
	"MSK": 3, "MSD": 4, "JST": 9, "KST": 9,
	"AST": -4, "ADT": -3, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5,
	"MST": -7, "MDT": -6, "PST": -8, "PDT": -7, "HST": -10,
}

// submitDate accumulates the parts of a date as parseSubmitDate finds them.
type submitDate struct {
	day, month, year     int
	hour, min, sec       int
	offset               int // seconds east of UTC
	haveTime, haveOffset bool
	zone                 string
}

// parseSubmitDate reads a submission date as arXiv metadata prints it.
// Recent ones are RFC 1123 in GMT ("Mon, 2 Apr 2007 19:18:42 GMT"), but
// early .abs files copy the submitter's mail header in dozens of shapes
// ("Tue Dec 31 23:54:17 MET 1991 +0100", "3 Feb 93 10:11 -0500",
// "Mon, 16 Sep 1996 11:41:37 CST (16kb)"), so rather than trying layouts
// it picks out the day, month, year, time and zone wherever they stand.
// It reports false when it finds no valid day, month and year.
func parseSubmitDate(s string) (time.Time, bool) {
	var d submitDate
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ',' || r == '(' || r == ')' || r == '"'
	}) {
		d.token(tok)
	}
	if d.year == 0 || d.month == 0 || d.day == 0 {
		return time.Time{}, false
	}
	t := time.Date(d.year, time.Month(d.month), d.day, d.hour, d.min, d.sec, 0, time.UTC)
	if t.Day() != d.day {
		return time.Time{}, false // 31 Feb and the like
	}
	offset := d.offset
	if !d.haveOffset {
		offset = zoneHours[d.zone] * 3600
	}
	return t.Add(-time.Duration(offset) * time.Second), true
}

// token takes in one blank-separated piece of a date.
func (d *submitDate) token(tok string) {
	switch c := tok[0]; {
	case c == '+' || c == '-':
		d.setOffset(tok)
	case c >= '0' && c <= '9':
		d.number(tok)
	default:
		// A zone glued to its offset ("GMT+0100") or a dash-separated
		// date ("12-MAR-1993") splits at the sign or dash.
		if i := strings.IndexAny(tok, "+-"); i > 0 {
			d.token(tok[:i])
			if tok[i] == '-' && !isOffset(tok[i:]) {
				for _, part := range strings.Split(tok[i+1:], "-") {
					if part != "" {
						d.token(part)
					}
				}
				return
			}
			d.token(tok[i:])
			return
		}
		d.word(tok)
	}
}

// number takes in a token that starts with a digit: a time, a day or a
// year, or a dash-separated date.
func (d *submitDate) number(tok string) {
	if strings.IndexByte(tok, ':') > 0 {
		d.setTime(tok)
		return
	}
	if strings.IndexByte(tok, '-') > 0 {
		for _, part := range strings.Split(tok, "-") {
			if part != "" {
				d.token(part)
			}
		}
		return
	}
	n, err := strconv.Atoi(tok)
	if err != nil {
		return // sizes such as "37kb"
	}
	switch {
	case len(tok) == 4 && d.year == 0:
		d.year = n
	case len(tok) <= 2 && d.day == 0 && n >= 1 && n <= 31:
		d.day = n
	case d.year == 0 && len(tok) <= 2:
		// arXiv began in 1991: two-digit years from 91 on are the 1990s,
		// the others this century ("13 Sep 0" is 2000).
		d.year = 2000 + n
		if n >= 91 {
			d.year = 1900 + n
		}
	}
}

// setTime takes in "15:04", "15:04:05" or "15:04:05.99", possibly with an
// offset glued on ("10:11:12+0100").
func (d *submitDate) setTime(tok string) {
	if d.haveTime {
		return
	}
	if i := strings.IndexAny(tok, "+-"); i > 0 {
		d.setOffset(tok[i:])
		tok = tok[:i]
	}
	tok, _, _ = strings.Cut(tok, ".")
	parts := strings.Split(tok, ":")
	if len(parts) > 3 {
		return
	}
	var hms [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return
		}
		hms[i] = n
	}
	if hms[0] > 23 || hms[1] > 59 || hms[2] > 60 {
		return
	}
	d.hour, d.min, d.sec, d.haveTime = hms[0], hms[1], hms[2], true
}

// isOffset reports whether tok is a numeric zone offset: a sign and one to
// four digits, possibly with a colon ("+0100", "-5", "+09:00").
func isOffset(tok string) bool {
	digits := strings.Replace(tok[1:], ":", "", 1)
	if len(digits) == 0 || len(digits) > 4 {
		return false
	}
	for i := range len(digits) {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// setOffset takes in a numeric zone offset; the first one found counts.
func (d *submitDate) setOffset(tok string) {
	if d.haveOffset || !isOffset(tok) {
		return
	}
	digits := strings.Replace(tok[1:], ":", "", 1)
	n, _ := strconv.Atoi(digits)
	h, m := n, 0
	if len(digits) > 2 {
		h, m = n/100, n%100
	}
	if h > 14 || m > 59 {
		return
	}
	d.offset = h*3600 + m*60
	if tok[0] == '-' {
		d.offset = -d.offset
	}
	d.haveOffset = true
}

// months are the English month names as three lowercase letters, January
// first.
var months = [...]string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

// word takes in a month name (any case, abbreviated or not) or a zone
// abbreviation; weekday names and the rest are ignored.
func (d *submitDate) word(tok string) {
	if d.month == 0 && len(tok) >= 3 {
		prefix := strings.ToLower(tok[:3])
		for i, m := range months {
			if prefix == m {
				d.month = i + 1
				return
			}
		}
	}
	if up := strings.ToUpper(tok); d.zone == "" {
		if _, ok := zoneHours[up]; ok {
			d.zone = up
		}
	}
}
