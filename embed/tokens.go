package embed

import (
	"strings"
	"unicode"
)

// stopwords are English words too common in abstracts to tell papers
// apart; the built-in model neither learns nor weighs them.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be
		because been before being below between both but by can could did do does doing down during each
		few for from further had has have having he her here hers him his how i if in into is it its itself
		just may me might more most must my no nor not now of off on once only or other our ours out over own
		same she should so some such than that the their theirs them then there these they this those through
		to too under until up upon very was we were what when where which while who whom why will with would
		you your we us via using use used based show shows shown paper propose proposed present presents new
		results result study studies approach method methods well however thus therefore within without
		one two three first second given find found obtain obtained et al non`) {
		m[w] = true
	}
	return m
}()

// words splits text into the words the built-in model knows words by:
// runs of letters and digits, lower-cased, a plural's s dropped, without
// stopwords, numbers and single letters.
func words(text string, out []string) []string {
	out = out[:0]
	eachWord(text, func(_, _ int, w string) { out = append(out, w) })
	return out
}

// eachWord calls fn with each word of text as words makes it, and where
// in text the run of letters and digits it was made from starts and ends.
func eachWord(text string, fn func(start, end int, w string)) {
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := strings.ToLower(text[start:end])
		from := start
		start = -1
		if len(w) < 2 || stopwords[w] || isNumber(w) {
			return
		}
		fn(from, end, stem(w))
	}
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
}

// stem drops a regular plural's s, so that a query's "graphs" meets an
// abstract's "graph".
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 3 && w[n-1] == 's' && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// Words splits text into the words the built-in model knows words by:
// lower-cased, a plural's s dropped, without stopwords, numbers and
// single letters. Topics are named by them.
func Words(text string) []string { return words(text, nil) }

// EachWord calls fn with each of the words Words makes of text, with its
// spelling (the run of text it was made from, as written: "Higgs" for
// the word "higg") and the offset of that run in text. Topic names are
// spelled by it, as a stem is not a word a reader knows.
func EachWord(text string, fn func(word, spelling string, at int)) {
	eachWord(text, func(start, end int, w string) { fn(w, text[start:end], start) })
}
