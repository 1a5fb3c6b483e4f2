package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Corpus files: the papers in the Kaggle snapshot's format, their
// citations in Paperscape's (the only format papergraph reads that holds
// references to arXiv ids), and what run needs to know of the corpus.
const (
	papersFile    = "papers.jsonl"
	citationsFile = "citations.csv"
	manifestFile  = "bench.json"
	// incrementFile is a day's increment (synth --increment): new papers
	// after the corpus and new versions of some of its papers.
	incrementFile = "increment.jsonl"
)

// Parameters the demo set cannot give: it has no paper of more than 93
// authors, but the real archive has collaborations of thousands (its
// largest, 2,832 authors, is the case the API is tested with).
const (
	collaborationEvery = 20_000 // one paper in this many is a collaboration's
	collaborationMin   = 1_000  // of 1,000 to 2,999 authors
	collaborationSpan  = 2_000
	// perMonth is the papers given one month of submission, until the
	// corpus would span more than maxMonths (from January 2015).
	perMonth  = 20_000
	maxMonths = 120
	// maxPerYear is the most papers a researcher is given in a calendar
	// year of the corpus. The power law of papers per researcher alone
	// gives its top rank a fixed share of every paper (39,922 papers at
	// 750,000); arXiv's most prolific authors, the members of the large
	// collaborations, have about a hundred papers a year and a few
	// thousand over a career of up to 40 years. A draw that lands on a
	// researcher at the cap is drawn again. The corpus spans at most
	// maxMonths, so no researcher has more than 10 × maxPerYear papers.
	maxPerYear = 120
)

// manifest tells run what to ask of a corpus: papers of its most
// prolific and of a median-rank researcher, words, a category, a prefix
// and the dates of its first 10,000 papers.
type manifest struct {
	Synthetic     bool   `json:"synthetic"`
	Papers        int    `json:"papers"`
	Seed          uint64 `json:"seed"`
	ProlificPaper string `json:"prolificPaper"`
	MedianPaper   string `json:"medianPaper"`
	CommonWord    string `json:"commonWord"`
	RareWord      string `json:"rareWord"`
	Category      string `json:"category"`
	SuggestPrefix string `json:"suggestPrefix"`
	ExportFrom    string `json:"exportFrom"`
	ExportTo      string `json:"exportTo"`
}

// kaggleLine is a record of the Kaggle snapshot, with the fields the
// importer reads.
type kaggleLine struct {
	ID         string          `json:"id"`
	Authors    string          `json:"authors"`
	Title      string          `json:"title"`
	Comments   string          `json:"comments"`
	Categories string          `json:"categories"`
	Abstract   string          `json:"abstract"`
	Versions   []kaggleVersion `json:"versions"`
}

type kaggleVersion struct {
	Version string `json:"version"`
	Created string `json:"created"`
}

// increment is what synth writes into incrementFile: the New papers that
// follow the corpus (by the same researchers, in the months after it) and
// a second version of Revised of its papers, the last ones spread over its
// last three months (papers are revised while they are recent).
type increment struct {
	New, Revised int
}

// synth writes a corpus of n papers drawn with seed into dir, and the
// increment inc when it has papers, and returns the corpus's manifest. It
// holds one paper at a time (and the papers to revise): memory grows with
// n only by a counter per researcher.
func synth(m *model, n int, seed uint64, dir string, inc increment) (*manifest, error) {
	if n < 1 {
		return nil, fmt.Errorf("--papers must be at least 1, got %d", n)
	}
	if inc.New < 0 || inc.Revised < 0 || inc.Revised > n {
		return nil, fmt.Errorf("--increment and --revised must be 0 or more, --revised at most --papers")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	papers, err := create(filepath.Join(dir, papersFile))
	if err != nil {
		return nil, err
	}
	defer papers.close()
	cites, err := create(filepath.Join(dir, citationsFile))
	if err != nil {
		return nil, err
	}
	defer cites.close()
	fmt.Fprintf(cites.w, "# SYNTHETIC data written by papergraph-bench synth (%d papers, seed %d): no paper, person or citation in it is real.\n", n, seed)
	fmt.Fprintf(cites.w, "# Format (Paperscape's): arxiv-id;categories;num-found-refs;num-total-refs;refs;authors;title\n")

	g := newGenerator(m, n, seed)
	man := &manifest{Synthetic: true, Papers: n, Seed: seed}
	man.CommonWord, man.RareWord, man.Category = m.commonWord(), m.rareWord(), m.commonCategory()
	man.ExportFrom = g.date(0).Format(time.DateOnly)
	man.ExportTo = g.date(min(n, 10_000) - 1).Format(time.DateOnly)
	enc := json.NewEncoder(papers.w)
	enc.SetEscapeHTML(false)
	// Revised papers are every step-th from the last one back.
	step := max(1, min(n, 3*g.month)/max(1, inc.Revised))
	var revised []kaggleLine
	var p paper
	for i := range n {
		g.paper(i, &p)
		man.noteExamples(g, &p)
		rec, names := g.record(&p, seed)
		if err := enc.Encode(rec); err != nil {
			return nil, err
		}
		fmt.Fprintf(cites.w, "%s;%s;%d;%d;%s;%s;%s\n", p.id, strings.Join(p.categories, ","), len(p.refs), len(p.refs),
			strings.Join(p.refs, ","), strings.Join(names, ","), p.title)
		if back := n - 1 - i; back%step == 0 && back/step < inc.Revised {
			revised = append(revised, *rec)
		}
	}
	if inc.New > 0 || inc.Revised > 0 {
		if err := writeIncrement(g, n, seed, inc, revised, filepath.Join(dir, incrementFile)); err != nil {
			return nil, err
		}
	}
	if man.ProlificPaper == "" {
		man.ProlificPaper = g.id(0)
		man.SuggestPrefix = g.prolificPrefix()
	}
	if man.MedianPaper == "" {
		man.MedianPaper = g.id(n / 2)
	}
	if err := papers.close(); err != nil {
		return nil, err
	}
	if err := cites.close(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, err
	}
	return man, os.WriteFile(filepath.Join(dir, manifestFile), append(b, '\n'), 0o644)
}

// readManifest reads the manifest synth wrote into dir.
func readManifest(dir string) (*manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, err
	}
	var man manifest
	if err := json.Unmarshal(b, &man); err != nil {
		return nil, fmt.Errorf("%s: %w", manifestFile, err)
	}
	return &man, nil
}

// noteExamples makes p the manifest's example paper of the most prolific
// researcher, or of one of median output, if it is the first such.
func (man *manifest) noteExamples(g *generator, p *paper) {
	median := g.researchers / 2
	medianSpan := max(1, g.researchers/1000)
	for _, k := range p.authors {
		if k == 0 && man.ProlificPaper == "" {
			man.ProlificPaper = p.id
			man.SuggestPrefix = g.prolificPrefix()
		}
		if k >= median && k < median+medianSpan && man.MedianPaper == "" {
			man.MedianPaper = p.id
		}
	}
}

// prolificPrefix is the start of the most prolific researcher's family
// name, which the suggest operation completes.
func (g *generator) prolificPrefix() string {
	return strings.ToLower(g.family(0)[:min(4, len(g.family(0)))])
}

// writeIncrement writes the increment after a corpus of n papers: its new
// papers, drawn on from where the corpus ended, then the revised papers
// with a second version dated at the first new paper.
func writeIncrement(g *generator, n int, seed uint64, inc increment, revised []kaggleLine, path string) error {
	f, err := create(path)
	if err != nil {
		return err
	}
	defer f.close()
	enc := json.NewEncoder(f.w)
	enc.SetEscapeHTML(false)
	var p paper
	for i := n; i < n+inc.New; i++ {
		g.paper(i, &p)
		rec, _ := g.record(&p, seed)
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	v2 := g.date(n).Format(kaggleTime)
	for _, rec := range revised {
		rec.Versions = append(rec.Versions, kaggleVersion{Version: "v2", Created: v2})
		rec.Comments += "; v2: revised"
		if err := enc.Encode(&rec); err != nil {
			return err
		}
	}
	return f.close()
}

// paper is one generated paper; its slices are reused from paper to paper.
type paper struct {
	id, title, abstract string
	date                time.Time
	categories          []string
	authors             []int // researcher ranks
	refs                []string
	seen                map[int]bool
	words               []string
}

// generator draws papers from the model, one random stream per corpus.
type generator struct {
	m           *model
	r           *rand.Rand
	seed        uint64
	n, month    int
	researchers int
	// year is the calendar year (from 2015) of the papers drawn last, and
	// inYear the papers each researcher rank has in it: 4 bytes a
	// researcher, the one part of synth's memory that grows with n.
	year   int
	inYear []int32
}

func newGenerator(m *model, n int, seed uint64) *generator {
	month := perMonth
	if n > perMonth*maxMonths {
		month = (n + maxMonths - 1) / maxMonths
	}
	g := &generator{
		m: m, r: rand.New(rand.NewPCG(seed, 0x70617065726772)), seed: seed, n: n, month: month,
		researchers: max(1, int(math.Round(float64(n)*m.researchersPerPaper))),
	}
	g.inYear = make([]int32, g.researchers)
	return g
}

// id is paper i's arXiv id: month by month from 1501, numbered in each.
func (g *generator) id(i int) string {
	m := i / g.month
	return fmt.Sprintf("%02d%02d.%05d", 15+m/12, 1+m%12, 1+i%g.month)
}

// date is paper i's submission time, spread over its month in order.
func (g *generator) date(i int) time.Time {
	m := i / g.month
	start := time.Date(2015+m/12, time.Month(1+m%12), 1, 0, 0, 0, 0, time.UTC)
	span := start.AddDate(0, 1, 0).Sub(start)
	return start.Add(time.Duration(float64(span) * float64(i%g.month) / float64(g.month))).Truncate(time.Second)
}

// drawRank draws a rank in [0, n) with P(k) ∝ (k+1)^-s, by inverting the
// continuous distribution's CDF.
func (g *generator) drawRank(n int, s float64) int {
	return min(n-1, int(float64(n)*math.Pow(g.r.Float64(), 1/(1-s))))
}

// hash mixes the seed and k (SplitMix64's finaliser).
func (g *generator) hash(k int) uint64 {
	z := g.seed ^ uint64(k)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// name is the name of the researcher of rank k: a given name of the
// Kaggle sample and a family name of Paperscape's, fixed by the seed.
func (g *generator) name(k int) string {
	h := g.hash(k)
	return g.m.givenNames[h%uint64(len(g.m.givenNames))] + " " + g.family(k)
}

func (g *generator) family(k int) string {
	h := g.hash(k)
	return g.m.familyNames[(h>>32)%uint64(len(g.m.familyNames))]
}

// kaggleTime is the layout of the Kaggle snapshot's version dates.
const kaggleTime = "Mon, 2 Jan 2006 15:04:05 GMT"

// record is p as a line of the Kaggle snapshot, in its first version,
// and its authors' names.
func (g *generator) record(p *paper, seed uint64) (*kaggleLine, []string) {
	names := make([]string, len(p.authors))
	for j, k := range p.authors {
		names[j] = g.name(k)
	}
	return &kaggleLine{
		ID: p.id, Authors: strings.Join(names, ", "), Title: p.title,
		Comments:   fmt.Sprintf("synthetic record (papergraph-bench synth, seed %d)", seed),
		Categories: strings.Join(p.categories, " "), Abstract: p.abstract,
		Versions: []kaggleVersion{{Version: "v1", Created: p.date.Format(kaggleTime)}},
	}, names
}

// paper fills p with paper i.
func (g *generator) paper(i int, p *paper) {
	m, r := g.m, g.r
	p.id, p.date = g.id(i), g.date(i)
	p.categories = m.categorySets[r.IntN(len(m.categorySets))]
	p.title = g.text(m.titleLens[r.IntN(len(m.titleLens))], m.titleWords, p)
	p.abstract = g.text(m.abstractLens[r.IntN(len(m.abstractLens))], m.abstractWords, p)
	if p.seen == nil {
		p.seen = map[int]bool{}
	}
	clear(p.seen)
	p.authors = p.authors[:0]
	if y := i / g.month / 12; y != g.year {
		g.year = y
		clear(g.inYear)
	}
	if r.IntN(collaborationEvery) == 0 {
		for want := min(collaborationMin+r.IntN(collaborationSpan), g.researchers); len(p.authors) < want; {
			g.addAuthor(p, true)
		}
	} else {
		want := min(max(1, m.authorCounts[r.IntN(len(m.authorCounts))]), g.researchers)
		for len(p.authors) < want {
			g.addAuthor(p, false)
		}
	}
	// References go to earlier papers, the more so to the more cited
	// ranks, which are the older papers.
	clear(p.seen)
	p.refs = p.refs[:0]
	for want := min(m.refCounts[r.IntN(len(m.refCounts))], i); len(p.refs) < want; {
		if t := g.drawRank(i, m.citationSkew); !p.seen[t] {
			p.seen[t] = true
			p.refs = append(p.refs, g.id(t))
		}
	}
}

// addAuthor adds to p a researcher not yet on it, of any rank alike
// (a collaboration's members) or by the rank skew, drawing again one who
// has maxPerYear papers this year. Only a corpus too small for the cap (a
// few hundred papers a researcher) has it exceeded, rather than loop.
func (g *generator) addAuthor(p *paper, uniform bool) {
	for tries := 0; ; tries++ {
		var k int
		if uniform {
			k = g.r.IntN(g.researchers)
		} else {
			k = g.drawRank(g.researchers, g.m.authorSkew)
		}
		if p.seen[k] || g.inYear[k] >= maxPerYear && tries < 1000 {
			continue
		}
		p.seen[k] = true
		p.authors = append(p.authors, k)
		g.inYear[k]++
		return
	}
}

// text is n words drawn from words, joined by blanks.
func (g *generator) text(n int, words []string, p *paper) string {
	p.words = p.words[:0]
	for range max(n, 1) {
		p.words = append(p.words, words[g.r.IntN(len(words))])
	}
	return strings.Join(p.words, " ")
}

// commonWord is the demo titles' most frequent word of six lowercase
// letters or more; rareWord the first such word, in alphabetical order,
// that five demo titles hold (about one in 10,000).
func (m *model) commonWord() string {
	words, counts := m.longTitleWords()
	best := words[0]
	for _, w := range words {
		if counts[w] > counts[best] {
			best = w
		}
	}
	return best
}

func (m *model) rareWord() string {
	words, counts := m.longTitleWords()
	for _, w := range words {
		if counts[w] == 5 {
			return w
		}
	}
	return words[len(words)-1]
}

// longTitleWords returns the title words of six lowercase letters or
// more, sorted, and how often each occurs.
func (m *model) longTitleWords() ([]string, map[string]int) {
	counts := map[string]int{}
	set := map[string]bool{}
	for _, w := range m.titleWords {
		if len(w) >= 6 && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") == "" {
			counts[w]++
			set[w] = true
		}
	}
	return sortedKeys(set), counts
}

// commonCategory is the most frequent primary category of the demo.
func (m *model) commonCategory() string {
	set := map[string]bool{}
	n := map[string]int{}
	for _, cs := range m.categorySets {
		set[cs[0]] = true
		n[cs[0]]++
	}
	best := ""
	for _, c := range sortedKeys(set) {
		if best == "" || n[c] > n[best] {
			best = c
		}
	}
	return best
}

// bufferedFile is a file written through a buffer.
type bufferedFile struct {
	f      *os.File
	w      *bufio.Writer
	closed bool
}

func create(path string) (*bufferedFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &bufferedFile{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// close flushes and closes the file, once.
func (b *bufferedFile) close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	err := b.w.Flush()
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// importCommands are the commands that load the corpus in dir: one run
// of both formats, which into an empty archive is one bulk load.
func importCommands(dir string) []string {
	return []string{
		"papergraph import kaggle " + quote(filepath.Join(dir, papersFile)) +
			" + paperscape " + quote(filepath.Join(dir, citationsFile)),
	}
}

// quote quotes s for a POSIX shell when it needs it.
func quote(s string) string {
	if strings.IndexFunc(s, func(c rune) bool {
		return !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@", c)
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
