package db

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
)

// On PostgreSQL a paper's search document (papers.search_doc) and its
// title's words (papers.title_doc) were built by a trigger for every row
// inserted: papers_search_vector folds and splits the title and abstract
// with a regular expression, then parses them with to_tsvector. At
// 750,000 papers that is 119 µs of the database's CPU a paper, most of
// the time the INSERT of papers takes, on the one connection an import
// writes through, while the importer's own process waits. For text that is
// all ASCII the importer builds both documents itself (searchVectors), in
// tsvector's text form, and sends them with the row; the trigger
// (migration 0021) only builds what arrives without them. Other text is
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
// positions a lexeme) to_tsvector drops or merges what this does not, so
// a paper that comes near them is left to the trigger. searchVectorsAgree
// checks the rules against the database once a statement, and
// TestSearchVectorsMatchPostgres against many texts.

// Bounds past which searchVectors leaves a paper to the trigger, well
// inside PostgreSQL's limits.
const (
	vectorMaxToken     = 200
	vectorMaxPositions = 10_000
	vectorMaxRepeats   = 200
)

// searchVectors returns papers_search_vector(title, abstract) and its A
// positions (title_doc) in tsvector's text form, or false when the text is
// not all ASCII or comes near PostgreSQL's limits.
func searchVectors(title, abstract string) (doc, titleDoc string, ok bool) {
	type lexeme struct {
		word string
		pos  []int32 // positive for A (the title), negative for B
	}
	byWord := map[string]int{}
	var lexemes []lexeme
	n := int32(0)
	add := func(text string, weight int32) bool {
		okText := true
		eachVectorToken(text, func(tok string) bool {
			n++
			if len(tok) > vectorMaxToken || n > vectorMaxPositions {
				okText = false
				return false
			}
			i, seen := byWord[tok]
			if !seen {
				i = len(lexemes)
				byWord[tok] = i
				lexemes = append(lexemes, lexeme{word: tok})
			}
			if len(lexemes[i].pos) >= vectorMaxRepeats {
				okText = false
				return false
			}
			lexemes[i].pos = append(lexemes[i].pos, weight*n)
			return true
		})
		return okText
	}
	if !isASCII(title) || !isASCII(abstract) || !add(title, 1) || !add(abstract, -1) {
		return "", "", false
	}
	slices.SortFunc(lexemes, func(a, b lexeme) int { return strings.Compare(a.word, b.word) })
	var d, t strings.Builder
	for _, l := range lexemes {
		writeLexeme(&d, l.word, l.pos, true)
		writeLexeme(&t, l.word, l.pos, false)
	}
	return d.String(), t.String(), true
}

// writeLexeme appends word:positions to b, each position with its weight,
// or only the A positions (none: nothing) unless all.
func writeLexeme(b *strings.Builder, word string, pos []int32, all bool) {
	first := true
	for _, p := range pos {
		if p < 0 && !all {
			continue
		}
		if first {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(word)
			b.WriteByte(':')
			first = false
		} else {
			b.WriteByte(',')
		}
		if p > 0 {
			b.WriteString(strconv.Itoa(int(p)))
			b.WriteByte('A')
		} else {
			b.WriteString(strconv.Itoa(int(-p)))
			b.WriteByte('B')
		}
	}
}

// eachVectorToken calls f with each token to_tsvector's parser finds in
// ASCII text once search_words has folded and split it, lowercase, until f
// returns false.
func eachVectorToken(s string, f func(string) bool) {
	var buf []byte
	for i := 0; i < len(s); {
		if !isASCIIAlnum(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isASCIIAlnum(s[j]) {
			j++
		}
		buf = append(buf[:0], s[i:j]...)
		for k, c := range buf {
			if 'A' <= c && c <= 'Z' {
				buf[k] = c + 'a' - 'A'
			}
		}
		run := string(buf)
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
