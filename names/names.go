// Package names parses arXiv author bylines and decides whether two printed
// names may belong to the same person.
package names

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// foldedLetters spells the letters that Unicode does not decompose into a
// base letter and a mark.
var foldedLetters = map[rune]string{
	'ß': "ss", 'ø': "o", 'Ø': "o", 'ł': "l", 'Ł': "l", 'æ': "ae", 'Æ': "ae",
	'œ': "oe", 'Œ': "oe", 'đ': "d", 'Đ': "d", 'ð': "d", 'Ð': "d", 'þ': "th",
	'Þ': "th", 'ı': "i", 'ȷ': "j", 'ħ': "h", 'Ħ': "h",
}

// Words returns the lowercase words of s with diacritics folded ("Balázs"
// gives "balazs", "Øbro" gives "obro", "Groß" gives "gross"). Anything that
// is not a letter or a digit separates words; letters of non-Latin scripts
// are kept as they are.
func Words(s string) []string {
	var words []string
	var w strings.Builder
	flush := func() {
		if w.Len() > 0 {
			words = append(words, w.String())
			w.Reset()
		}
	}
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case foldedLetters[r] != "":
			w.WriteString(foldedLetters[r])
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			w.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return words
}

// particles are the surname prefixes that belong to the family name when
// they stand before the last word ("van Beethoven", "Di Vecchia").
var particles = map[string]bool{
	"van": true, "von": true, "der": true, "den": true, "de": true, "del": true,
	"della": true, "di": true, "da": true, "du": true, "des": true, "dos": true,
	"das": true, "do": true, "la": true, "le": true, "ten": true, "ter": true,
	"zu": true, "vander": true,
	"Van": true, "Von": true, "Der": true, "Den": true, "De": true, "Del": true,
	"Della": true, "Di": true, "Da": true, "Du": true, "Des": true, "Dos": true,
	"Ter": true, "Ten": true,
}

// suffixes are generational suffixes, which are no part of the surname.
var suffixes = map[string]bool{"jr": true, "jnr": true, "sr": true, "ii": true, "iii": true, "iv": true}

// isSuffix reports whether word is a generational suffix, with or without
// its full stop.
func isSuffix(word string) bool {
	return suffixes[strings.ToLower(strings.TrimRight(word, ".,"))]
}

// isCollective reports whether a byline entry names a group rather than a
// person ("The BABAR Collaboration").
func isCollective(name string) bool {
	for _, w := range Words(name) {
		if w == "collaboration" || w == "consortium" {
			return true
		}
	}
	return false
}

// Split returns the given-name part and the surname of a display name:
// "J.-B. Zuber" gives "J.-B." and "Zuber", "C.Itzykson" gives "C." and
// "Itzykson", "Ludwig van Beethoven" gives "Ludwig" and "van Beethoven".
// Generational suffixes ("Jr.", "III") are dropped, and a collaboration is
// all surname.
func Split(name string) (given, family string) {
	name = normalizeSpacing(DecodeTeX(name))
	if isCollective(name) {
		return "", name
	}
	words := strings.Fields(name)
	for len(words) > 1 && isSuffix(words[len(words)-1]) {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return "", ""
	}
	words[len(words)-1] = strings.TrimRight(words[len(words)-1], ",")
	start := len(words) - 1
	for start > 1 && particles[words[start-1]] {
		start--
	}
	return strings.Join(words[:start], " "), strings.Join(words[start:], " ")
}

// normalizeSpacing puts a space after every full stop that runs into the
// next word ("J.P.Hague" becomes "J. P. Hague", "J.-B." stays), reads TeX
// ties as blanks and en dashes as hyphens ("Ruiz--Altaba"), collapses runs
// of blanks and drops the full stop that ends a sentence rather than an
// initial ("Sanchez de Santos.").
func normalizeSpacing(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "~", " "), "--", "-")
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		b.WriteRune(r)
		if r == '.' && i+1 < len(rs) && unicode.IsLetter(rs[i+1]) {
			b.WriteByte(' ')
		}
	}
	words := strings.Fields(b.String())
	if n := len(words); n > 1 {
		last := words[n-1]
		if len([]rune(last)) > 3 && strings.HasSuffix(last, ".") && !isSuffix(last) {
			words[n-1] = strings.TrimSuffix(last, ".")
		}
	}
	return strings.Join(words, " ")
}

// Keys returns the keys of a name, taking it apart once. key is the
// same-person key: the folded words of the given names then of the
// surname, joined by single spaces ("J.-B. Zuber" gives "j b zuber",
// "Balázs Ö. Kovács Jr." gives "balazs o kovacs"). family is the folded
// surname ("van beethoven"), the key that groups candidates for the same
// person.
func Keys(name string) (key, family string) {
	given, fam := Split(name)
	fw := Words(fam)
	return strings.Join(append(Words(given), fw...), " "), strings.Join(fw, " ")
}

// givenName is one given name or initial.
type givenName struct {
	word    string // folded: "j", "yu", "jean"
	initial bool   // abbreviated: "J.", "J", "Yu."
}

// givenNames splits the given-name part of a name (as Split returns it)
// into its names, taking hyphenated names apart ("J.-B." is two initials).
func givenNames(given string) []givenName {
	var out []givenName
	for _, part := range strings.FieldsFunc(given, func(r rune) bool { return r == ' ' || r == '-' }) {
		for i, w := range Words(part) {
			abbreviated := i == 0 && strings.HasSuffix(part, ".")
			out = append(out, givenName{word: w, initial: abbreviated || len([]rune(w)) == 1})
		}
	}
	return out
}

// InitialsOnly reports whether a name has given names and every one of them
// is an initial or an abbreviation: true for "J.-B. Zuber" and "Yu. N.
// Kosovtsov", false for "Jean-Bernard Zuber", "Jean B. Zuber" and "Sudha".
func InitialsOnly(name string) bool { return Parse(name).InitialsOnly() }

// Name is a name taken apart once, for code that compares many names.
type Name struct {
	family string
	given  []givenName
	full   string // given names run together when none is an initial
}

// Parse takes a display name apart for Compatible and InitialsOnly.
func Parse(name string) Name {
	given, family := Split(name)
	g := givenNames(given)
	return Name{family: strings.Join(Words(family), " "), given: g, full: joinedFull(g)}
}

// FamilyKey returns the folded family name, as Keys does.
func (n Name) FamilyKey() string { return n.family }

// FirstInitial returns the folded first letter of the first given name, or
// "" when there is none. Compatible names share it, so it can bucket
// candidates before pairwise comparison.
func (n Name) FirstInitial() string {
	if len(n.given) == 0 {
		return ""
	}
	r := []rune(n.given[0].word)
	return string(r[0])
}

// InitialsOnly is the method form of the function InitialsOnly.
func (n Name) InitialsOnly() bool {
	given := n.given
	for _, g := range given {
		if !g.initial {
			return false
		}
	}
	return len(given) > 0
}

// Compatible reports whether two names may belong to the same person: the
// surnames fold to the same key and the given names agree one by one, where
// an initial matches any name that starts with it and full names must be
// equal. The shorter list of given names may stop early, so "J. Zuber",
// "J.-B. Zuber" and "Jean-Bernard Zuber" are all compatible, while
// "J. Zuber" and "K. Zuber" are not, nor "Jean Zuber" and "John Zuber".
func Compatible(a, b string) bool { return Parse(a).Compatible(Parse(b)) }

// Compatible is the method form of the function Compatible.
func (n Name) Compatible(o Name) bool {
	if n.family == "" || n.family != o.family {
		return false
	}
	if n.full != "" && n.full == o.full {
		return true // "Xiaolin" and "Xiao-Lin"
	}
	ga, gb := n.given, o.given
	for i := 0; i < len(ga) && i < len(gb); i++ {
		x, y := ga[i], gb[i]
		switch {
		case x.initial && strings.HasPrefix(y.word, x.word):
		case y.initial && strings.HasPrefix(x.word, y.word):
		case x.word == y.word:
		default:
			return false
		}
	}
	return true
}

// joinedFull returns the given names run together when none is an initial,
// and "" otherwise.
func joinedFull(given []givenName) string {
	var b strings.Builder
	for _, g := range given {
		if g.initial {
			return ""
		}
		b.WriteString(g.word)
	}
	return b.String()
}
