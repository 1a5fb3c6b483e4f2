package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph/model"
)

// Selections below the roots of TestRootAliasesBatch, and what each costs
// per level.
const (
	// paperBelow: authorships of the papers joined with their
	// researchers; one page of papers per researcher (window query), which
	// counts those lists too.
	paperBelow = `title authors { position researcher { name papers(first: 2) { totalCount nodes { title } } } }`
	// researcherBelow: researcher_categories (fields); one page of
	// co-authors per researcher, joined with researchers, which counts
	// those lists too.
	researcherBelow = `name fields { count } coauthors(first: 3) { totalCount nodes { researcher { name } } }`
	// institutionBelow: institution_names (aliases); one page of papers
	// per institution, which counts those lists too.
	institutionBelow = `name aliases papers(first: 2) { totalCount nodes { title } }`
	// nodeBelow: authorships of papers, researcher_categories of
	// researchers, institution_names of institutions, each only when the
	// roots found objects of the kind.
	nodeBelow = `id ... on Paper { title authors { position } } ... on Researcher { name fields { count } } ... on Institution { name aliases }`
)

// TestRootAliasesBatch checks that 50 aliases of a root lookup cost the
// statements of one: the roots' references are read together, one
// statement per kind of reference, and so is every level below them.
// Each alias names a different object (or an unknown one), and each
// alias's answer is the one the root gives alone.
func TestRootAliasesBatch(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		counter := &db.StatementCounter{}
		bdb.AddQueryHook(counter)
		c := newClient(bdb)
		// refs are the 50 references of a case: those the query finds,
		// then unknown ones made by unknown(i).
		refs := func(query string, unknown func(i int) string) []string {
			var known []string
			if err := bdb.NewRaw(query+" LIMIT 50").Scan(t.Context(), &known); err != nil {
				t.Fatal(err)
			}
			for i := len(known); i < 50; i++ {
				known = append(known, unknown(i))
			}
			return known
		}
		globalIDs := func(kind, table string) []string {
			var ids []int64
			if err := bdb.NewRaw("SELECT id FROM "+table+" ORDER BY id LIMIT 50").Scan(t.Context(), &ids); err != nil {
				t.Fatal(err)
			}
			out := make([]string, 50)
			for i := range out {
				id := int64(1_000_000 + i)
				if i < len(ids) {
					id = ids[i]
				}
				out[i] = model.GlobalID(kind, id)
			}
			return out
		}
		arxivIDs := refs("SELECT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id", nil)
		dois := refs("SELECT doi FROM papers WHERE doi IS NOT NULL ORDER BY id", func(i int) string { return fmt.Sprintf("10.9999/unknown.%d", i) })
		paperNodes, researcherNodes, institutionNodes := globalIDs(model.KindPaper, "papers"), globalIDs(model.KindResearcher, "researchers"), globalIDs(model.KindInstitution, "institutions")
		mixedNodes := make([]string, 50)
		for i := range mixedNodes {
			mixedNodes[i] = fmt.Sprintf("[%q, %q, %q]", paperNodes[i], researcherNodes[i], institutionNodes[i])
		}
		mixedPapers := make([]string, 50)
		for i := range mixedPapers {
			mixedPapers[i] = fmt.Sprintf("[%q, %q]", arxivIDs[i], dois[i])
		}
		tests := []struct {
			name, root string
			args       []string // each already a GraphQL value
			below      string
			want       int
		}{
			// papers by arXiv id or DOI, then paperBelow.
			{"paper by arXiv id", "paper(id: %s)", quoted(arxivIDs), paperBelow, 3},
			{"paper by DOI", "paper(id: %s)", quoted(dois), paperBelow, 3},
			// papers by arXiv id and DOI in one statement, then paperBelow.
			{"papers by arXiv id and DOI", "papers(ids: %s)", mixedPapers, paperBelow, 3},
			// researchers by id, then researcherBelow.
			{"researcher by id", "researcher(id: %s)", quoted(refs("SELECT CAST(id AS TEXT) FROM researchers ORDER BY id", nil)), researcherBelow, 3},
			// researchers by ORCID, then researcherBelow.
			{"researcher by ORCID", "researcher(id: %s)", quoted(refs("SELECT orcid FROM researchers WHERE orcid IS NOT NULL ORDER BY id",
				func(i int) string { return fmt.Sprintf("0000-0000-0000-%04d", i) })), researcherBelow, 3},
			// researchers by OpenAlex id, then researcherBelow.
			{"researcher by OpenAlex id", "researcher(id: %s)", quoted(refs("SELECT openalex_id FROM researchers WHERE openalex_id IS NOT NULL ORDER BY id",
				func(i int) string { return fmt.Sprintf("A%d", 9_000_000+i) })), researcherBelow, 3},
			// institutions by id, then institutionBelow.
			{"institution by id", "institution(id: %s)", quoted(refs("SELECT CAST(id AS TEXT) FROM institutions ORDER BY id",
				func(i int) string { return strconv.Itoa(1_000_000 + i) })), institutionBelow, 3},
			// institutions by ROR id or name (one statement for both), then
			// institutionBelow.
			{"institution by ROR id", "institution(id: %s)", quoted(refs("SELECT ror_id FROM institutions WHERE ror_id IS NOT NULL ORDER BY id",
				func(i int) string { return fmt.Sprintf("0abcdef%02d", i) })), institutionBelow, 3},
			{"institution by name", "institution(id: %s)", quoted(refs("SELECT name FROM institutions ORDER BY id",
				func(i int) string { return fmt.Sprintf("No Such Institute %d", i) })), institutionBelow, 3},
			// categories by code; nothing below reads.
			{"category", "category(code: %s)", quoted(refs("SELECT code FROM categories ORDER BY code",
				func(i int) string { return fmt.Sprintf("xx.%d", i) })), `code name group`, 1},
			// papers by id, then authorships.
			{"node of papers", "node(id: %s)", quoted(paperNodes), nodeBelow, 2},
			// researchers by id, then researcher_categories.
			{"node of researchers", "node(id: %s)", quoted(researcherNodes), nodeBelow, 2},
			// institutions by id, then institution_names.
			{"node of institutions", "node(id: %s)", quoted(institutionNodes), nodeBelow, 2},
			// papers, researchers and institutions by id, then the three
			// relations of nodeBelow.
			{"nodes of every kind", "nodes(ids: %s)", mixedNodes, nodeBelow, 6},
		}
		// run sends the aliases a0, a1, … of the root over args and
		// returns their answers and the statements they cost.
		run := func(root, below string, args []string) (map[string]json.RawMessage, int) {
			var q strings.Builder
			q.WriteString("{")
			for i, arg := range args {
				fmt.Fprintf(&q, " a%d: "+root+" { %s }", i, arg, below)
			}
			q.WriteString(" }")
			before := counter.Count()
			data, errs := rawPost(t, c, q.String())
			n := int(counter.Count() - before)
			var answers map[string]json.RawMessage
			if err := json.Unmarshal([]byte(data), &answers); errs != nil || err != nil {
				t.Fatalf("%s: errors %+v, %v", q.String(), errs, err)
			}
			return answers, n
		}
		for _, tt := range tests {
			if _, got := run(tt.root, tt.below, tt.args[:1]); got != tt.want {
				t.Errorf("%s, 1 alias: %d statements, want %d", tt.name, got, tt.want)
			}
			answers, got := run(tt.root, tt.below, tt.args)
			if got != tt.want {
				t.Errorf("%s, %d aliases: %d statements, want %d", tt.name, len(tt.args), got, tt.want)
			}
			for i, arg := range tt.args {
				alone, _ := run(tt.root, tt.below, []string{arg})
				if a, want := string(answers["a"+strconv.Itoa(i)]), string(alone["a0"]); a != want {
					t.Errorf("%s: alias %d of %d gives %s, alone %s", tt.name, i, len(tt.args), a, want)
				}
			}
		}
	})
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// queryRecorder is a query hook that keeps the text of every statement,
// followed by the parameters it binds (db.Bound).
type queryRecorder struct{ queries []string }

func (q *queryRecorder) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	q.queries = append(q.queries, fmt.Sprintf("%s -- %v", e.Query, db.Bound(ctx)))
	return ctx
}

func (q *queryRecorder) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestRootSelectionsApart checks that one root's deep selection is read
// below its own objects only: beside papers(ids:) naming 40 papers with
// nothing below them, a paper's references are read for that paper alone,
// not for the 40 (which would let a cheap root multiply a deep one's work
// past what the cost calculator priced).
func TestRootSelectionsApart(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewSeeded(t, "sqlite", fixtures))
	var ids []int64
	if err := bdb.NewRaw("SELECT id FROM papers ORDER BY id DESC LIMIT 41").Scan(t.Context(), &ids); err != nil {
		t.Fatal(err)
	}
	var many []string
	for _, id := range ids[1:] {
		many = append(many, strconv.Quote(model.GlobalID(model.KindPaper, id)))
	}
	rec := &queryRecorder{}
	c := newClient(bdb.WithQueryHook(rec))
	query := fmt.Sprintf(`{ nodes(ids: [%s]) { id } one: node(id: %q) { ... on Paper { references(first: 5) { nodes { title } } } } }`,
		strings.Join(many, ", "), model.GlobalID(model.KindPaper, ids[0]))
	if _, errs := rawPost(t, c, query); len(errs) > 0 {
		t.Fatal(errs)
	}
	read := false
	for _, q := range rec.queries {
		if !strings.Contains(q, "paper_references") {
			continue
		}
		read = read || regexp.MustCompile(`\b`+strconv.FormatInt(ids[0], 10)+`\b`).MatchString(q)
		for _, id := range ids[1:] {
			if regexp.MustCompile(`\b` + strconv.FormatInt(id, 10) + `\b`).MatchString(q) {
				t.Fatalf("a references statement names paper %d of the other root: %.300s", id, q)
			}
		}
	}
	if !read {
		t.Error("no references statement named the paper that asked for them")
	}
}
