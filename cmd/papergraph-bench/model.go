package main

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/papergraph/papergraph/demo"
)

// model holds the distributions synth draws from, all read from the demo
// set (demo/data, see its README for the sources and their licences): the
// Paperscape files give authors per paper, category sets, references per
// paper, titles and family names, and the ranks of researchers by papers
// and of papers by citations; the Kaggle sample gives abstracts and given
// names. Every table is in a fixed order, so that a seed gives one corpus.
type model struct {
	papers        int        // demo papers read
	authorCounts  []int      // authors of each demo paper
	categorySets  [][]string // categories of each demo paper, primary first
	refCounts     []int      // references of each demo paper to other arXiv papers
	titleLens     []int      // words of each demo title
	titleWords    []string   // every word of every demo title
	abstractLens  []int      // words of each demo abstract
	abstractWords []string   // every word of every demo abstract
	givenNames    []string   // the distinct given names of the Kaggle bylines
	familyNames   []string   // the distinct family names of the Paperscape bylines
	// researchersPerPaper is the demo's distinct author names per paper:
	// a corpus of N papers has that many times N researchers.
	researchersPerPaper float64
	// authorSkew and citationSkew are the exponents s of count ∝ rank^-s
	// fitted to the demo's researchers ranked by papers and its papers
	// ranked by citations.
	authorSkew, citationSkew float64
}

// demoModel is loadModel's model, read once a process: the demo set is
// embedded in the binary, so every read gives the same model, and synth
// only reads it.
var demoModel = sync.OnceValues(loadModel)

// loadModel reads the demo set.
func loadModel() (*model, error) {
	m := &model{}
	files := demo.Files()
	names, err := fs.Glob(files, "pscp-*.csv.gz")
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("demo set: no Paperscape files (%v)", err)
	}
	slices.Sort(names)
	papersBy := map[string]int{}
	citedBy := map[string]int{}
	families := map[string]bool{}
	for _, name := range names {
		err := eachLine(files, name, func(line string) {
			if strings.HasPrefix(line, "#") {
				return
			}
			f := strings.SplitN(line, ";", 7)
			if len(f) != 7 {
				return
			}
			m.papers++
			m.categorySets = append(m.categorySets, strings.Split(f[1], ","))
			refs := 0
			if f[4] != "" {
				for ref := range strings.SplitSeq(f[4], ",") {
					citedBy[ref]++
					refs++
				}
			}
			m.refCounts = append(m.refCounts, refs)
			authors := 0
			if f[5] != "" {
				for a := range strings.SplitSeq(f[5], ",") {
					authors++
					papersBy[a]++
					family := a[strings.LastIndexByte(a, '.')+1:]
					if plainName(family) {
						families[family] = true
					}
				}
			}
			m.authorCounts = append(m.authorCounts, authors)
			words := strings.Fields(f[6])
			m.titleLens = append(m.titleLens, len(words))
			m.titleWords = append(m.titleWords, words...)
		})
		if err != nil {
			return nil, err
		}
	}
	givens := map[string]bool{}
	err = eachLine(files, "kaggle-arxiv-sample.jsonl.gz", func(line string) {
		var r struct{ Authors, Abstract string }
		if json.Unmarshal([]byte(line), &r) != nil {
			return
		}
		words := strings.Fields(r.Abstract)
		m.abstractLens = append(m.abstractLens, len(words))
		m.abstractWords = append(m.abstractWords, words...)
		for a := range strings.SplitSeq(strings.ReplaceAll(r.Authors, " and ", ", "), ",") {
			if parts := strings.Fields(a); len(parts) >= 2 && len(parts) <= 3 && givenName(parts[:len(parts)-1]) {
				givens[strings.Join(parts[:len(parts)-1], " ")] = true
			}
		}
	})
	if err != nil {
		return nil, err
	}
	m.givenNames, m.familyNames = sortedKeys(givens), sortedKeys(families)
	if m.papers == 0 || len(m.givenNames) == 0 || len(m.familyNames) == 0 || len(m.abstractLens) == 0 {
		return nil, fmt.Errorf("demo set: too little to model (%d papers, %d given names, %d family names, %d abstracts)",
			m.papers, len(m.givenNames), len(m.familyNames), len(m.abstractLens))
	}
	m.researchersPerPaper = float64(len(papersBy)) / float64(m.papers)
	m.authorSkew = rankSkew(papersBy)
	m.citationSkew = rankSkew(citedBy)
	return m, nil
}

// eachLine calls fn with each line of the gzipped file name.
func eachLine(files fs.FS, name string, fn func(string)) error {
	f, err := files.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// plainName reports whether s is a name of two or more ASCII letters
// (hyphens allowed): no TeX accents, no stray punctuation.
func plainName(s string) bool {
	if len(s) < 2 {
		return false
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

// givenName reports whether parts are a given name every byline parser
// reads alike: each an initial ("A.") or a capitalised word of three
// letters or more, not an affiliation's "of" or a particle's "De".
func givenName(parts []string) bool {
	for _, p := range parts {
		initial := len(p) == 2 && p[1] == '.' && 'A' <= p[0] && p[0] <= 'Z'
		word := len(p) >= 3 && 'A' <= p[0] && p[0] <= 'Z' && plainName(p) && strings.ToLower(p[1:]) == p[1:]
		if !initial && !word {
			return false
		}
	}
	return true
}

func sortedKeys(set map[string]bool) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// rankSkew fits s in count ∝ rank^-s to the counts ranked from the
// largest, by least squares on the logarithms of the ranks that hold more
// than one (the ones make a flat tail the power law does not describe).
// s is kept below 1, where drawRank needs it.
func rankSkew(counts map[string]int) float64 {
	cs := make([]int, 0, len(counts))
	for _, c := range counts {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b int) int { return cmp.Compare(b, a) })
	var n, sx, sy, sxx, sxy float64
	for i, c := range cs {
		if c < 2 {
			break
		}
		x, y := math.Log(float64(i+1)), math.Log(float64(c))
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	if n < 2 {
		return 0.5
	}
	s := -(n*sxy - sx*sy) / (n*sxx - sx*sx)
	return min(max(s, 0.05), 0.95)
}
