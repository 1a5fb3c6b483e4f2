package topics

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/papergraph/papergraph/embed"
)

// nameTerms is the number of terms a topic's name joins.
const nameTerms = 3

// namer counts, for every topic, in how many of its papers each term
// appears: the words of titles and abstracts (as the built-in embedding
// model reads them: lower-cased, plurals folded, stop words dropped) and
// the pairs of adjacent words of titles, which name a field better than
// either word ("black hole", "quantum group").
type namer struct {
	h      *Hierarchy
	terms  map[string]int32
	df     []int32           // papers holding each term, the archive's
	counts []map[int32]int32 // papers holding each term, per topic
	seen   []int32           // the last paper each term was counted for, plus one
	doc    int32
	picked [][]string // the terms each topic is named by, as stems (see pick)
}

func newNamer(h *Hierarchy) *namer {
	n := &namer{h: h, terms: map[string]int32{}, counts: make([]map[int32]int32, len(h.Topics)),
		picked: make([][]string, len(h.Topics))}
	for i := range n.counts {
		n.counts[i] = map[int32]int32{}
	}
	return n
}

// add counts the terms of the paper of index i.
func (n *namer) add(i int, title, abstract string) {
	n.doc++
	count := func(term string) {
		id, ok := n.terms[term]
		if !ok {
			id = int32(len(n.df))
			n.terms[term] = id
			n.df = append(n.df, 0)
			n.seen = append(n.seen, 0)
		}
		if n.seen[id] == n.doc {
			return
		}
		n.seen[id] = n.doc
		n.df[id]++
		n.counts[n.h.Top[i]][id]++
		if s := n.h.Sub[i]; s >= 0 {
			n.counts[s][id]++
		}
	}
	tw := embed.Words(title)
	for j, w := range tw {
		count(w)
		if j > 0 && tw[j-1] != w {
			count(tw[j-1] + " " + w)
		}
	}
	for _, w := range embed.Words(abstract) {
		count(w)
	}
}

// pick chooses the terms each topic is named by: those whose
// share of the topic's papers most exceeds their share of the papers
// around it (the archive for a broad topic, its broad topic for one
// within), weighed by that share (the term's part of the Kullback-Leibler
// divergence of the topic from its surroundings). A topic within another
// does not repeat its terms; a term sharing a word with a better one is
// passed over.
func (n *namer) pick() {
	words := make([]string, len(n.df))
	for t, id := range n.terms {
		words[id] = t
	}
	total := float64(n.doc)
	// The topics within a broad topic follow one another: one buffer
	// holds their broad topic's counts, filled once for all of them,
	// rather than one as long as the archive's terms for each.
	var parentCounts []int32
	parentOf := -1
	for i := range n.h.Topics {
		t := &n.h.Topics[i]
		ref, refSize := n.df, total
		var taken []string
		if t.Level == 1 {
			p := n.h.Topics[t.Parent]
			if parentOf != t.Parent {
				if parentCounts == nil {
					parentCounts = make([]int32, len(n.df))
				} else {
					clear(parentCounts)
				}
				for id, c := range n.counts[t.Parent] {
					parentCounts[id] = c
				}
				parentOf = t.Parent
			}
			ref, refSize = parentCounts, float64(p.Size)
			taken = n.picked[t.Parent]
		}
		type scored struct {
			term  string
			score float64
		}
		var cands []scored
		size := float64(max(t.Size, 1))
		for id, c := range n.counts[i] {
			if c < 2 {
				continue
			}
			p, q := float64(c)/size, float64(ref[id])/refSize
			if p <= q {
				continue
			}
			cands = append(cands, scored{words[id], p * math.Log(p/q)})
		}
		slices.SortFunc(cands, func(a, b scored) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return strings.Compare(a.term, b.term)
		})
		var picked []string
		for _, c := range cands {
			if len(picked) == nameTerms {
				break
			}
			if !overlaps(c.term, picked) && !overlaps(c.term, taken) {
				picked = append(picked, c.term)
			}
		}
		n.picked[i] = picked
	}
}

// overlaps reports whether term shares a word with one of terms.
func overlaps(term string, terms []string) bool {
	for _, w := range strings.Fields(term) {
		for _, t := range terms {
			if slices.Contains(strings.Fields(t), w) {
				return true
			}
		}
	}
	return false
}
