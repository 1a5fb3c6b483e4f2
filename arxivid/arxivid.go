// Package arxivid parses the many ways people write arXiv identifiers and
// DOIs, and builds the slugs papergraph uses in its URLs.
package arxivid

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/papergraph/papergraph/names"
)

// ErrSyntax is wrapped by every error Parse returns.
var ErrSyntax = errors.New("not an arXiv id")

// newID matches a new-style id (YYMM.NNNN before 2015, YYMM.NNNNN since)
// with an optional version and an optional title slug after it.
var newID = regexp.MustCompile(`^(\d{2})(\d{2})\.(\d{4,5})(?:v(\d+))?(?:-[a-z0-9-]*)?$`)

// oldID matches an old-style id: an archive, an optional subject class that
// is not part of the canonical id ("math.CA", "cond-mat.str-el"), seven
// digits YYMMNNN, an optional version and an optional title slug.
var oldID = regexp.MustCompile(`^([a-z]+(?:-[a-z]+)*)(?:\.[A-Za-z]+(?:-[A-Za-z]+)*)?/(\d{2})(\d{2})(\d{3})(?:v(\d+))?(?:-[a-z0-9-]*)?$`)

// Parse accepts the forms of an arXiv id that users paste ("2111.04949v2",
// "arXiv:hep-th/9407087", "math.CA/0611800", abs and pdf URLs, slugs such as
// "2111.04949-a-survey") and returns the canonical id without version
// ("2111.04949", "math/0611800") and the version, 0 if none is given.
func Parse(s string) (id string, version int, err error) {
	raw := s
	s = strings.TrimSpace(s)
	s = stripURL(s)
	if len(s) >= 6 && strings.EqualFold(s[:6], "arxiv:") {
		s = s[6:]
	}
	if m := newID.FindStringSubmatch(s); m != nil {
		month, _ := strconv.Atoi(m[2])
		yymm := m[1] + m[2]
		// Five-digit numbers started in January 2015; new-style ids in April 2007.
		fiveDigits := yymm >= "1501"
		if month >= 1 && month <= 12 && yymm >= "0704" && (len(m[3]) == 5) == fiveDigits {
			return withVersion(yymm+"."+m[3], m[4], raw)
		}
	}
	if m := oldID.FindStringSubmatch(s); m != nil {
		month, _ := strconv.Atoi(m[3])
		yymm := m[2] + m[3]
		// Old-style ids ran from 1991 (hep-lat/9107001 is among the first) to
		// March 2007.
		if month >= 1 && month <= 12 && (yymm >= "9101" || yymm <= "0703") {
			return withVersion(m[1]+"/"+yymm+m[4], m[5], raw)
		}
	}
	return "", 0, fmt.Errorf("%w: %q (want YYMM.NNNNN or archive/YYMMNNN, optionally with vN, \"arXiv:\" or an arxiv.org URL)", ErrSyntax, raw)
}

// withVersion returns id with the version spelt by digits (the text after
// "v", empty for none). Versions start at 1.
func withVersion(id, digits, raw string) (string, int, error) {
	if digits == "" {
		return id, 0, nil
	}
	v, err := strconv.Atoi(digits)
	if err != nil || v < 1 {
		return "", 0, fmt.Errorf("%w: %q has version v%s (want v1 or later)", ErrSyntax, raw, digits)
	}
	return id, v, nil
}

// stripURL reduces an arxiv.org abs, pdf or html URL (with or without the
// scheme, any arxiv.org host) to the id it names, and returns anything
// else unchanged.
func stripURL(s string) string {
	rest := s
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	host, path, ok := strings.Cut(rest, "/")
	host = strings.ToLower(host)
	if !ok || host != "arxiv.org" && !strings.HasSuffix(host, ".arxiv.org") {
		return s
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	for _, kind := range []string{"abs/", "pdf/", "html/", "format/"} {
		if strings.HasPrefix(path, kind) {
			path = strings.TrimSuffix(strings.TrimSuffix(path[len(kind):], "/"), ".pdf")
			if p, err := url.PathUnescape(path); err == nil {
				return p
			}
			return path
		}
	}
	return s
}

// maxSlug is the longest title slug Slug and TitleSlug produce.
const maxSlug = 80

// Slug builds the URL slug of a paper: its canonical id, a dash and the
// slug of its title ("2111.04949-a-survey-and-empirical-evaluation",
// "hep-th/9407087-exact-black-string"), or only the id when the title has
// no usable words.
func Slug(id, title string) string {
	if t := TitleSlug(title); t != "" {
		return id + "-" + t
	}
	return id
}

// TitleSlug returns the slug of any text: its lowercase ASCII words, TeX
// accents decoded and diacritics folded, joined by dashes and cut at a word
// boundary to at most 80 bytes. TitleSlug("Shuqing Lin") is "shuqing-lin"
// and TitleSlug("Balázs") is "balazs".
func TitleSlug(s string) string {
	var b strings.Builder
	for _, w := range names.Words(names.DecodeTeX(s)) {
		w = strings.Map(func(r rune) rune {
			if r < 0x80 {
				return r
			}
			return -1
		}, w)
		switch {
		case w == "":
		case b.Len() == 0:
			if len(w) > maxSlug {
				w = w[:maxSlug]
			}
			b.WriteString(w)
		case b.Len()+1+len(w) <= maxSlug:
			b.WriteString("-" + w)
		default:
			return b.String()
		}
	}
	return b.String()
}

// doiPrefixes are the ways a DOI is introduced, lowercase.
var doiPrefixes = []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi.org/", "doi:"}

// doiPattern matches a DOI: "10.", a registrant code, a slash and a suffix
// without blanks, separators, control or format characters.
var doiPattern = regexp.MustCompile(`^10\.\d{4,9}(?:\.\d+)*/[^\s\p{Z}\p{C}]+$`)

// NormalizeDOI accepts a DOI as printed ("10.1103/PhysRevD.76.013009",
// "doi:10...", "https://doi.org/10...") and returns it bare and lowercase,
// the form in which DOIs compare equal. It reports false for anything that
// is not a DOI.
func NormalizeDOI(s string) (string, bool) {
	if !utf8.ValidString(s) {
		return "", false
	}
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	for _, p := range doiPrefixes {
		if strings.HasPrefix(lower, p) {
			lower = strings.TrimSpace(lower[len(p):])
			if strings.Contains(p, "/") {
				// Unescaped, a %50 is a P: lowercase what the escape hid.
				if u, err := url.PathUnescape(lower); err == nil && utf8.ValidString(u) {
					lower = strings.ToLower(u)
				}
			}
			break
		}
	}
	if !doiPattern.MatchString(lower) {
		return "", false
	}
	return lower, true
}
