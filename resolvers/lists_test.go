package resolvers_test

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/resolvers"
)

// institutionsQuery lists the institutions of a paper's authors with their
// papers and researchers.
const institutionsQuery = `query($paper: String!) { paper(id: $paper) { authors { institutions {
	name
	papers(first: 3) { totalCount nodes { arxivId abstract authors { name } } }
	researchers(first: 3) { totalCount edges { paperCount node { name } } }
} } } }`

// institutionsStatements is what institutionsQuery costs, however many
// authors and institutions:
//
//  1. papers by arXiv id (the paper itself)
//  2. authorships of the paper
//  3. affiliations of the paper, with their institutions
//  4. papers of those institutions: one page each (window query), which
//     counts each institution's papers too
//  5. authorships of the papers of the pages of step 4
//  6. papers by id: the abstracts of those papers, which pages leave out
//  7. researchers of those institutions: one page each (window query)
//  8. researchers of those institutions: totals (GROUP BY)
const institutionsStatements = 8

func TestInstitutionLists(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		paper := busiestPaper(t, bdb)
		affiliateAuthors(t, bdb, paper)
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		c := newClient(bdb)
		var resp struct {
			Paper struct {
				Authors []struct {
					Institutions []struct {
						Name   string
						Papers struct {
							TotalCount int
							Nodes      []struct {
								ArxivID  string
								Abstract *string
								Authors  []struct{ Name string }
							}
						}
						Researchers struct {
							TotalCount int
							Edges      []struct {
								PaperCount int
								Node       struct{ Name string }
							}
						}
					}
				}
			}
		}
		before := counter.Count()
		c.MustPost(institutionsQuery, &resp, client.Var("paper", paper))
		if got := counter.Count() - before; got != institutionsStatements {
			t.Errorf("%d statements, want %d", got, institutionsStatements)
		}
		seen := 0
		for _, a := range resp.Paper.Authors {
			for _, in := range a.Institutions {
				seen++
				id := scalar[int64](t, bdb, "SELECT id FROM institutions WHERE name = ? ORDER BY id LIMIT 1", in.Name)
				for _, n := range in.Papers.Nodes {
					if want := scalar[string](t, bdb, "SELECT COALESCE(abstract, '') FROM papers WHERE arxiv_id = ?", n.ArxivID); n.Abstract == nil && want != "" || n.Abstract != nil && *n.Abstract != want {
						t.Errorf("%s: abstract %v, want %q", n.ArxivID, n.Abstract, want)
					}
				}
				if want := scalar[int](t, bdb, "SELECT COUNT(DISTINCT paper_id) FROM affiliations WHERE institution_id = ?", id); in.Papers.TotalCount != want || len(in.Papers.Nodes) != min(3, want) {
					t.Errorf("%s: papers total %d, %d nodes; want %d", in.Name, in.Papers.TotalCount, len(in.Papers.Nodes), want)
				}
				want := scalar[int](t, bdb, `SELECT COUNT(DISTINCT a.researcher_id) FROM affiliations af
					JOIN authorships a ON a.paper_id = af.paper_id AND a.position = af.position
					WHERE af.institution_id = ? AND a.researcher_id IS NOT NULL`, id)
				if in.Researchers.TotalCount != want || len(in.Researchers.Edges) != min(3, want) {
					t.Errorf("%s: researchers total %d, %d edges; want %d", in.Name, in.Researchers.TotalCount, len(in.Researchers.Edges), want)
				}
				for i, e := range in.Researchers.Edges {
					if e.PaperCount < 1 || i > 0 && e.PaperCount > in.Researchers.Edges[i-1].PaperCount {
						t.Errorf("%s: researcher %d has paperCount %d, want at least 1 and at most the one before", in.Name, i, e.PaperCount)
					}
				}
			}
		}
		if seen == 0 {
			t.Fatalf("paper %s: no institutions; the test needs some", paper)
		}
	})
}

// affiliateAuthors gives the authors of paper, on all their papers, an
// affiliation with the institution of lowest id, and the first author one
// with the institution of highest id too: the fixtures' affiliations match
// no institution of the ROR fixture.
func affiliateAuthors(t *testing.T, bdb bun.IDB, paper string) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO affiliations (paper_id, position, seq, raw, institution_id)
		SELECT a.paper_id, a.position, 100, 'Fixture Institute', (SELECT MIN(id) FROM institutions) FROM authorships a
		WHERE a.researcher_id IN (SELECT b.researcher_id FROM authorships b JOIN papers p ON p.id = b.paper_id WHERE p.arxiv_id = ?)`,
		`INSERT INTO affiliations (paper_id, position, seq, raw, institution_id)
		SELECT a.paper_id, a.position, 101, 'Fixture College', (SELECT MAX(id) FROM institutions) FROM authorships a
		WHERE a.researcher_id IN (SELECT b.researcher_id FROM authorships b JOIN papers p ON p.id = b.paper_id WHERE p.arxiv_id = ? AND b.position = 1)`,
	} {
		if _, err := bdb.NewRaw(q, paper).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestForeignCursors checks that a cursor of one list is refused by
// another, naming the argument it came in.
func TestForeignCursors(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		affiliateAuthors(t, bdb, busiestPaper(t, bdb))
		c := newClient(bdb)
		rid := itoa(scalar[int64](t, bdb, `SELECT a.researcher_id FROM authorships a JOIN papers p ON p.id = a.paper_id
			WHERE p.arxiv_id = ? AND a.position = 1`, busiestPaper(t, bdb)))
		var resp struct {
			Researcher struct {
				Papers, Coauthors struct{ PageInfo struct{ EndCursor string } }
			}
		}
		c.MustPost(`query($id: String!) { researcher(id: $id) {
			papers(first: 1) { pageInfo { endCursor } } coauthors(first: 1) { pageInfo { endCursor } } } }`,
			&resp, client.Var("id", rid))
		paperCursor, coauthorCursor := resp.Researcher.Papers.PageInfo.EndCursor, resp.Researcher.Coauthors.PageInfo.EndCursor
		if paperCursor == "" || coauthorCursor == "" {
			t.Fatalf("cursors %q, %q; want both", paperCursor, coauthorCursor)
		}
		tests := []struct{ query, cursor, arg string }{
			{`query($id: String!, $c: String) { researcher(id: $id) { coauthors(after: $c) { totalCount } } }`, paperCursor, "after"},
			{`query($id: String!, $c: String) { researcher(id: $id) { coauthors(last: 2, before: $c) { totalCount } } }`, paperCursor, "before"},
			{`query($id: String!, $c: String) { researcher(id: $id) { papers(after: $c) { totalCount } } }`, coauthorCursor, "after"},
			{`query($id: String!, $c: String) { researcher(id: $id) { papers(last: 2, before: $c) { totalCount } } }`, coauthorCursor, "before"},
			{`query($id: String!, $c: String) { researcher(id: $id) { papers(after: $c, sort: MOST_CITED) { totalCount } } }`, paperCursor, "after"},
			{`query($id: String!, $c: String) { researcher(id: $id) { institutions { researchers(after: $c) { totalCount } } } }`, coauthorCursor, "after"},
		}
		for _, tt := range tests {
			_, errs := rawPost(t, c, tt.query, client.Var("id", rid), client.Var("c", tt.cursor))
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Message, tt.arg+": not a cursor of this list") || errs[0].Extensions.Code != "BAD_USER_INPUT" {
				t.Errorf("%s with %q: got %+v, want BAD_USER_INPUT naming %s", tt.query, tt.cursor, errs, tt.arg)
			}
		}
	})
}

// TestNonCanonicalCursors checks that a cursor spelt with stray bits in
// its last character, which a lenient base64 decoder reads as the cursor
// itself, is refused: a cursor has one spelling.
func TestNonCanonicalCursors(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		rid := itoa(scalar[int64](t, bdb, `SELECT a.researcher_id FROM authorships a JOIN papers p ON p.id = a.paper_id
			WHERE p.arxiv_id = ? AND a.position = 1`, busiestPaper(t, bdb)))
		var resp struct {
			Researcher struct {
				Papers, Cited, Coauthors struct{ PageInfo struct{ EndCursor string } }
			}
		}
		c.MustPost(`query($id: String!) { researcher(id: $id) { papers(first: 1) { pageInfo { endCursor } }
			cited: papers(first: 1, sort: MOST_CITED) { pageInfo { endCursor } } coauthors(first: 1) { pageInfo { endCursor } } } }`,
			&resp, client.Var("id", rid))
		lists := []struct{ query, cursor string }{
			{`query($id: String!, $c: String) { researcher(id: $id) { papers(after: $c) { totalCount } } }`, resp.Researcher.Papers.PageInfo.EndCursor},
			{`query($id: String!, $c: String) { researcher(id: $id) { papers(after: $c, sort: MOST_CITED) { totalCount } } }`, resp.Researcher.Cited.PageInfo.EndCursor},
			{`query($id: String!, $c: String) { researcher(id: $id) { coauthors(after: $c) { totalCount } } }`, resp.Researcher.Coauthors.PageInfo.EndCursor},
		}
		tried := 0
		for _, l := range lists {
			// The cursor itself is taken.
			if _, errs := rawPost(t, c, l.query, client.Var("id", rid), client.Var("c", l.cursor)); len(errs) > 0 {
				t.Fatalf("%s with its own cursor %q: %+v", l.query, l.cursor, errs)
			}
			bad, ok := strayBits(l.cursor)
			if !ok {
				continue
			}
			tried++
			_, errs := rawPost(t, c, l.query, client.Var("id", rid), client.Var("c", bad))
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Message, "after: not a cursor of this list") || errs[0].Extensions.Code != "BAD_USER_INPUT" {
				t.Errorf("%s with %q (%q with stray bits): got %+v, want BAD_USER_INPUT naming after", l.query, bad, l.cursor, errs)
			}
		}
		if tried == 0 {
			t.Fatalf("no cursor of %d has a last character with unused bits", len(lists))
		}
	})
}

// strayBits returns s, unpadded base64, with the lowest unused bit of its
// last character set, or false when its last character has none (a length
// that is a multiple of 4).
func strayBits(s string) (string, bool) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(s)%4 == 0 {
		return "", false
	}
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i|1]), true
}

// TestPartialPapersAnswerWhole checks that a paper read for a list page,
// without its long text (db.PaperPages), answers every field without
// arguments as the paper read whole does: the fields that show what pages
// leave out must each have a resolver that reads the whole row.
func TestPartialPapersAnswerWhole(t *testing.T) {
	var leaves []string
	schema := resolvers.NewSchema(nil).Schema()
	for _, f := range schema.Types["Paper"].Fields {
		kind := schema.Types[f.Type.Name()].Kind
		if len(f.Arguments) == 0 && (kind == ast.Scalar || kind == ast.Enum) {
			leaves = append(leaves, f.Name)
		}
	}
	if len(leaves) < 15 {
		t.Fatalf("only %d leaves of Paper: %v", len(leaves), leaves)
	}
	sel := strings.Join(leaves, " ")
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		paper := scalar[string](t, bdb, `SELECT p.arxiv_id FROM papers p JOIN authorships a ON a.paper_id = p.id
			WHERE p.arxiv_id IS NOT NULL AND p.abstract <> '' AND p.comments <> '' AND a.position = 1 AND a.researcher_id IS NOT NULL
			ORDER BY p.id LIMIT 1`)
		rid := scalar[int64](t, bdb, `SELECT a.researcher_id FROM authorships a JOIN papers p ON p.id = a.paper_id
			WHERE p.arxiv_id = ? AND a.position = 1`, paper)
		var resp struct {
			Paper      map[string]any
			Researcher struct {
				Papers struct{ Nodes []map[string]any }
			}
		}
		newClient(bdb).MustPost(`query($paper: String!, $rid: String!) { paper(id: $paper) { `+sel+` }
			researcher(id: $rid) { papers(first: 100) { nodes { `+sel+` } } } }`, &resp,
			client.Var("paper", paper), client.Var("rid", strconv.FormatInt(rid, 10)))
		if resp.Paper["abstract"] == nil {
			t.Fatalf("paper %s has no abstract: not a test of the long text", paper)
		}
		for _, n := range resp.Researcher.Papers.Nodes {
			if n["arxivId"] == paper {
				for _, f := range leaves {
					if !reflect.DeepEqual(n[f], resp.Paper[f]) {
						t.Errorf("%s: %v on a list page, %v read whole", f, n[f], resp.Paper[f])
					}
				}
				return
			}
		}
		t.Fatalf("%s is not among the papers of its first author", paper)
	})
}

// TestResearcherBylineNames: a researcher's byline names are the names
// their bylines print, the name on the most of their papers first.
func TestResearcherBylineNames(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		rid := scalar[int64](t, bdb, `SELECT researcher_id FROM authorships WHERE researcher_id IS NOT NULL
			GROUP BY researcher_id ORDER BY COUNT(*) DESC, researcher_id LIMIT 1`)
		if n := scalar[int64](t, bdb, `SELECT COUNT(*) FROM authorships WHERE researcher_id = ?`, rid); n < 6 {
			t.Fatalf("the most prolific researcher has %d bylines; want at least 6", n)
		}
		respell := func(name, which string) {
			if _, err := bdb.ExecContext(ctx, `UPDATE authorships SET name = ? WHERE researcher_id = ? AND paper_id IN (
				SELECT paper_id FROM authorships WHERE researcher_id = ? ORDER BY paper_id `+which+`)`, name, rid, rid); err != nil {
				t.Fatal(err)
			}
		}
		respell("Ada Main", "")
		respell("A. Main", "LIMIT 2")
		respell("Main, A.", "LIMIT 1 OFFSET 2")
		var resp struct {
			Researcher struct{ BylineNames []string }
		}
		newClient(bdb).MustPost(`query($id: String!) { researcher(id: $id) { bylineNames } }`, &resp, client.Var("id", itoa(rid)))
		if want := []string{"Ada Main", "A. Main", "Main, A."}; !reflect.DeepEqual(resp.Researcher.BylineNames, want) {
			t.Errorf("bylineNames = %q, want %q", resp.Researcher.BylineNames, want)
		}
	})
}
