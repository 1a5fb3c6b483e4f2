package db

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// texRegexps are texRules' expressions, matching leftmost-longest as
// PostgreSQL's regexp_replace does.
var texRegexps = func() []*regexp.Regexp {
	res := make([]*regexp.Regexp, len(texRules))
	for i, r := range texRules {
		res[i] = regexp.MustCompile(r.pattern)
		res[i].Longest()
	}
	return res
}()

// texFoldEveryRule is texRules applied by their expressions, in order,
// to every text: what texFold's scanners must equal.
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
	// Edges of the scanners: a match that ends on a backslash, nested
	// braces, spaces after the letter, commands cut short by the end,
	// invalid UTF-8 and a rune after a command.
	`\emph\emph{x}`, `{{\'o}}`, `\t{oo}`, `\"o bar`, `\v`, `\"`, `{\`, `\aa`, `\o{x}`, `\url`, `\v \ {\i  }} x`,
	"\\emph\xff", "\\left\u00e9", `\ss\o`, `{\ss{}`, `\AA\aa}`, "\\v\t{\n\\I\r}",
}

// TestTexFoldScansAsTheRulesMatch folds every title and abstract of the
// Kaggle fixture and the samples both ways.
func TestTexFoldScansAsTheRulesMatch(t *testing.T) {
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

// indexFold joins the words of searchText in one pass of its own.
func FuzzIndexFold(f *testing.F) {
	for _, s := range append(texSamples, "Ångström É\u0301cole x²y", "a\u0301b-c\xffd", "  \\\"o  ÀB  ") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := joinedWords(texFold(s)), strings.Join(searchText(s), " "); got != want {
			t.Errorf("joinedWords(texFold(%q)) = %q, want %q", s, got, want)
		}
	})
}
