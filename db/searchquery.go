package db

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SearchQuery is a full-text query taken apart: terms that a paper
// matches in its title or abstract. A paper matching them all matches the
// query; when few do, a relevance order relaxes it (see relaxed), and then
// only the Required terms must all match. It is built only by
// ParseSearchQuery, so that no user text reaches MATCH or to_tsquery other
// than as words of letters and digits.
type SearchQuery struct {
	Terms []SearchTerm
}

// SearchTerm is one word, or a phrase of words that must appear in order;
// the words are folded and split as the indexes hold them (searchText).
// Prefix makes the (single) word match every word it begins. Required
// terms (a quoted phrase, a +word) must match even when the query is
// relaxed.
type SearchTerm struct {
	Words    []string
	Prefix   bool
	Required bool
}

// MinPrefix is the fewest characters a prefix (word*) has: a shorter one
// would merge the postings of a large part of the vocabulary, while from
// two characters SQLite reads a prefix index and PostgreSQL a short range
// of its GIN keys.
const MinPrefix = 2

// maxSearchTerms bounds the terms of a query other than stop words, each
// of which costs a posting-list walk; a typed sentence may hold as many
// stop words again (maxQueryTerms in all), which a relaxed query leaves
// out.
const (
	maxSearchTerms = 16
	maxQueryTerms  = 2 * maxSearchTerms
)

// ErrSearchQuery is wrapped by the errors of ParseSearchQuery.
var ErrSearchQuery = errors.New("malformed search query")

// ParseSearchQuery reads a user's query: words, "quoted phrases" and
// prefixes (word*); phrases and words written +word are Required. TeX
// markup is folded first (texFold), as the index folds it. Punctuation
// between words separates them; a stray quote or star is an error
// wrapping ErrSearchQuery, as is a query with no word at all.
func ParseSearchQuery(s string) (SearchQuery, error) {
	var q SearchQuery
	rs := []rune(texFold(s))
	for i := 0; i < len(rs); {
		plus := i > 0 && rs[i-1] == '+' && (i == 1 || unicode.IsSpace(rs[i-2])) // a + starting a word
		switch r := rs[i]; {
		case r == '"':
			end := i + 1
			for end < len(rs) && rs[end] != '"' {
				end++
			}
			if end == len(rs) {
				return SearchQuery{}, fmt.Errorf("%w: unbalanced quote", ErrSearchQuery)
			}
			if ws := searchWords(rs[i+1 : end]); len(ws) > 0 {
				q.Terms = append(q.Terms, SearchTerm{Words: ws, Required: true})
			}
			i = end + 1
			if i < len(rs) && rs[i] == '*' {
				return SearchQuery{}, fmt.Errorf("%w: a * must follow a word, not a phrase", ErrSearchQuery)
			}
		case r == '*':
			return SearchQuery{}, fmt.Errorf("%w: a * must follow a word", ErrSearchQuery)
		case isWordRune(r):
			end := i
			for end < len(rs) && isWordRune(rs[end]) {
				end++
			}
			t := SearchTerm{Words: searchWords(rs[i:end]), Required: plus}
			if end < len(rs) && rs[end] == '*' {
				if n := len(t.Words); n > 0 && utf8.RuneCountInString(t.Words[n-1]) < MinPrefix {
					return SearchQuery{}, fmt.Errorf("%w: a prefix needs at least %d letters or digits before the *", ErrSearchQuery, MinPrefix)
				}
				t.Prefix = true
				end++
			}
			if len(t.Words) > 0 {
				q.Terms = append(q.Terms, t)
			}
			i = end
		default:
			i++
		}
	}
	switch {
	case len(q.Terms) == 0:
		return SearchQuery{}, fmt.Errorf("%w: no word to search for", ErrSearchQuery)
	case len(q.Terms) > maxQueryTerms || q.wordTerms() > maxSearchTerms:
		return SearchQuery{}, fmt.Errorf("%w: more than %d terms (or %d with stop words)", ErrSearchQuery, maxSearchTerms, maxQueryTerms)
	}
	return q, nil
}

// wordTerms counts the terms of q that are not stop words.
func (q SearchQuery) wordTerms() int {
	n := 0
	for _, t := range q.Terms {
		if len(t.Words) != 1 || t.Prefix || !stopWords[t.Words[0]] {
			n++
		}
	}
	return n
}

// isWordRune reports whether r belongs to a word of a query: letters and
// digits, and combining marks, which the fold removes or which split the
// word into a phrase (see searchText).
func isWordRune(r rune) bool {
	return isIndexRune(r) || unicode.Is(unicode.Mn, r)
}

// searchWords is the indexed words of rs, folded (see searchText).
func searchWords(rs []rune) []string { return searchText(string(rs)) }

// IsZero reports whether q has no terms: no text to match.
func (q SearchQuery) IsZero() bool { return len(q.Terms) == 0 }

// fts5 renders q as an FTS5 MATCH expression: every word a quoted string,
// which FTS5 runs through the table's own tokenizer, so that case and
// diacritics fold exactly as they did at indexing.
func (q SearchQuery) fts5() string {
	var b strings.Builder
	for i, t := range q.Terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.Join(t.Words, " ")) // letters and digits only
		b.WriteByte('"')
		if t.Prefix {
			b.WriteByte('*')
		}
	}
	return b.String()
}

// tsquery renders q as a to_tsquery text over its words, which are folded
// as the PostgreSQL index holds them; weight, when not empty, restricts
// every word to lexemes of that weight ("A": titles).
func (q SearchQuery) tsquery(weight string) string {
	var b strings.Builder
	for i, t := range q.Terms {
		if i > 0 {
			b.WriteString(" & ")
		}
		for j, w := range t.Words {
			if j > 0 {
				b.WriteString(" <-> ")
			}
			b.WriteByte('\'')
			b.WriteString(w) // letters and digits only
			b.WriteByte('\'')
			if j < len(t.Words)-1 && weight != "" {
				b.WriteString(":" + weight)
			}
		}
		switch {
		case t.Prefix:
			b.WriteString(":*" + weight)
		case weight != "":
			b.WriteString(":" + weight)
		}
	}
	return b.String()
}

// PrefixQuery is the query of a search box being typed into: the words
// of s, the last of which may be unfinished and so is a prefix, left out
// when shorter than MinPrefix. It is zero when s has no word (or a single
// letter).
func PrefixQuery(s string) SearchQuery {
	var q SearchQuery
	words := searchWords([]rune(texFold(s)))
	short := len(words) > 0 && utf8.RuneCountInString(words[len(words)-1]) < MinPrefix
	if short {
		words = words[:len(words)-1]
	}
	for _, w := range words {
		q.Terms = append(q.Terms, SearchTerm{Words: []string{w}})
	}
	if len(q.Terms) > maxSearchTerms {
		q.Terms = q.Terms[len(q.Terms)-maxSearchTerms:]
	}
	if n := len(q.Terms); n > 0 && !short {
		q.Terms[n-1].Prefix = true
	}
	return q
}
