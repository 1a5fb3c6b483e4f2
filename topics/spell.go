package topics

import (
	"cmp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/papergraph/papergraph/embed"
)

// speller spells the words topics are named by as their papers do: a
// name of stems ("higg", "mill") is not one a reader knows, so each word
// is shown in the spelling most frequent among the topic's papers
// ("Higgs", "Mills").
type speller struct {
	h *Hierarchy
	// seen counts, per topic, the spellings of each word of its name;
	// archive those of every word of a name, in all the papers.
	seen    []map[string]map[string]*spelled
	archive map[string]map[string]*spelled
}

// spelled counts a spelling's occurrences: all of them, and those whose
// capitals are the writer's choice rather than the style's (not starting
// a sentence nor in a title with every word capitalised).
type spelled struct{ all, cased int }

func newSpeller(h *Hierarchy, picked [][]string) *speller {
	s := &speller{h: h, seen: make([]map[string]map[string]*spelled, len(picked)), archive: map[string]map[string]*spelled{}}
	for i, terms := range picked {
		s.seen[i] = map[string]map[string]*spelled{}
		for _, term := range terms {
			for _, w := range strings.Fields(term) {
				s.seen[i][w] = map[string]*spelled{}
				s.archive[w] = map[string]*spelled{}
			}
		}
	}
	return s
}

// add counts the spellings in the title and abstract of the paper of
// index i of the words its topics are named by.
func (s *speller) add(i int, title, abstract string) {
	s.count(i, title, titleCased(title))
	s.count(i, abstract, false)
}

func (s *speller) count(i int, text string, styled bool) {
	top, sub := s.h.Top[i], s.h.Sub[i]
	embed.EachWord(text, func(w, spelling string, at int) {
		m, ok := s.archive[w]
		if !ok {
			return
		}
		cased := !styled && !startsSentence(text, at)
		tally(m, spelling, cased)
		for _, t := range []int{top, sub} {
			if t < 0 {
				continue
			}
			if m, ok := s.seen[t][w]; ok {
				tally(m, spelling, cased)
			}
		}
	})
}

// tally counts an occurrence of spelling in m.
func tally(m map[string]*spelled, spelling string, cased bool) {
	c := m[spelling]
	if c == nil {
		c = &spelled{}
		m[spelling] = c
	}
	c.all++
	if cased {
		c.cased++
	}
}

// name is the name of topic t of terms picked: each word spelled as
// spell does, the terms joined by commas; "miscellaneous" when there are
// none.
func (s *speller) name(t int, picked []string) string {
	if len(picked) == 0 {
		return "miscellaneous"
	}
	terms := make([]string, len(picked))
	for i, term := range picked {
		ws := strings.Fields(term)
		for j, w := range ws {
			ws[j] = spell(w, s.seen[t][w], s.archive[w])
		}
		terms[i] = strings.Join(ws, " ")
	}
	return strings.Join(terms, ", ")
}

// spell is the spelling of word w of its counts in a topic and in the
// archive: of the spellings that differ only in capitals, the group most
// frequent in the topic ("holes" over "hole"); within it, the capitals
// most frequent where they were the writer's choice ("Higgs", "SU",
// "boson"): in the topic, or else in the archive (a word of the topic's
// titles alone, all capitalised by style, is spelled as other papers
// spell it), or else anywhere in the topic. Ties go to the lower case,
// then to the first in byte order, so that the same papers always give
// the same name. w itself when there are none.
func spell(w string, topic, archive map[string]*spelled) string {
	folded := map[string]int{}
	for sp, c := range topic {
		folded[strings.ToLower(sp)] += c.all
	}
	var group string
	for f, n := range folded {
		if group == "" || n > folded[group] || n == folded[group] && f < group {
			group = f
		}
	}
	if group == "" {
		return w
	}
	if sp, ok := mostFrequent(topic, group, func(c *spelled) int { return c.cased }); ok {
		return sp
	}
	if sp, ok := mostFrequent(archive, group, func(c *spelled) int { return c.cased }); ok {
		return sp
	}
	sp, _ := mostFrequent(topic, group, func(c *spelled) int { return c.all })
	return sp
}

// mostFrequent is the spelling of counts that is group but for capitals
// with the most occurrences by n, and whether any has one.
func mostFrequent(counts map[string]*spelled, group string, n func(*spelled) int) (string, bool) {
	best, bestN := "", 0
	for sp, c := range counts {
		if strings.ToLower(sp) != group {
			continue
		}
		if k := n(c); k > bestN || k == bestN && k > 0 && betterTie(sp, best) {
			best, bestN = sp, k
		}
	}
	return best, bestN > 0
}

// betterTie reports whether spelling a goes before b among spellings as
// frequent: the lower case first, then byte order.
func betterTie(a, b string) bool {
	al, bl := a == strings.ToLower(a), b == strings.ToLower(b)
	if al != bl {
		return al
	}
	return cmp.Less(a, b)
}

// startsSentence reports whether the word at offset at of text starts it
// or a sentence: only spaces lie between it and the start or a full stop,
// question or exclamation mark or colon.
func startsSentence(text string, at int) bool {
	for at > 0 {
		r, size := utf8.DecodeLastRuneInString(text[:at])
		switch {
		case unicode.IsSpace(r):
			at -= size
		case r == '.' || r == '?' || r == '!' || r == ':':
			return true
		default:
			return false
		}
	}
	return true
}

// titleCased reports whether title capitalises its words by style ("Black
// Holes and Strings"): more of its words after the first begin with a
// capital than without. Such a title says nothing of how its words are
// spelled in a sentence.
func titleCased(title string) bool {
	upper, lower, first := 0, 0, true
	embed.EachWord(title, func(_, spelling string, _ int) {
		if first {
			first = false
			return
		}
		r, _ := utf8.DecodeRuneInString(spelling)
		switch {
		case unicode.IsUpper(r):
			upper++
		case unicode.IsLower(r):
			lower++
		}
	})
	return upper > lower
}
