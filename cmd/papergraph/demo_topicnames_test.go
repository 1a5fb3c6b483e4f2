package main_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/uptrace/bun"
)

// checkTopicNames holds the names of the demo set's topics, which bdb
// holds built, to words a reader knows: every word of a name is a whole
// word (a run of letters and digits, capitals aside) of the title or
// abstract of one of the topic's papers, so no name shows a stem ("higg"
// for "Higgs") or a word cut short.
func checkTopicNames(t *testing.T, bdb *bun.DB) {
	ctx := t.Context()
	var texts []struct {
		TopicID  int64  `bun:"topic_id"`
		Title    string `bun:"title"`
		Abstract string `bun:"abstract"`
	}
	if err := bdb.NewSelect().TableExpr("paper_topics AS pt").Join("JOIN papers AS p ON p.id = pt.paper_id").
		ColumnExpr("pt.topic_id, p.title, COALESCE(p.abstract, '') AS abstract").Scan(ctx, &texts); err != nil {
		t.Fatal(err)
	}
	words := map[int64]map[string]bool{}
	for _, x := range texts {
		if words[x.TopicID] == nil {
			words[x.TopicID] = map[string]bool{}
		}
		for _, w := range textWords(x.Title + " " + x.Abstract) {
			words[x.TopicID][w] = true
		}
	}
	var names []struct {
		ID   int64  `bun:"id"`
		Name string `bun:"name"`
	}
	if err := bdb.NewSelect().TableExpr("topics").Column("id", "name").Scan(ctx, &names); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("the demo set has no topics")
	}
	for _, n := range names {
		if n.Name == "miscellaneous" {
			continue
		}
		for _, w := range textWords(n.Name) {
			if !words[n.ID][w] {
				t.Errorf("topic %d %q: %q is no word of its papers", n.ID, n.Name, w)
			}
		}
	}
}

// textWords is the runs of letters and digits of s, lower-cased.
func textWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
