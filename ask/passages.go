// Package ask answers a question from the archive: the sentences of the
// abstracts that answer it best (passages), and, with a language model,
// an answer that cites those passages by number and nothing else.
package ask

import (
	"context"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// Bounds of a question's passages.
const (
	// DefaultPassages is how many passages a question gets unless it asks.
	DefaultPassages = 5
	// MaxPassages bounds the passages of one question.
	MaxPassages = 20
	// searchPapers is how many of the search's best papers the passages
	// are drawn from.
	searchPapers = 20
	// maxQuestionWords bounds the words of a question that are searched.
	maxQuestionWords = 8
)

// Passage is one sentence (or run of a long sentence) of a paper's
// abstract.
type Passage struct {
	// Paper is the paper, read whole.
	Paper *db.Paper
	// Position is the passage's place in the abstract, 0 for its first.
	Position int
	// Text is the passage.
	Text string
	// Score is its BM25 score for the question among the passages read.
	Score float64
}

// Words are the words of a question that a search looks for, in lower
// case and stemmed (see stem), without the commonest English words and
// repeats, at most maxQuestionWords.
func Words(question string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(question), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) < 2 || stopWords[w] || slices.Contains(out, stem(w)) {
			continue
		}
		out = append(out, stem(w))
		if len(out) == maxQuestionWords {
			break
		}
	}
	return out
}

// Passages returns the first passages (at most MaxPassages) that answer
// question best among the abstracts of the papers s selects that match
// its words, best first. s's filters apply; its Query is set here.
func Passages(ctx context.Context, idb bun.IDB, question string, s db.PaperSearch, first int) ([]Passage, error) {
	words := Words(question)
	if len(words) == 0 || first <= 0 {
		return nil, nil
	}
	ids, err := candidates(ctx, idb, words, s)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	papers, err := db.PapersByIDs(ctx, idb, ids)
	if err != nil {
		return nil, err
	}
	var all []Passage
	for _, id := range ids {
		if p := papers[id]; p != nil {
			for i, text := range Sentences(p.Abstract) {
				all = append(all, Passage{Paper: p, Position: i, Text: text})
			}
		}
	}
	score(all, words)
	slices.SortStableFunc(all, func(a, b Passage) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return 0
	})
	n := min(first, MaxPassages, len(all))
	for n > 0 && all[n-1].Score == 0 {
		n--
	}
	return all[:n], nil
}

// candidates are the ids of the papers the passages come from, best
// match first: the search's own relevance ranking of the papers with all
// the words, and, while they are fewer than searchPapers, of those with
// each word alone (the words in the question's order): a statement per
// word at most. It is the one place that chooses
// the papers, so that a ranked any-word search can take its place.
func candidates(ctx context.Context, idb bun.IDB, words []string, s db.PaperSearch) ([]int64, error) {
	tries := [][]string{words}
	if len(words) > 1 {
		for _, w := range words {
			tries = append(tries, []string{w})
		}
	}
	var ids []int64
	for _, try := range tries {
		q, err := db.ParseSearchQuery(strings.Join(try, "* ") + "*")
		if err != nil {
			continue
		}
		s.Query = q
		pg, err := db.SearchPapers(ctx, idb, s, db.PageArgs{First: searchPapers, Order: db.Relevance})
		if err != nil {
			return nil, err
		}
		for _, p := range pg.Items {
			if !slices.Contains(ids, p.ID) {
				ids = append(ids, p.ID)
			}
		}
		if len(ids) >= searchPapers {
			break
		}
	}
	return ids[:min(len(ids), searchPapers)], nil
}

// BM25's parameters, the usual ones.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// score sets each passage's BM25 score for words, the passages being the
// collection.
func score(ps []Passage, words []string) {
	if len(ps) == 0 {
		return
	}
	tokens := make([][]string, len(ps))
	df := map[string]int{}
	total := 0
	for i, p := range ps {
		tokens[i] = tokenize(p.Text)
		total += len(tokens[i])
		seen := map[string]bool{}
		for _, t := range tokens[i] {
			if slices.Contains(words, t) && !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	avg := float64(total) / float64(len(ps))
	n := float64(len(ps))
	for i := range ps {
		tf := map[string]int{}
		for _, t := range tokens[i] {
			tf[t]++
		}
		var s float64
		for _, w := range words {
			if tf[w] == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
			f := float64(tf[w])
			s += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(len(tokens[i]))/avg))
		}
		ps[i].Score = s
	}
}

// tokenize splits text into lower-case words of letters and digits,
// each stemmed.
func tokenize(text string) []string {
	ws := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for i, w := range ws {
		ws[i] = stem(w)
	}
	return ws
}

// stem folds a plural into its singular, the commonest English
// inflection of a paper's subject: "axions" and "axion" score alike.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// maxPassageRunes bounds a passage: a longer sentence is cut at spaces.
const maxPassageRunes = 600

// Sentences splits an abstract into its sentences: a sentence ends at ".",
// "?" or "!" followed by a space and a capital letter, a digit or "$",
// so that "e.g. the" and "Fig. 2a" do not end one.
func Sentences(abstract string) []string {
	text := strings.Join(strings.Fields(abstract), " ")
	var out []string
	start := 0
	rs := []rune(text)
	for i := 0; i+2 < len(rs); i++ {
		if (rs[i] == '.' || rs[i] == '?' || rs[i] == '!') && rs[i+1] == ' ' &&
			(unicode.IsUpper(rs[i+2]) || unicode.IsDigit(rs[i+2]) || rs[i+2] == '$') && !abbreviation(rs[start:i]) {
			out = appendCut(out, string(rs[start:i+1]))
			start = i + 2
		}
	}
	if start < len(rs) {
		out = appendCut(out, string(rs[start:]))
	}
	return out
}

// abbreviations end with a period that ends no sentence.
var abbreviations = map[string]bool{"fig": true, "figs": true, "eq": true, "eqs": true, "ref": true, "refs": true,
	"sec": true, "no": true, "vol": true, "cf": true, "al": true, "approx": true, "resp": true, "vs": true, "dr": true, "prof": true}

// abbreviation tells whether the last word of s is one of abbreviations.
func abbreviation(s []rune) bool {
	i := len(s)
	for i > 0 && s[i-1] != ' ' {
		i--
	}
	return abbreviations[strings.ToLower(string(s[i:]))]
}

// appendCut appends s to out in runs of at most maxPassageRunes, cut at
// spaces.
func appendCut(out []string, s string) []string {
	for len([]rune(s)) > maxPassageRunes {
		rs := []rune(s)
		cut := maxPassageRunes
		for cut > maxPassageRunes/2 && rs[cut] != ' ' {
			cut--
		}
		out = append(out, strings.TrimSpace(string(rs[:cut])))
		s = strings.TrimSpace(string(rs[cut:]))
	}
	if s = strings.TrimSpace(s); s != "" {
		out = append(out, s)
	}
	return out
}

// stopWords are common English words a question has that say nothing of
// its subject.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again all also am an and any are as at be because been
	before being between both but by can could did do does doing done during each few for from further had has
	have having he her here how i if in into is it its itself just me more most my no nor not of off on once only
	or other our out over own same she should so some such than that the their them then there these they this
	those through to too under until up very was we were what when where which while who whom why will with would
	you your explain describe tell known know show shown paper papers use used using`) {
		stopWords[w] = true
	}
}
