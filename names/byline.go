package names

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Author is one parsed byline entry.
type Author struct {
	// Name is the display name with TeX accents decoded and spacing
	// normalised: "C. Balázs", "J.-B. Zuber".
	Name string
	// Affiliations are the affiliation strings that apply to this author,
	// in byline order, with TeX accents decoded.
	Affiliations []string
}

// markerList matches a parenthesis that only points into a numbered list of
// affiliations: "(1)", "(1,2)", "(1 and 3)".
var markerList = regexp.MustCompile(`^\d+(?:\s*(?:,|;|&|and)\s*\d+)*$`)

// appendixBy matches a parenthesis that adds authors: "(with an appendix by
// S.Katz)".
var appendixBy = regexp.MustCompile(`^with\b.*?\bby\s+(.+)$`)

// number finds the affiliation numbers in a marker list.
var number = regexp.MustCompile(`\d+`)

// ParseByline splits an arXiv byline into authors. Names are separated by
// commas, semicolons, colons, "and" and "&". A parenthesis after a name is an
// affiliation that, by arXiv convention, applies to every name since the
// previous parenthesis ("A, B (X), C (Y)" puts A and B at X); numbered
// forms such as "A (1,2), B (2) ((1) X, (2) Y)" are resolved through the
// closing list. "et al." is dropped and reported as truncated; a
// collaboration stays an entry of its own, and a lone "Jr." joins the name
// before it.
func ParseByline(s string) (authors []Author, truncated bool) {
	var p bylineParser
	p.parse(strings.Join(strings.Fields(s), " "))
	p.resolveMarkers()
	return p.authors, p.truncated
}

// bylineParser holds the state of one ParseByline call.
type bylineParser struct {
	authors   []Author
	truncated bool
	// pending are the authors since the last parenthesis; recipients are
	// the authors the last parenthesis applied to.
	pending, recipients []int
	// markers holds the affiliation numbers each author points to, and
	// numbered the numbered affiliation list they point into.
	markers  map[int][]string
	numbered map[string]string
}

func (p *bylineParser) parse(s string) {
	depth, textStart, groupStart := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			if depth == 0 {
				p.text(s[textStart:i])
				groupStart = i + 1
			}
			depth++
		case ')':
			if depth == 0 {
				continue // a stray closing parenthesis
			}
			depth--
			if depth == 0 {
				p.group(s[groupStart:i])
				textStart = i + 1
			}
		}
	}
	if depth > 0 {
		p.group(s[groupStart:])
	} else {
		p.text(s[textStart:])
	}
}

// text adds the names in a stretch of byline outside parentheses.
func (p *bylineParser) text(s string) {
	for _, piece := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == ':' }) {
		var name []string
		for _, w := range append(strings.Fields(piece), "and") {
			if w == "and" || w == "&" {
				p.name(strings.Join(name, " "))
				name = name[:0]
				continue
			}
			name = append(name, w)
		}
	}
}

// name adds one byline entry.
func (p *bylineParser) name(s string) {
	lower := strings.ToLower(s)
	for _, etal := range []string{"et al.", "et al", "et. al.", "et.al."} {
		if strings.HasSuffix(lower, etal) {
			p.truncated = true
			s = strings.TrimSpace(s[:len(s)-len(etal)])
			break
		}
	}
	s = strings.TrimLeft(normalizeSpacing(DecodeTeX(s)), "-")
	for _, lead := range []string{"presented by ", "on behalf of "} {
		if len(s) > len(lead) && strings.EqualFold(s[:len(lead)], lead) {
			s = strings.TrimSpace(s[len(lead):])
		}
	}
	switch {
	case !strings.ContainsFunc(s, unicode.IsLetter):
		return // page counts and stray punctuation from broken header lines
	case strings.EqualFold(s, "others"):
		p.truncated = true
		return
	case isSuffix(s) && len(p.authors) > 0:
		p.authors[len(p.authors)-1].Name += " " + s
		return
	}
	p.pending = append(p.pending, len(p.authors))
	p.authors = append(p.authors, Author{Name: s})
}

// group handles the contents of one top-level parenthesis.
func (p *bylineParser) group(s string) {
	s = strings.TrimSpace(s)
	isMarker := markerList.MatchString(s)
	if numbered := numberedList(s); numbered != nil && !isMarker {
		p.numbered = numbered
		return
	}
	if m := appendixBy.FindStringSubmatch(s); m != nil {
		p.text(m[1])
		return
	}
	to := p.pending
	if len(to) == 0 {
		to = p.recipients // "A (X) (Y)": both apply to A
	}
	if isMarker {
		if p.markers == nil {
			p.markers = make(map[int][]string)
		}
		for _, i := range to {
			p.markers[i] = append(p.markers[i], number.FindAllString(s, -1)...)
		}
	} else if s != "" {
		affiliation := DecodeTeX(s)
		for _, i := range to {
			p.authors[i].Affiliations = append(p.authors[i].Affiliations, affiliation)
		}
	}
	p.recipients, p.pending = to, nil
}

// resolveMarkers replaces affiliation numbers by the affiliations they
// point to; numbers the list does not define are dropped.
func (p *bylineParser) resolveMarkers() {
	for i := range p.authors {
		for _, n := range p.markers[i] {
			if a, ok := p.numbered[n]; ok {
				p.authors[i].Affiliations = append(p.authors[i].Affiliations, a)
			}
		}
	}
}

// numberedList parses a numbered affiliation list such as "(1) CERN, (2)
// DESY", "(1) CERN; (2) DESY", "1 CERN; 2 DESY" or "1: CERN, 2: DESY" into
// a map from number to affiliation. It returns nil if s does not start with
// the number 1.
func numberedList(s string) map[string]string {
	type span struct{ start, end int } // of a number marker in s
	var marks []span
	for n := 1; ; n++ {
		from := 0
		if len(marks) > 0 {
			from = marks[len(marks)-1].end
		}
		start, end := findMarker(s, from, strconv.Itoa(n))
		if start < 0 || n == 1 && start != 0 {
			break
		}
		marks = append(marks, span{start, end})
	}
	if len(marks) == 0 {
		return nil
	}
	list := make(map[string]string, len(marks))
	for i, m := range marks {
		end := len(s)
		if i+1 < len(marks) {
			end = marks[i+1].start
		}
		a := strings.TrimRight(strings.TrimSpace(s[m.end:end]), ",;")
		a = strings.TrimSuffix(a, " and")
		list[strconv.Itoa(i+1)] = DecodeTeX(strings.TrimSpace(a))
	}
	return list
}

// findMarker finds the marker of affiliation number n in s at or after from:
// "(n)" anywhere, or a bare "n" followed by a blank, colon or parenthesis at
// the start of s or after a comma or semicolon. It returns the marker's
// start and end, or -1, -1.
func findMarker(s string, from int, n string) (int, int) {
	for i := from; i < len(s); i++ {
		if strings.HasPrefix(s[i:], "("+n+")") {
			return i, i + len(n) + 2
		}
		if !strings.HasPrefix(s[i:], n) {
			continue
		}
		after := i + len(n)
		if after >= len(s) || !strings.ContainsRune(" :)", rune(s[after])) {
			continue
		}
		before := strings.TrimRight(s[:i], " ")
		if before == "" || strings.HasSuffix(before, ",") || strings.HasSuffix(before, ";") {
			return i, after + 1
		}
	}
	return -1, -1
}
