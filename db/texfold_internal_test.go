package db

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// texFoldEveryRule is texFold running every rule's expression on every
// text with a backslash, without mayMatch: what texFold must equal.
func texFoldEveryRule(s string) string {
	for i, re := range texRegexps {
		s = re.ReplaceAllString(s, texRules[i].replacement)
	}
	return s
}

// texSamples are markup spellings each rule folds, and near misses.
var texSamples = []string{
	`Kucha\v{r} and Isham`, `Kucha\v r`, `G{\"o}del`, `Erd\H{o}s--R\'enyi`, `na\"{\i}ve na\"\i ve`,
	`{\o}rsted \O{} Stra\ss e`, `\AA ngstr\"om`, `\aa{}`, `Pe\~na \c{C}elik \L{}ukasiewicz`,
	`\emph{duality} in \textbf{\"Ubersicht}`, `$\sigma$-model $\mathcal{N}=2$ \left( x \right)`,
	`\bar x \int \over \alpha'`, `\\`, `x\`, `\\emph{a}`, `\Bigg(\big]`, `\Big(`, `\operatorname{tr}`, `\ae\oe\AE\OE`,
}

// TestTexFoldSkipsOnlyRulesThatCannotMatch folds every title and abstract
// of the Kaggle fixture and the samples both ways.
func TestTexFoldSkipsOnlyRulesThatCannotMatch(t *testing.T) {
	texts := append([]string{}, texSamples...)
	f, err := os.Open("../ingest/testdata/kaggle.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var p struct{ Title, Abstract string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, p.Title, p.Abstract)
	}
	for _, s := range texts {
		if got, want := texFold(s), texFoldEveryRule(s); got != want {
			t.Errorf("texFold(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzTexFold(f *testing.F) {
	for _, s := range texSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := texFold(s), texFoldEveryRule(s); got != want {
			t.Errorf("texFold(%q) = %q, want %q", s, got, want)
		}
	})
}
