package db

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"modernc.org/libc"
)

// On SQLite, a relevance order scores its candidates by FTS5's bm25 over
// papers_fts (title weighing 10, abstract 1). Asked of FTS5, bm25 needs
// the papers_fts cursor of the whole query: it counts each phrase's
// matching papers by walking the phrase's postings, and the statement
// then walks every match of the query to pick out the candidates. A word
// in much of the archive costs two walks of its postings per request,
// which grow with the archive while the candidates do not.
//
// bm25Candidates computes the same bm25 here instead, from what FTS5's
// own function reads (fts5Bm25Function in SQLite's fts5_aux.c):
//
//	score = Σ_phrases idf × f × (k1 + 1) / (f + k1 × (1 − b + b × D / avgdl))
//
// with k1 = 1.2 and b = 0.75; f the phrase's instances in the paper, each
// weighing its column's weight; D the paper's tokens in all columns;
// avgdl the index's tokens per row; idf = ln((N − n + 0.5) / (n + 0.5)),
// at least 1e-6, for the N rows of the index of which n match the
// phrase. The candidates' instances are counted in their text, taken
// apart as the index took it (indexTokens); D is read from
// papers_fts_docsize, which also checks the tokens counted here; N and
// the tokens of avgdl from the index's averages record; and n, the walk
// of the postings, is counted once for a state of the index (bm25Counts)
// and cached, so that the candidates cost a request about the same at
// any size of the archive.

// goBM25 tells SearchCandidates to score SQLite's candidates here where
// it can; a test turns it off to compare with FTS5's bm25.
var goBM25 = true

// bm25MinMatches is the fewest matches of its phrases, summed (as
// cached), for which a query's candidates are scored here. Reading a
// candidate's text and taking it apart costs about as much as FTS5's
// walk of a few tens of postings, so that a query matching few papers
// is scored sooner by FTS5's bm25; one whose counts are not cached yet
// is scored here, which counts them.
var bm25MinMatches int64 = 32 * RelevanceCandidates

// bm25Phrase is one term of a query as an FTS5 phrase: its words, the
// last one a prefix when prefix is set, and its MATCH text.
type bm25Phrase struct {
	words  []string
	prefix bool
	match  string
}

// bm25Phrases is q's terms as FTS5's phrases, in order; ok is false when
// a word is not ASCII. ASCII words (letters and digits, lowercase, as
// searchText leaves them) are single tokens to unicode61 as they are to
// indexTokens; other letters may be classed by unicode61's tables
// otherwise than by Go's, and are left to FTS5.
func (q SearchQuery) bm25Phrases() (ps []bm25Phrase, ok bool) {
	ps = make([]bm25Phrase, len(q.Terms))
	for i, t := range q.Terms {
		for _, w := range t.Words {
			for j := 0; j < len(w); j++ {
				if w[j] >= utf8.RuneSelf {
					return nil, false
				}
			}
		}
		ps[i] = bm25Phrase{words: t.Words, prefix: t.Prefix, match: SearchQuery{Terms: []SearchTerm{t}}.fts5()}
	}
	return ps, true
}

// bm25Counts caches, for each database (its pool), the number of papers
// matching each phrase, in the state of the index named by key: the
// index's averages record (its rows and tokens) and its structure record
// (its segments, and counters FTS5 increments at every flush of new
// entries). A commit that changes the index writes new entries (a new
// segment: the structure changes) or only deletes rows (the averages
// change), so a key read with the counts' snapshot names its counts,
// whichever process committed. A request reads the key in its own
// statement and uses the counts only under the same key.
var bm25Counts struct {
	sync.Mutex
	dbs map[*sql.DB]*phraseCounts
}

// phraseCounts is one database's counts, under the key of its index.
type phraseCounts struct {
	key string
	n   map[string]int64
}

// Bounds on bm25Counts: past them it starts again, empty, so that
// distinct queries cannot grow it without end.
const (
	maxCountedDBs     = 16
	maxCountedPhrases = 1 << 16
)

// cachedCounts is the key of db's cached counts and those of ps cached
// (by MATCH text), and the phrases of ps without one.
func cachedCounts(db *sql.DB, ps []bm25Phrase) (key string, have map[string]int64, missing []bm25Phrase) {
	bm25Counts.Lock()
	defer bm25Counts.Unlock()
	have = map[string]int64{}
	pc := bm25Counts.dbs[db]
	for _, p := range ps {
		if n, ok := pc.lookup(p.match); ok {
			have[p.match] = n
		} else if _, dup := have[p.match]; !dup {
			missing = append(missing, p)
			have[p.match] = -1
		}
	}
	for _, p := range missing {
		delete(have, p.match)
	}
	if pc != nil {
		key = pc.key
	}
	return key, have, missing
}

func (pc *phraseCounts) lookup(match string) (int64, bool) {
	if pc == nil {
		return 0, false
	}
	n, ok := pc.n[match]
	return n, ok
}

// storeCounts caches counts under key for db: added to those of the same
// key, or replacing those of another.
func storeCounts(db *sql.DB, key string, counts map[string]int64) {
	bm25Counts.Lock()
	defer bm25Counts.Unlock()
	if bm25Counts.dbs == nil || len(bm25Counts.dbs) >= maxCountedDBs && bm25Counts.dbs[db] == nil {
		bm25Counts.dbs = map[*sql.DB]*phraseCounts{}
	}
	pc := bm25Counts.dbs[db]
	if pc == nil || pc.key != key || len(pc.n)+len(counts) > maxCountedPhrases {
		pc = &phraseCounts{key: key, n: map[string]int64{}}
		bm25Counts.dbs[db] = pc
	}
	for m, n := range counts {
		pc.n[m] = n
	}
}

// bm25Row is a row of bm25Candidates' statement: a candidate with its
// year, text and sizes (papers_fts_docsize's sz, read as the tokens of
// each column: sized is false when the paper has no sizes or they do not
// read so), or, with an id below 1, a record of the index (stat: -1 the
// averages, -10 the structure) or the count n of the phrase -100 - id.
type bm25Row struct {
	ID       int64
	Year     int
	Cited    int64
	Title    string
	Abstract string
	Sizes    [2]uint64
	Sized    bool
	Stat     []byte
	N        int64
}

// scanBM25Rows reads the rows of bm25Candidates' statement. It reads
// them by hand rather than through bun, which would copy each
// candidate's sizes and reflect on every column of a thousand rows: the
// sizes are decoded from the driver's buffer, and only the index's
// records are kept as bytes.
func scanBM25Rows(rows *sql.Rows) ([]bm25Row, error) {
	defer rows.Close()
	var out []bm25Row
	var year, cited, n sql.NullInt64
	var title, abstract sql.NullString
	var stat sql.RawBytes
	for rows.Next() {
		var r bm25Row
		if err := rows.Scan(&r.ID, &year, &cited, &title, &abstract, &stat, &n); err != nil {
			return nil, err
		}
		r.Year, r.Cited, r.Title, r.Abstract, r.N = int(year.Int64), cited.Int64, title.String, abstract.String, n.Int64
		if r.ID > 0 {
			r.Sizes, r.Sized = docSizes(stat)
		} else {
			r.Stat = slices.Clone([]byte(stat))
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// docSizes reads a papers_fts_docsize sz: the tokens of each column of
// papers_fts, as varints; ok is false when sz does not hold them.
func docSizes(sz []byte) (cols [2]uint64, ok bool) {
	for col := range cols {
		v, n := sqliteVarint(sz)
		if n <= 0 {
			return cols, false
		}
		cols[col], sz = v, sz[n:]
	}
	return cols, true
}

// bm25Select is the statement's SELECT, after the candidates' CTE c, of
// the candidates with their text and sizes, the index's averages and
// structure records, and the count of each phrase of missing, in no
// order.
func (c *candidatesQuery) bm25Select(missing []bm25Phrase) string {
	q := "SELECT c.id AS id, " + yearSQL(false, "c.published") + " AS year, c.citation_count AS citation_count, p.title AS title, p.abstract AS abstract, d.sz AS stat, NULL AS n FROM c" +
		" CROSS JOIN papers AS p ON p.id = c.id LEFT JOIN papers_fts_docsize AS d ON d.id = c.id" +
		"\nUNION ALL SELECT -id, NULL, NULL, NULL, NULL, block, NULL FROM papers_fts_data WHERE id IN (1, 10)"
	for i, p := range missing {
		q += "\nUNION ALL SELECT " + strconv.Itoa(-100-i) + ", NULL, NULL, NULL, NULL, NULL, (SELECT COUNT(*) FROM papers_fts WHERE papers_fts MATCH ?)"
		c.args = append(c.args, p.match)
	}
	// No ORDER BY: the candidates are put in order once read
	// (bm25Candidates), where SQLite would sort their text with them.
	return q
}

// bm25Candidates reads the candidates of s, which has a query of phrases
// ps, and scores them here (see goBM25), in one statement: the
// candidates, their text and sizes, the index's records and the counts of
// the phrases not cached under the key the records make. When the counts
// cached are of another key, they are counted again in one more
// statement. ok is false, and nothing read, when the tokens counted here
// are not those the index holds of a candidate (papers_fts_docsize), or
// when the query matches fewer than bm25MinMatches papers.
func (s PaperSearch) bm25Candidates(ctx context.Context, idb bun.IDB, ps []bm25Phrase) (rows []candidate, ok bool, err error) {
	db := idb.NewSelect().DB().DB
	key, counts, missing := cachedCounts(db, ps)
	if len(missing) == 0 {
		var sum int64
		for _, n := range counts {
			sum += n
		}
		if sum < bm25MinMatches {
			return nil, false, nil
		}
	}
	c, bands := s.candidatesQuery(idb)
	q := c.candidates(bands) + c.bm25Select(missing)
	res, err := idb.QueryContext(c.b.ctx(ctx), q, c.args...)
	if err != nil {
		return nil, false, err
	}
	got, err := scanBM25Rows(res)
	if err != nil {
		return nil, false, err
	}
	// The candidates first, most cited first (newest id first among
	// equals), then the records and counts.
	slices.SortFunc(got, func(x, y bm25Row) int {
		if (x.ID > 0) != (y.ID > 0) {
			return boolRank(x.ID <= 0) - boolRank(y.ID <= 0)
		}
		return cmp.Or(cmp.Compare(y.Cited, x.Cited), cmp.Compare(y.ID, x.ID))
	})
	n := len(got)
	for n > 0 && got[n-1].ID <= 0 {
		n--
	}
	avg, now := indexRecords(got[n:], missing, counts)
	if now != key && len(counts) > len(missing) {
		// Counts cached of another state of the index: all counted again.
		if counts, avg, now, err = countPhrases(ctx, idb, ps); err != nil {
			return nil, false, err
		}
	}
	storeCounts(db, now, counts)
	if n == 0 { // nothing to score: an empty index has no averages record
		return nil, true, nil
	}
	sc, ok := newBM25Scorer(ps, counts, avg)
	if !ok {
		return nil, false, nil
	}
	return sc.scoreAll(got[:n], s.scoreFirst)
}

// indexRecords reads the index's records and the phrases' counts from
// the rows past the candidates, adding the counts to counts: the
// averages record, and the key of the index's state.
func indexRecords(rows []bm25Row, missing []bm25Phrase, counts map[string]int64) (avg []byte, key string) {
	var structure []byte
	for _, r := range rows {
		switch {
		case r.ID == -1:
			avg = r.Stat
		case r.ID == -10:
			structure = r.Stat
		case r.ID <= -100:
			counts[missing[-100-r.ID].match] = r.N
		}
	}
	return avg, string(avg) + "\x00" + string(structure)
}

// countPhrases counts the papers matching each phrase of ps, and reads
// the index's records, in one statement.
func countPhrases(ctx context.Context, idb bun.IDB, ps []bm25Phrase) (counts map[string]int64, avg []byte, key string, err error) {
	q := "SELECT -id AS id, block AS stat, NULL AS n FROM papers_fts_data WHERE id IN (1, 10)"
	args := make([]any, len(ps))
	for i, p := range ps {
		q += " UNION ALL SELECT " + strconv.Itoa(-100-i) + ", NULL, (SELECT COUNT(*) FROM papers_fts WHERE papers_fts MATCH ?)"
		args[i] = p.match
	}
	var rows []bm25Row
	if err := idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil {
		return nil, nil, "", err
	}
	counts = map[string]int64{}
	avg, key = indexRecords(rows, ps, counts)
	return counts, avg, key, nil
}

// bm25Scorer scores papers for a query's phrases as FTS5's bm25 does.
type bm25Scorer struct {
	phrases []bm25Phrase
	idf     []float64
	avgdl   float64
	toks    [2][]string // scratch: a paper's tokens, title and abstract
	buf     []byte      // scratch: a folded token
}

// bm25Weights are the weights of papers_fts's columns, title and
// abstract, as the SQL scores pass them to bm25.
var bm25Weights = [2]int{10, 1}

// newBM25Scorer is the scorer of ps, from the count of papers matching
// each (by MATCH text) and the index's averages record (its rows, then
// its tokens in each column, as varints). ok is false when the record
// does not read so.
func newBM25Scorer(ps []bm25Phrase, counts map[string]int64, avg []byte) (*bm25Scorer, bool) {
	rows, n := sqliteVarint(avg)
	if n <= 0 {
		return nil, false
	}
	var tokens int64
	for col, i := 0, n; col < len(bm25Weights); col++ {
		v, n := sqliteVarint(avg[i:])
		if n <= 0 {
			return nil, false
		}
		tokens, i = tokens+int64(v), i+n
	}
	sc := &bm25Scorer{phrases: ps, idf: make([]float64, len(ps)), avgdl: float64(tokens) / float64(int64(rows))}
	for i, p := range ps {
		hits, ok := counts[p.match]
		if !ok {
			return nil, false
		}
		// As fts5Bm25GetData: a phrase in more than half the rows would
		// have a negative idf.
		idf := sqliteLog((float64(int64(rows)-hits) + 0.5) / (float64(hits) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		sc.idf[i] = idf
	}
	return sc, true
}

// scoreAll scores rows, candidates most cited first (newest id first
// among equals), each by score times the citations' weight. When first is
// above 0, only the rows that may be among the first best of them get
// their score; the others are unscored (see Candidates.Unscored): a row
// whose bound (maxScore) is below the first-th best score found so far
// cannot be among them, nor can any row after it, whose bound is no
// higher. ok is false when score refuses a row it scores.
func (sc *bm25Scorer) scoreAll(rows []bm25Row, first int) (out []candidate, ok bool, err error) {
	out = make([]candidate, len(rows))
	best := &topScores{n: first}
	for i, r := range rows {
		w := 1 + sqliteLog(float64(1+r.Cited))
		if best.full() && sc.maxScore(w) < best.least() {
			for j, r := range rows[i:] {
				out[i+j] = candidate{ID: r.ID, Year: r.Year, Score: unscored}
			}
			break
		}
		score, ok := sc.score(r.Title, r.Abstract, r.Sizes, r.Sized)
		if !ok {
			return nil, false, nil
		}
		out[i] = candidate{ID: r.ID, Year: r.Year, Score: score * w}
		best.add(out[i].Score)
	}
	return out, true, nil
}

// maxScore is a bound above every score of a paper whose citations weigh
// w: each phrase's part of bm25 is its idf times f × (k1 + 1) / (f + K),
// with K above 0, which is below idf × (k1 + 1) whatever the paper's
// instances f. The bound is raised by a part in a billion so that the
// rounding of the score's arithmetic cannot carry a score past it.
func (sc *bm25Scorer) maxScore(w float64) float64 {
	m := 0.0
	for _, idf := range sc.idf {
		m += idf * (1.2 + 1)
	}
	return m * w * (1 + 1e-9)
}

// topScores keeps the n best scores added to it (none when n is 0).
type topScores struct {
	n      int
	scores []float64 // a min-heap: scores[0] is the least
}

func (t *topScores) full() bool { return t.n > 0 && len(t.scores) == t.n }

// least is the least of the n best scores, once full.
func (t *topScores) least() float64 { return t.scores[0] }

func (t *topScores) add(s float64) {
	switch {
	case t.n == 0:
	case len(t.scores) < t.n:
		t.scores = append(t.scores, s)
		for i := len(t.scores) - 1; i > 0 && t.scores[(i-1)/2] > t.scores[i]; i = (i - 1) / 2 {
			t.scores[i], t.scores[(i-1)/2] = t.scores[(i-1)/2], t.scores[i]
		}
	case s > t.scores[0]:
		t.scores[0] = s
		for i := 0; ; {
			l, m := 2*i+1, i
			if l < len(t.scores) && t.scores[l] < t.scores[m] {
				m = l
			}
			if l+1 < len(t.scores) && t.scores[l+1] < t.scores[m] {
				m = l + 1
			}
			if m == i {
				break
			}
			t.scores[i], t.scores[m] = t.scores[m], t.scores[i]
			i = m
		}
	}
}

// score is the bm25 of a paper of this title and abstract, whose sizes
// in the index (papers_fts_docsize's sz: its tokens in each column) are
// sizes, with the sign flipped (higher is better), as the SQL scores
// have it before the citations' weight. ok is false when the sizes are
// missing (sized false) or are not the number of tokens counted here in
// each column.
func (sc *bm25Scorer) score(title, abstract string, sizes [2]uint64, sized bool) (float64, bool) {
	if !sized {
		return 0, false
	}
	sc.toks[0] = indexTokens(sc.toks[0][:0], &sc.buf, title)
	sc.toks[1] = indexTokens(sc.toks[1][:0], &sc.buf, abstract)
	var d int64
	for col := range sc.toks {
		if sizes[col] != uint64(len(sc.toks[col])) {
			return 0, false
		}
		d += int64(sizes[col])
	}
	// The arithmetic of fts5Bm25Function, step by step in float64 (no
	// fused multiply-add): the same bits on either side.
	k1, b := 1.2, 0.75
	D := float64(d)
	score := 0.0
	for i, p := range sc.phrases {
		f := 0.0
		for col, toks := range sc.toks {
			f += float64(bm25Weights[col] * phraseHits(toks, p))
		}
		score = score + sc.idf[i]*(float64(f*(k1+1))/(f+float64(k1*(1-b+float64(b*D)/sc.avgdl))))
	}
	return score, true
}

// indexTokens appends to dst the tokens papers_fts holds of s, as the
// triggers index it (search_fold, that is indexFold) and the unicode61
// tokenizer splits it, without writing the folded text: ASCII text
// without TeX markup goes to the tokenizer as it is, split at every
// character but an ASCII letter or digit; other text is folded by
// texFold, then split and folded as joinedWords does it (a rune the fold
// table drops splits no word), whose words unicode61 keeps whole (a
// letter its tables class otherwise would change the paper's count of
// tokens, which score checks). ASCII letters are left in either case
// (tokenIs folds them); a token with other letters is folded, in buf.
func indexTokens(dst []string, buf *[]byte, s string) []string {
	folded := false
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || s[i] == '\\' {
			s, folded = texFold(s), true
			break
		}
	}
	start, wide := -1, false // the token being read, and whether it has a rune past ASCII
	for i := 0; i < len(s); {
		c, n := s[i], 1
		in := asciiWordByte[c]
		if c >= utf8.RuneSelf && folded {
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			r = fold(unicode.ToLower(r))
			in = r < 0 || isIndexRune(r)
			wide = wide || in
		}
		if in && start < 0 {
			start = i
		} else if !in && start >= 0 {
			dst, start, wide = appendToken(dst, buf, s[start:i], wide), -1, false
		}
		i += n
	}
	if start >= 0 {
		dst = appendToken(dst, buf, s[start:], wide)
	}
	return dst
}

// asciiWordByte tells the ASCII letters and digits.
var asciiWordByte = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// appendToken appends tok to dst, its runes past ASCII (when wide) folded
// as joinedWords folds them, and the runes the fold drops left out.
func appendToken(dst []string, buf *[]byte, tok string, wide bool) []string {
	if !wide {
		return append(dst, tok)
	}
	b := (*buf)[:0]
	for _, r := range tok {
		if r >= utf8.RuneSelf {
			if r = fold(unicode.ToLower(r)); r < 0 {
				continue
			}
		}
		b = utf8.AppendRune(b, r)
	}
	*buf = b
	if len(b) == 0 { // dropped runes alone: no word
		return dst
	}
	return append(dst, string(b))
}

// phraseHits counts the instances of p in a column's tokens: the
// positions where its words follow one another, as FTS5's xInst counts
// them (overlapping ones included).
func phraseHits(toks []string, p bm25Phrase) int {
	n, last := 0, len(p.words)-1
	for i := 0; i+last < len(toks); i++ {
		j := 0
		for j <= last && tokenIs(toks[i+j], p.words[j], p.prefix && j == last) {
			j++
		}
		if j > last {
			n++
		}
	}
	return n
}

// tokenIs reports whether tok, its ASCII letters folded to lowercase as
// unicode61 folds them, is w (an ASCII word of lowercase letters and
// digits), or begins with it when prefix is set.
func tokenIs(tok, w string, prefix bool) bool {
	if len(tok) < len(w) || !prefix && len(tok) != len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := tok[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// sqliteVarint reads the SQLite varint at the start of b (big-endian,
// seven bits a byte while the high bit is set, the ninth byte whole), as
// FTS5 writes its records: the value and its length, 0 when b ends
// first.
func sqliteVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// sqliteLog is the natural logarithm as SQLite computes it (its ln, and
// the idf of bm25): the C library's log of the driver, which may differ
// from math.Log in the last bit. The same bits keep the scores computed
// here equal to the SQL scores, so that ties and order agree.
func sqliteLog(x float64) float64 { return libc.Xlog(nil, x) }
