package db

import (
	"strings"
	"unicode/utf8"
)

// TeX and LaTeX markup in titles and abstracts is folded before the
// letters are (searchFold), in the index and in queries alike, so that
// "Kucha\v{r}", "G{\"o}del" and "\emph{duality}" are the words kuchar,
// godel and duality. The rules are regular expressions applied in order,
// each to every match, leftmost-longest; migration 0024 holds a copy for
// PostgreSQL's tex_fold (TestTexRulesMatchMigration checks it), where
// regexp_replace matches the same way. Every rule needs a backslash, so
// text without one is left as it is. Changing a rule needs a new
// migration that replaces tex_fold and rebuilds the index.
//
//  1. Font, box and sizing commands are dropped, their argument kept:
//     "\emph{x}" is x, "\mathrm{d}" is d, "\left(" is "(".
//  2. An accent over a letter (or dotless \i, \j), with or without braces
//     around it and its letter, is the letter: \v{r}, \v r, \"o, {\"o},
//     \'{\i}.
//  3. å and Å written \aa or \AA are a.
//  4. The other letters TeX writes as commands (\o, \l, \ss, \ae, \oe,
//     \i, \j, upper case too) are their letters, when the command ends
//     the way TeX ends it (a space, {}, a closing brace or the end).
//
// Math is indexed by its letters and words, as before: $, ^, _ and the
// backslash of \alpha separate words like any other punctuation.
//
// Go folds with the scanners of texScans, one a rule, which match
// exactly what the rule's expression matches (FuzzTexFold compares
// them): the expressions cost most of the full-text index's build.
var texRules = []texRule{
	{`\\(?:` + strings.Join(texFontCommands, "|") + `)([^a-zA-Z]|$)`, ` $1`},
	{`\{?\\(?:['"^` + "`" + `~=.]|[vuHckdbrt](?:\s+|\{))\s*\{?\s*\\?([a-zA-Z])\s*\}?\}?`, `$1`},
	{`\{?\\(?:aa|AA)(?:\s+|\{\}|\}|$)`, `a`},
	{`\{?\\(ss|ae|AE|oe|OE|o|O|l|L|i|j)(?:\s+|\{\}|\}|$)`, `$1`},
}

// texFontCommands are the commands of rule 1.
var texFontCommands = []string{
	"emph", "em", "textit", "textbf", "textrm", "textsc", "textsf", "texttt", "textsl", "textup", "textnormal", "text",
	"mathrm", "mathbf", "mathit", "mathcal", "mathbb", "mathfrak", "mathsf", "mathtt", "mathscr", "rm", "it", "bf", "sl", "sc", "sf", "tt", "cal", "bm",
	"boldsymbol", "mbox", "hbox", "operatorname", "left", "right", "big", "Big", "bigg", "Bigg",
}

// texRule replaces every match of pattern by replacement ($1 is the
// first group).
type texRule struct{ pattern, replacement string }

// A texScan is a rule's expression at the backslash s[i]: the end of the
// match that starts there (or, when braced, at a '{' just before it) and
// what replaces it, or ok false when none does. Every match of every
// rule holds a backslash, and a match that may start with '{' has the
// backslash right after it.
type texScan struct {
	braced bool
	at     func(s string, i int) (end int, repl string, ok bool)
}

// texScans are the rules of texRules, in their order.
var texScans = []texScan{{false, texFontAt}, {true, texAccentAt}, {true, texRingAt}, {true, texLetterAt}}

// texFold is s with its TeX markup folded by texRules.
func texFold(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	for _, r := range texScans {
		s = r.replaceAll(s)
	}
	return s
}

// replaceAll replaces the rule's matches in s from left to right, each
// search starting where the last match ended, as regexp's ReplaceAll
// does; since every match holds a backslash, the leftmost one is at the
// first backslash where the rule matches.
func (r texScan) replaceAll(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := strings.IndexByte(s, '\\'); i >= 0; {
		end, repl, ok := r.at(s, i)
		next := i + 1
		if ok {
			start := i
			if r.braced && i > done && s[i-1] == '{' {
				start = i - 1
			}
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[done:start])
			b.WriteString(repl)
			done, next = end, end
		}
		if next >= len(s) {
			break
		}
		j := strings.IndexByte(s[next:], '\\')
		if j < 0 {
			break
		}
		i = next + j
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isTexSpace is regexp's \s: ASCII tab, newline, form feed, carriage
// return and space.
func isTexSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// skipSpaces is the first index from i of s that is not a space (\s*).
func skipSpaces(s string, i int) int {
	for i < len(s) && isTexSpace(s[i]) {
		i++
	}
	return i
}

// texFontSet holds texFontCommands.
var texFontSet = func() map[string]bool {
	m := make(map[string]bool, len(texFontCommands))
	for _, c := range texFontCommands {
		m[c] = true
	}
	return m
}()

// texFontAt is rule 1: a command of texFontCommands, which must be the
// whole run of letters after the backslash since a non-letter or the end
// follows it, and that character (one rune, or an invalid byte) kept
// after a space.
func texFontAt(s string, i int) (int, string, bool) {
	k := i + 1
	for k < len(s) && isASCIILetter(s[k]) {
		k++
	}
	if !texFontSet[s[i+1:k]] {
		return 0, "", false
	}
	if k == len(s) {
		return k, " ", true
	}
	_, w := utf8.DecodeRuneInString(s[k:])
	return k + w, " " + s[k:k+w], true
}

// texAccentAt is rule 2. Every optional part is taken where it can be:
// leaving one out never lets a longer match through, because what
// follows it cannot match the character it would have taken.
func texAccentAt(s string, i int) (int, string, bool) {
	k := i + 1
	if k >= len(s) {
		return 0, "", false
	}
	switch c := s[k]; {
	case strings.IndexByte(`'"^`+"`"+`~=.`, c) >= 0:
		k++
	case strings.IndexByte("vuHckdbrt", c) >= 0:
		k++
		switch {
		case k < len(s) && isTexSpace(s[k]):
			k = skipSpaces(s, k)
		case k < len(s) && s[k] == '{':
			k++
		default:
			return 0, "", false
		}
	default:
		return 0, "", false
	}
	k = skipSpaces(s, k)
	if k < len(s) && s[k] == '{' {
		k++
	}
	k = skipSpaces(s, k)
	if k < len(s) && s[k] == '\\' {
		k++
	}
	if k >= len(s) || !isASCIILetter(s[k]) {
		return 0, "", false
	}
	letter := s[k : k+1]
	k = skipSpaces(s, k+1)
	for n := 0; n < 2 && k < len(s) && s[k] == '}'; n++ {
		k++
	}
	return k, letter, true
}

// texCommandEnd is the end of (?:\s+|\{\}|\}|$) at s[k:], the ways a
// letter command ends.
func texCommandEnd(s string, k int) (int, bool) {
	switch {
	case k == len(s):
		return k, true
	case isTexSpace(s[k]):
		return skipSpaces(s, k), true
	case s[k] == '}':
		return k + 1, true
	case s[k] == '{' && k+1 < len(s) && s[k+1] == '}':
		return k + 2, true
	}
	return 0, false
}

// texRingAt is rule 3: \aa or \AA.
func texRingAt(s string, i int) (int, string, bool) {
	if name := s[i+1 : min(i+3, len(s))]; name == "aa" || name == "AA" {
		if end, ok := texCommandEnd(s, i+3); ok {
			return end, "a", true
		}
	}
	return 0, "", false
}

// texLetterAt is rule 4. A two-letter command and a one-letter one never
// both match: the one-letter command would need its end where the other
// has a letter.
func texLetterAt(s string, i int) (int, string, bool) {
	switch name := s[i+1 : min(i+3, len(s))]; name {
	case "ss", "ae", "AE", "oe", "OE":
		if end, ok := texCommandEnd(s, i+3); ok {
			return end, name, true
		}
	}
	if i+1 < len(s) && strings.IndexByte("oOlLij", s[i+1]) >= 0 {
		if end, ok := texCommandEnd(s, i+2); ok {
			return end, s[i+1 : i+2], true
		}
	}
	return 0, "", false
}
