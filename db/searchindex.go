package db

import (
	"database/sql/driver"
	"strings"
	"unicode"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// The full-text index over papers' titles and abstracts is built by the
// migrations 0003_search and 0008_search_words (migrations/sqlite and
// migrations/postgres, whose comments say how): on SQLite an FTS5 table fed
// by triggers that call the Go indexFold registered below as search_fold;
// on PostgreSQL a GIN index over papers.search_doc, text folded by an SQL
// search_fold and split by search_words. Both databases see the same
// words: a word is a run of letters and digits (searchText), so that "/",
// "-", ".", apostrophes and every other character split words, arXiv ids
// ("hep-th/9407087") and decimals ("1.5") included; letters fold to
// lowercase and through the fold table below. Query words are taken apart
// by searchText too, so that they meet the index as the indexed text did.

// foldFrom and foldTo are search_fold's translate() table: lowercase
// accented letters and their base letters, then the combining marks,
// which translate() drops (they have no counterpart in foldTo). The
// migration 0003_search holds a copy (TestFoldTableMatchesMigration checks
// it): changing them needs a new migration that replaces the function and
// rebuilds the index.
var (
	foldFrom = "àáâãäåāăąçćĉċčďđèéêëēĕėęěĝğġģĥħìíîïĩīĭįıĵķĺļľŀłñńņňòóôõöøōŏőŕŗřśŝşšșţťŧțùúûüũūŭůűųŵýÿŷźżž" + combiningMarks
	foldTo   = "aaaaaaaaacccccddeeeeeeeeegggghhiiiiiiiiijklllllnnnnooooooooorrrsssssttttuuuuuuuuuuwyyyzzz"
)

// combiningMarks are U+0300 to U+036F, the marks of decomposed accents.
var combiningMarks = func() string {
	var b strings.Builder
	for r := rune(0x300); r <= 0x36f; r++ {
		b.WriteRune(r)
	}
	return b.String()
}()

// folds maps each rune of foldFrom, all below U+0370, to its base
// letter, or to -1 (dropped); 0 is a rune it leaves as it is. An array,
// not a map: indexing every non-ASCII text looks up each of its runes.
var folds = func() (t [0x370]rune) {
	to := []rune(foldTo)
	for i, r := range []rune(foldFrom) {
		if i < len(to) {
			t[r] = to[i]
		} else {
			t[r] = -1
		}
	}
	return t
}()

// fold is r through the fold table: its base letter, -1 when the table
// drops it, or r.
func fold(r rune) rune {
	if r >= 0 && int(r) < len(folds) && folds[r] != 0 {
		return folds[r]
	}
	return r
}

// searchFold is search_fold in Go, after tex_fold: TeX markup folded
// (texFold), lowercase, then the fold table.
func searchFold(s string) string {
	return strings.Map(fold, strings.ToLower(texFold(s)))
}

// isIndexRune reports whether r belongs to an indexed word: letters and
// decimal digits, as PostgreSQL's [:alnum:] sees them in a UTF-8 locale
// ("x²" is the word x on both databases).
func isIndexRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// searchText is the words of s as both indexes hold them: s folded by
// searchFold, then split at every character that is not a letter or a
// digit (PostgreSQL's search_words does the same in SQL).
func searchText(s string) []string {
	return strings.FieldsFunc(searchFold(s), func(r rune) bool { return !isIndexRune(r) })
}

// indexFold is search_fold for the SQLite index. The unicode61 tokenizer
// splits ASCII text at every character other than a letter or digit and
// folds the case of ASCII letters itself, so plain ASCII text (most titles
// and abstracts) goes to it as it is, and only other text is folded and
// split here, as is text with TeX markup (texFold), which needs a
// backslash. That spares a bulk import a copy of every text.
func indexFold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || s[i] == '\\' {
			return joinedWords(texFold(s))
		}
	}
	return s
}

// joinedWords is strings.Join(searchText(s), " ") for s already folded
// by texFold, in one pass: each rune lowercased and folded as searchFold
// does (a rune the fold table drops splits no word), then the words
// between the runes that are not letters or digits.
func joinedWords(s string) string {
	b := make([]byte, 0, len(s))
	inWord := false
	for _, r := range s { // an invalid byte is utf8.RuneError, as in strings.Map
		if r < utf8.RuneSelf {
			// ASCII: no fold, and a shorter test of letters and digits.
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			if !('a' <= r && r <= 'z' || '0' <= r && r <= '9') {
				inWord = false
				continue
			}
		} else if r = fold(unicode.ToLower(r)); r < 0 {
			continue
		} else if !isIndexRune(r) {
			inWord = false
			continue
		}
		if !inWord && len(b) > 0 {
			b = append(b, ' ')
		}
		inWord = true
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// The SQLite driver gets search_fold at start-up: every connection opened
// afterwards has it, and the FTS triggers above call it.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("search_fold", 1,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case string:
				return indexFold(v), nil
			case []byte:
				return indexFold(string(v)), nil
			}
			return "", nil // NULL text indexes as nothing
		})
}
