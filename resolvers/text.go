package resolvers

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Limits on string arguments. Every string argument of the schema is
// checked against one of the kinds below before it is parsed or reaches
// the database (TestBadText walks the schema to keep it so): it must be
// valid UTF-8 and hold no control character (tab, line feed and carriage
// return excepted in search text), no bidirectional control (U+202A–U+202E,
// U+2066–U+2069, U+061C, U+200E, U+200F), no noncharacter, no U+FFFD (what
// a JSON decoder makes of invalid UTF-8 and of a lone surrogate escape) and
// no more than maxMarks combining marks in a row. Accents, other scripts
// and emoji are text like any other.
const (
	// MaxIDBytes bounds ids, references, DOIs and cursors: node, nodes,
	// paper, papers, researcher, institution, collaborationPath's from
	// and to, the filter's researcher and institution, every after and
	// before. The longest real ones (a DOI, an institution's name) are a
	// few hundred bytes.
	MaxIDBytes = 1024
	// MaxCodeBytes bounds category codes (category, filter.categories,
	// Researcher.papers' category); the longest is 18 bytes.
	MaxCodeBytes = 64
	// MaxQueryRunes bounds the query of searchPapers, searchResearchers
	// and searchInstitutions, in characters.
	MaxQueryRunes = 300
	// MaxPrefixRunes bounds suggest's prefix, in characters.
	MaxPrefixRunes = 200
	// MaxCategories is the most codes filter.categories takes (arXiv has
	// about 160).
	MaxCategories = 200
	// maxMarks is the most combining marks allowed in a row: stacked
	// diacritics of real scripts need three or four.
	maxMarks = 6
	// echoBytes is the most of an argument an error message quotes.
	echoBytes = 100
)

// textKind is a kind of string argument: its bound, in bytes or in
// characters, and whether it is free text, where tabs and line breaks
// separate words.
type textKind struct {
	max   int
	runes bool
	text  bool
}

var (
	idText     = textKind{max: MaxIDBytes}
	codeText   = textKind{max: MaxCodeBytes}
	queryText  = textKind{max: MaxQueryRunes, runes: true, text: true}
	prefixText = textKind{max: MaxPrefixRunes, runes: true, text: true}
)

// checkText is badInput naming arg when s is not a well-formed string of
// kind k.
func checkText(arg, s string, k textKind) error {
	if k.runes && len(s) > k.max*utf8.UTFMax || !k.runes && len(s) > k.max {
		return tooLong(arg, k)
	}
	if !utf8.ValidString(s) {
		return badInput(arg, "not valid UTF-8")
	}
	n, marks := 0, 0
	for _, r := range s {
		n++
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) {
			if marks++; marks > maxMarks {
				return badInput(arg, "more than %d combining marks in a row", maxMarks)
			}
		} else {
			marks = 0
		}
		switch {
		case k.text && (r == '\t' || r == '\n' || r == '\r'):
		case unicode.IsControl(r):
			return badInput(arg, "holds the control character %U", r)
		case unicode.Is(unicode.Bidi_Control, r):
			return badInput(arg, "holds the bidirectional control %U", r)
		case unicode.Is(unicode.Noncharacter_Code_Point, r):
			return badInput(arg, "holds the noncharacter %U", r)
		case r == utf8.RuneError:
			return badInput(arg, "holds %U, the mark of invalid UTF-8 or a lone surrogate", r)
		}
	}
	if k.runes && n > k.max {
		return tooLong(arg, k)
	}
	return nil
}

func tooLong(arg string, k textKind) error {
	unit := "bytes"
	if k.runes {
		unit = "characters"
	}
	return badInput(arg, "too long: at most %d %s", k.max, unit)
}

// QuoteInput is s quoted for an error message, cut to its first
// echoBytes bytes (at a character boundary) so that no message repeats
// a huge argument.
func QuoteInput(s string) string {
	if len(s) <= echoBytes {
		return strconv.Quote(s)
	}
	cut := echoBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
