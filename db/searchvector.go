package db

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/uptrace/bun"
)

// On PostgreSQL a paper's search document (papers.search_doc) and its
// title's words (papers.title_doc) were built by a trigger for every row
// inserted: papers_search_vector folds and splits the title and abstract
// with a regular expression, then parses them with to_tsvector: most of
// the database's work for the INSERT of a paper, on the one connection an
// import writes through, while the importer's own process waits. For text
// that is all ASCII the importer builds both documents itself
// (searchVectors), in tsvector's text form, and sends them with the row;
// the trigger (migration 0021) only builds what arrives without them. Other text is
// left to the trigger: lowercasing, the fold table and [:alnum:] beyond
// ASCII depend on the database's locale, which Go does not see.
//
// What the trigger would build is fixed by these rules, for text of ASCII
// letters and digits between spaces after search_words: each run of
// letters and digits is one token of to_tsvector's parser, except that a
// run starting with digits, "e" and digits (PostgreSQL's scientific
// notation, "1e5abc") is cut after those digits into two tokens; the
// 'simple' configuration keeps every token as it is, lowercase, as a
// lexeme; the title's tokens take positions 1 to n with weight A, the
// abstract's n+1 onwards with weight B (tsvector || shifts the right side
// by the left's last position); title_doc keeps the A positions alone.
// Past PostgreSQL's limits (2,047 bytes a lexeme, 16,383 a position, 255
// positions a lexeme, 1 MB a document) to_tsvector drops, merges or
// refuses what this does not, so a paper that comes near them is left to
// the trigger. searchVectorsAgree
// checks the rules against the database once a statement, and
// TestSearchVectorsMatchPostgres against many texts.

// Bounds past which searchVectors leaves a paper to the trigger, well
// inside PostgreSQL's limits.
const (
	vectorMaxToken     = 200
	vectorMaxPositions = 10_000
	vectorMaxRepeats   = 200
	vectorMaxBytes     = 256 << 10 // of the tokens' text
)

// searchVectors returns papers_search_vector(title, abstract) and its A
// positions (title_doc) in tsvector's text form, or false when the text is
// not all ASCII or comes near PostgreSQL's limits.
func searchVectors(title, abstract string) (doc, titleDoc string, ok bool) {
	var v vectorBuilder
	return v.build(title, abstract)
}

// searchDocuments returns the rows' search documents and title documents
// as searchVectors builds them (NULL where it does not), built by as many
// goroutines as there are processors: the database waits meanwhile.
func searchDocuments(rows []*Paper) (docs, titleDocs tsvectors) {
	docs, titleDocs = make(tsvectors, len(rows)), make(tsvectors, len(rows))
	per := max(256, (len(rows)+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for lo := 0; lo < len(rows); lo += per {
		hi := min(lo+per, len(rows))
		wg.Go(func() {
			var v vectorBuilder
			for i := lo; i < hi; i++ {
				if d, t, ok := v.build(rows[i].Title, rows[i].Abstract); ok {
					docs[i], titleDocs[i] = &d, &t
				}
			}
		})
	}
	wg.Wait()
	return docs, titleDocs
}

// vectorBuilder builds search documents, reusing its buffers from one
// paper to the next.
type vectorBuilder struct {
	low   []byte
	toks  []vectorToken
	d, t  []byte
	index map[string]int32 // lexeme → its number
	// by lexeme: its first and last token, and how many it has; by
	// token: the next of its lexeme, or -1
	first, last, count, next []int32
}

// vectorToken is a token and its position: positive in the title (weight
// A), negative in the abstract (B).
type vectorToken struct {
	word string
	pos  int32
}

func (v *vectorBuilder) build(title, abstract string) (doc, titleDoc string, ok bool) {
	if !isASCII(title) || !isASCII(abstract) || strings.Contains(title, `\`) || strings.Contains(abstract, `\`) {
		// Left to the trigger: other letters fold by the locale, and TeX
		// markup by tex_fold (migration 0024).
		return "", "", false
	}
	// One lowercase copy of both texts, which the tokens are slices of.
	v.low = append(append(append(v.low[:0], title...), ' '), abstract...)
	for i, c := range v.low {
		if 'A' <= c && c <= 'Z' {
			v.low[i] = c + 'a' - 'A'
		}
	}
	low := string(v.low)
	v.toks = v.toks[:0]
	n, bytes := int32(0), 0
	ok = true
	each := func(text string, weight int32) {
		eachVectorToken(text, func(tok string) bool {
			n++
			bytes += len(tok)
			if len(tok) > vectorMaxToken || n > vectorMaxPositions || bytes > vectorMaxBytes {
				ok = false
				return false
			}
			v.toks = append(v.toks, vectorToken{tok, weight * n})
			return true
		})
	}
	each(low[:len(title)], 1)
	if ok {
		each(low[len(title)+1:], -1)
	}
	if !ok {
		return "", "", false
	}
	// Each token's lexeme, in the order lexemes first appear; a lexeme's
	// positions are chained through next, in order.
	if v.index == nil {
		v.index = map[string]int32{}
	}
	clear(v.index)
	v.first, v.last, v.count = v.first[:0], v.last[:0], v.count[:0]
	v.next = slices.Grow(v.next[:0], len(v.toks))[:len(v.toks)]
	for i, tok := range v.toks {
		v.next[i] = -1
		l, seen := v.index[tok.word]
		if !seen {
			l = int32(len(v.first))
			v.index[tok.word] = l
			v.first, v.last, v.count = append(v.first, int32(i)), append(v.last, int32(i)), append(v.count, 1)
			continue
		}
		if v.count[l]++; v.count[l] > vectorMaxRepeats {
			return "", "", false
		}
		v.next[v.last[l]], v.last[l] = int32(i), int32(i)
	}
	v.d, v.t = v.d[:0], v.t[:0]
	for _, f := range v.first {
		v.d = v.appendLexeme(v.d, f, true)
		v.t = v.appendLexeme(v.t, f, false)
	}
	return string(v.d), string(v.t), true
}

// appendLexeme appends one lexeme, the word of token i, with the
// positions of the tokens chained from i and their weights, or only the A
// positions (none: nothing) unless all.
func (v *vectorBuilder) appendLexeme(b []byte, i int32, all bool) []byte {
	first := true
	for ; i >= 0; i = v.next[i] {
		tok := v.toks[i]
		p := tok.pos
		if p < 0 && !all {
			continue
		}
		if first {
			if len(b) > 0 {
				b = append(b, ' ')
			}
			b = append(append(b, tok.word...), ':')
			first = false
		} else {
			b = append(b, ',')
		}
		if p > 0 {
			b = append(strconv.AppendInt(b, int64(p), 10), 'A')
		} else {
			b = append(strconv.AppendInt(b, int64(-p), 10), 'B')
		}
	}
	return b
}

// eachVectorToken calls f with each token to_tsvector's parser finds in
// lowercase ASCII text once search_words has split it, until f returns
// false: searchText's words, but for the scientific-notation cut, read
// byte by byte without searchText's copies and rune lookups
// (TestVectorTokensAreSearchWords holds the two together).
func eachVectorToken(s string, f func(string) bool) {
	for i := 0; i < len(s); {
		if !isASCIIAlnum(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isASCIIAlnum(s[j]) {
			j++
		}
		run := s[i:j]
		if cut := scientificPrefix(run); cut > 0 && cut < len(run) {
			if !f(run[:cut]) || !f(run[cut:]) {
				return
			}
		} else if !f(run) {
			return
		}
		i = j
	}
}

// scientificPrefix returns the length of the digits, "e" and digits a
// lowercase run starts with, or 0 when it does not start so.
func scientificPrefix(run string) int {
	i := 0
	for i < len(run) && isDigit(run[i]) {
		i++
	}
	if i == 0 || i+1 >= len(run) || run[i] != 'e' || !isDigit(run[i+1]) {
		return 0
	}
	i += 2
	for i < len(run) && isDigit(run[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isASCIIAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// vectorProbe is text that exercises every rule of searchVectors.
const (
	vectorProbeTitle    = "The 1e5abc X-ray: 12E34e56 of ABC abc_0x1F, 007e1 5e"
	vectorProbeAbstract = "the THE 3.14 1e-5 http://a.b/c user@host.com <b>tag</b> &amp; it's 1e5x1e5 abc"
)

// searchVectorsAgree reports whether the database builds what
// searchVectors builds for the probe text: a database whose search
// functions or text search configuration differ from those the
// migrations made (another locale's lower(), say) gets its documents from
// the trigger.
func searchVectorsAgree(ctx context.Context, tx bun.Tx) (bool, error) {
	doc, titleDoc, _ := searchVectors(vectorProbeTitle, vectorProbeAbstract)
	var agree bool
	err := tx.QueryRowContext(ctx, `SELECT v = ?::tsvector AND ts_filter(v, '{a}') = ?::tsvector
		FROM (SELECT papers_search_vector(?, ?) AS v) s`, doc, titleDoc, vectorProbeTitle, vectorProbeAbstract).Scan(&agree)
	return agree, err
}
