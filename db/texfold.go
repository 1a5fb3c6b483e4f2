package db

import (
	"regexp"
	"strings"
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
var texRules = []texRule{
	{`\\(?:emph|em|textit|textbf|textrm|textsc|textsf|texttt|textsl|textup|textnormal|text|` +
		`mathrm|mathbf|mathit|mathcal|mathbb|mathfrak|mathsf|mathtt|mathscr|rm|it|bf|sl|sc|sf|tt|cal|bm|` +
		`boldsymbol|mbox|hbox|operatorname|left|right|big|Big|bigg|Bigg)([^a-zA-Z]|$)`, ` $1`, "etmribscohlB"},
	{`\{?\\(?:['"^` + "`" + `~=.]|[vuHckdbrt](?:\s+|\{))\s*\{?\s*\\?([a-zA-Z])\s*\}?\}?`, `$1`, `'"^` + "`" + `~=.vuHckdbrt`},
	{`\{?\\(?:aa|AA)(?:\s+|\{\}|\}|$)`, `a`, "aA"},
	{`\{?\\(ss|ae|AE|oe|OE|o|O|l|L|i|j)(?:\s+|\{\}|\}|$)`, `$1`, "saAoOlLij"},
}

// texRule replaces every match of pattern by replacement ($1 is the
// first group). Every match holds a backslash followed by one of the
// bytes of after, so text without such a pair is left as it is without
// running the expression, which is most of the cost of folding.
type texRule struct{ pattern, replacement, after string }

// mayMatch reports whether s holds a backslash followed by a byte of
// after, which every match of the rule does.
func (r texRule) mayMatch(s string) bool {
	for i := strings.IndexByte(s, '\\'); i >= 0 && i+1 < len(s); {
		if strings.IndexByte(r.after, s[i+1]) >= 0 {
			return true
		}
		j := strings.IndexByte(s[i+1:], '\\')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

var texRegexps = func() []*regexp.Regexp {
	res := make([]*regexp.Regexp, len(texRules))
	for i, r := range texRules {
		res[i] = regexp.MustCompile(r.pattern)
		res[i].Longest()
	}
	return res
}()

// texFold is s with its TeX markup folded by texRules.
func texFold(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	for i, re := range texRegexps {
		if texRules[i].mayMatch(s) {
			s = re.ReplaceAllString(s, texRules[i].replacement)
		}
	}
	return s
}
