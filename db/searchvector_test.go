package db_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestSearchVectorsDecline: text that is not all ASCII, or comes near
// PostgreSQL's limits on a lexeme's length, positions and repeats, is left
// to the trigger; a known text gets the document spelled out.
func TestSearchVectorsDecline(t *testing.T) {
	doc, title, ok := db.SearchVectors("The 1e5abc X-ray", "x, 3.14: the")
	if !ok {
		t.Fatalf("SearchVectors = %q, %q, %v: want it built", doc, title, ok)
	}
	if want := "14:8B 1e5:2A 3:7B abc:3A the:1A,9B x:4A,6B ray:5A"; !sameLexemes(doc, want) {
		t.Errorf("document %q, want the lexemes of %q", doc, want)
	}
	if want := "1e5:2A abc:3A the:1A x:4A ray:5A"; !sameLexemes(title, want) {
		t.Errorf("title document %q, want the lexemes of %q", title, want)
	}
	for name, text := range map[string][2]string{
		"non-ASCII title":    {"Schrödinger", ""},
		"non-ASCII abstract": {"A", "naïve"},
		"long word":          {strings.Repeat("a", 201), ""},
		"many words":         {"", strings.Repeat("a b ", 5001)},
		"repeated word":      {"", strings.Repeat("the ", 201)},
		"long document":      {"", longDocument},
	} {
		if _, _, ok := db.SearchVectors(text[0], text[1]); ok {
			t.Errorf("%s: built, want it left to the trigger", name)
		}
	}
	if _, _, ok := db.SearchVectors("", strings.Repeat("the ", 200)); !ok {
		t.Errorf("200 repeats: left to the trigger, want it built")
	}
}

// longDocument is 1,400 different words of 199 letters and digits, over
// vectorMaxBytes.
var longDocument = func() string {
	var b strings.Builder
	for i := range 1400 {
		fmt.Fprintf(&b, "w%0198d ", i)
	}
	return b.String()
}()

// sameLexemes reports whether two tsvector texts hold the same lexemes
// with the same positions, in any order.
func sameLexemes(a, b string) bool {
	as, bs := strings.Fields(a), strings.Fields(b)
	if len(as) != len(bs) {
		return false
	}
	set := map[string]bool{}
	for _, l := range as {
		set[l] = true
	}
	for _, l := range bs {
		if !set[l] {
			return false
		}
	}
	return true
}

// TestSearchVectorsMatchPostgres: for the fixtures' real titles and
// abstracts and thousands of random texts made of what the rules turn on
// (digits, "e", letters of both cases, separators), the documents
// SearchVectors builds are those PostgreSQL's papers_search_vector and
// ts_filter build; papers inserted by InsertPapers hold what the trigger
// would have built, the non-ASCII ones too, and an UPDATE of a title
// rebuilds them.
func TestSearchVectorsMatchPostgres(t *testing.T) {
	texts := fixtureTexts(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0015eeEaxZ .-_/:'\n+"
	for range 5000 {
		var b [2]strings.Builder
		for k := range b {
			for range rng.IntN(40) {
				b[k].WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
		}
		texts = append(texts, [2]string{b[0].String(), b[1].String()})
	}
	texts = append(texts, [2]string{"", ""}, [2]string{"", strings.Repeat("the ", 200)},
		[2]string{strings.Repeat("ab ", 100), strings.Repeat("ab ", 100)})
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		if !db.IsPostgres(bdb) {
			t.Skip("the search documents are PostgreSQL's; SQLite's index is FTS5's")
		}
		ctx := context.Background()
		var title, abstract, doc, titleDoc []string
		for _, x := range texts {
			d, td, ok := db.SearchVectors(x[0], x[1])
			if !ok {
				continue
			}
			title, abstract, doc, titleDoc = append(title, x[0]), append(abstract, x[1]), append(doc, d), append(titleDoc, td)
		}
		if len(doc) < 5000 {
			t.Fatalf("%d texts built of %d, want every random one", len(doc), len(texts))
		}
		var differ []struct {
			Title, Abstract, Doc, Want string
		}
		err := bdb.NewRaw(`SELECT t AS title, a AS abstract, d AS doc, v::text AS want
			FROM unnest(?::text[], ?::text[], ?::text[], ?::text[]) AS u(t, a, d, td),
				LATERAL (SELECT papers_search_vector(t, a) AS v) s
			WHERE v IS DISTINCT FROM d::tsvector OR ts_filter(v, '{a}') IS DISTINCT FROM td::tsvector
			LIMIT 5`, pgdialect.Array(title), pgdialect.Array(abstract), pgdialect.Array(doc), pgdialect.Array(titleDoc)).Scan(ctx, &differ)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range differ {
			t.Errorf("title %q, abstract %q: built %q, PostgreSQL builds %q", d.Title, d.Abstract, d.Doc, d.Want)
		}

		agree := false
		if err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var err error
			agree, err = db.SearchVectorsAgree(ctx, tx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !agree {
			t.Fatal("the database does not build the probe's documents as SearchVectors does: InsertPapers sends none")
		}

		rows := []*db.Paper{
			{ArxivID: "2401.00001", Title: "The 1e5abc X-ray", Abstract: "x, 3.14: the"},
			{ArxivID: "2401.00002", Title: "Schrödinger's naïve cat", Abstract: "Ångström-scale"},
			{ArxivID: "2401.00003", Title: "No abstract"},
		}
		if err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := db.InsertPapers(ctx, tx, rows)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := bdb.ExecContext(ctx, `UPDATE papers SET title = 'A new title' WHERE arxiv_id = '2401.00003'`); err != nil {
			t.Fatal(err)
		}
		// What comes with a row is kept: the trigger builds only what
		// does not.
		var kept string
		if err := bdb.NewRaw(`INSERT INTO papers (arxiv_id, title, search_doc, title_doc)
			VALUES ('2401.00009', 'Sent', 'sent'::tsvector, 'sent'::tsvector) RETURNING search_doc::text || title_doc::text`).Scan(ctx, &kept); err != nil {
			t.Fatal(err)
		}
		if kept != "'sent''sent'" {
			t.Errorf("a row sent with its documents holds %s, want those sent", kept)
		}
		if _, err := bdb.ExecContext(ctx, `DELETE FROM papers WHERE arxiv_id = '2401.00009'`); err != nil {
			t.Fatal(err)
		}
		var wrong []string
		if err := bdb.NewRaw(`SELECT arxiv_id FROM papers
			WHERE search_doc IS DISTINCT FROM papers_search_vector(title, abstract)
				OR title_doc IS DISTINCT FROM ts_filter(papers_search_vector(title, abstract), '{a}')
				OR search_doc IS NULL OR title_doc IS NULL`).Scan(ctx, &wrong); err != nil {
			t.Fatal(err)
		}
		if len(wrong) > 0 {
			t.Errorf("papers %q hold search documents other than the trigger's", wrong)
		}
		var n int
		if err := bdb.NewRaw(`SELECT count(*) FROM papers WHERE search_doc @@ 'new & title'::tsquery AND title_doc @@ 'title'::tsquery`).Scan(ctx, &n); err != nil || n != 1 {
			t.Errorf("papers matching the updated title: %d (%v), want 1", n, err)
		}
	})
}

// fixtureTexts returns the titles and abstracts of the Kaggle fixture.
func fixtureTexts(t *testing.T) [][2]string {
	f, err := os.Open("../ingest/testdata/kaggle.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct{ Title, Abstract string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]string{r.Title, r.Abstract})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no fixture papers")
	}
	return out
}
