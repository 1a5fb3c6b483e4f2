package names

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// accentMarks maps the character or letter after a TeX accent command to
// the Unicode combining mark it stands for.
var accentMarks = map[string]string{
	"'": "\u0301", "`": "\u0300", `"`: "\u0308", "^": "\u0302", "~": "\u0303",
	"=": "\u0304", ".": "\u0307", "c": "\u0327", "v": "\u030c", "u": "\u0306",
	"H": "\u030b", "k": "\u0328", "r": "\u030a", "d": "\u0323", "b": "\u0331",
	"t": "\u0361",
}

// specialLetters maps TeX control words for letters that are not accented
// Latin letters to their Unicode form.
var specialLetters = map[string]string{
	"ss": "ß", "o": "ø", "O": "Ø", "aa": "å", "AA": "Å", "ae": "æ", "AE": "Æ",
	"oe": "œ", "OE": "Œ", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ",
}

// DecodeTeX converts LaTeX accent and special-letter macros to Unicode
// (\'a, \"{o}, {\"o}, \c{c}, \v s, {\ss}, \o, \aa, \l, \'\i and so on),
// removes the grouping braces left over and returns the result in NFC.
// Unknown control words lose their backslash and keep their text.
func DecodeTeX(s string) string {
	if !strings.ContainsAny(s, `\{}`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch s[i] {
		case '{', '}':
			i++
		case '\\':
			out, n := decodeMacro(s[i:])
			b.WriteString(out)
			i += n
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return norm.NFC.String(b.String())
}

// decodeMacro decodes the macro at the start of s (which begins with a
// backslash) and returns its text and the number of bytes it used.
func decodeMacro(s string) (string, int) {
	if len(s) < 2 {
		return "", len(s)
	}
	if mark, ok := accentMarks[s[1:2]]; ok && !isASCIILetter(s[1]) {
		base, n := accentArgument(s[2:])
		return applyMark(base, mark), 2 + n
	}
	if !isASCIILetter(s[1]) {
		switch s[1] {
		case '-':
			return "", 2 // discretionary hyphen
		case '\\':
			return " ", 2
		}
		return s[1:2], 2
	}
	end := 1
	for end < len(s) && isASCIILetter(s[end]) {
		end++
	}
	word := s[1:end]
	// TeX swallows the blanks after a control word.
	rest := strings.TrimLeft(s[end:], " ")
	used := len(s) - len(rest)
	if mark, ok := accentMarks[word]; ok {
		base, n := accentArgument(rest)
		return applyMark(base, mark), used + n
	}
	if letter, ok := specialLetters[word]; ok {
		if strings.HasPrefix(rest, "{}") {
			used += 2
		}
		return letter, used
	}
	// \a' and friends are the accents of LaTeX's tabbing environment, which
	// some old bylines use as plain accents ("St\a 'ephane").
	if word == "a" && rest != "" {
		if mark, ok := accentMarks[rest[:1]]; ok && !isASCIILetter(rest[0]) {
			base, n := accentArgument(rest[1:])
			return applyMark(base, mark), used + 1 + n
		}
	}
	return word, end
}

// accentArgument returns the decoded text an accent applies to at the start
// of s ("{a}", "{\i}", "\i", "a", " a") and the number of bytes it used.
func accentArgument(s string) (string, int) {
	rest := strings.TrimLeft(s, " ")
	skipped := len(s) - len(rest)
	if rest == "" {
		return "", skipped
	}
	switch rest[0] {
	case '{':
		depth := 0
		for i := 0; i < len(rest); i++ {
			switch rest[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					return DecodeTeX(rest[1:i]), skipped + i + 1
				}
			}
		}
		return DecodeTeX(rest[1:]), len(s)
	case '\\':
		out, n := decodeMacro(rest)
		return out, skipped + n
	}
	_, n := utf8.DecodeRuneInString(rest)
	return rest[:n], skipped + n
}

// applyMark puts a combining mark after the first letter of base. A dotless
// i under an accent is written as a plain i so that NFC can compose it.
func applyMark(base, mark string) string {
	if base == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(base)
	if r == 'ı' {
		r = 'i'
	}
	return string(r) + mark + base[n:]
}

// isASCIILetter reports whether c may appear in a TeX control word.
func isASCIILetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
