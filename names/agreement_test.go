package names

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// kaggleRecord is the part of a Kaggle arXiv metadata record the agreement
// test reads.
type kaggleRecord struct {
	ID            string     `json:"id"`
	Authors       string     `json:"authors"`
	AuthorsParsed [][]string `json:"authors_parsed"`
}

// TestAuthorsParsedAgreement compares ParseByline and Split with arXiv's own
// authors_parsed on the Kaggle sample. It guards against regressions: the
// floors sit a little under the agreement measured when it was written.
func TestAuthorsParsedAgreement(t *testing.T) {
	const authorFloor, paperFloor = 0.99, 0.97
	f, err := os.Open("testdata/arxiv-metadata-oai-snapshot.first200.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var authors, agreeing, papers, exact int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r kaggleRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		got, _ := ParseByline(r.Authors)
		papers++
		same := len(got) == len(r.AuthorsParsed)
		for i, want := range r.AuthorsParsed {
			authors++
			if i >= len(got) {
				continue
			}
			given, family := Split(got[i].Name)
			if key(family) == key(want[0]) && key(given) == key(want[1]) {
				agreeing++
				continue
			}
			same = false
			t.Logf("%s author %d: Split(%q) = %q, %q; authors_parsed has %q, %q", r.ID, i, got[i].Name, given, family, want[1], want[0])
		}
		if same {
			exact++
		} else if len(got) != len(r.AuthorsParsed) {
			t.Logf("%s: ParseByline(%q) gave %d authors, authors_parsed has %d", r.ID, r.Authors, len(got), len(r.AuthorsParsed))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	authorRate, paperRate := float64(agreeing)/float64(authors), float64(exact)/float64(papers)
	t.Logf("authors_parsed agreement: %d/%d authors (%.1f%%), %d/%d papers exact", agreeing, authors, 100*authorRate, exact, papers)
	if authorRate < authorFloor || paperRate < paperFloor {
		t.Errorf("agreement %.3f of authors, %.3f of papers; want at least %.2f and %.2f", authorRate, paperRate, authorFloor, paperFloor)
	}
}

// key folds a name part for comparison.
func key(s string) string {
	return strings.Join(Words(s), " ")
}
