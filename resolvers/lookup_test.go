package resolvers_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/resolvers"
)

// gqlError is an error of a response as the client sees it.
type gqlError struct {
	Message    string
	Extensions struct {
		Code      string
		RequestID string
	}
}

// rawPost sends query and returns its data (as JSON) and errors.
func rawPost(t *testing.T, c *client.Client, query string, opts ...client.Option) (string, []gqlError) {
	t.Helper()
	resp, err := c.RawPost(query, opts...)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(resp.Data)
	var errs []gqlError
	if resp.Errors != nil {
		if err := json.Unmarshal(resp.Errors, &errs); err != nil {
			t.Fatal(err)
		}
	}
	return string(data), errs
}

func TestLookups(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		researcherID := scalar[int64](t, bdb, "SELECT id FROM researchers WHERE openalex_id = 'A5023888391'")
		orcid := scalar[string](t, bdb, "SELECT orcid FROM researchers WHERE id = ?", researcherID)
		s2 := scalar[string](t, bdb, "SELECT s2_id FROM researchers WHERE s2_id IS NOT NULL ORDER BY id LIMIT 1")
		s2Researcher := scalar[int64](t, bdb, "SELECT id FROM researchers WHERE s2_id = ?", s2)
		slug := scalar[string](t, bdb, "SELECT slug FROM researchers WHERE id = ?", researcherID)
		rorID := scalar[string](t, bdb, "SELECT ror_id FROM institutions ORDER BY id LIMIT 1")
		instName := scalar[string](t, bdb, "SELECT name FROM institutions WHERE ror_id = ?", rorID)
		paperID := scalar[int64](t, bdb, "SELECT id FROM papers WHERE arxiv_id = '0704.0001'")
		instID := scalar[int64](t, bdb, "SELECT id FROM institutions WHERE ror_id = ?", rorID)
		tests := []struct {
			query, arg, want string
		}{
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "0704.0001", `{"paper":{"arxivId":"0704.0001"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "0704.0001v2", `{"paper":{"arxivId":"0704.0001"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "arXiv:0704.0001", `{"paper":{"arxivId":"0704.0001"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "https://arxiv.org/abs/0704.0001v1", `{"paper":{"arxivId":"0704.0001"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "https://arxiv.org/pdf/0704.0001.pdf", `{"paper":{"arxivId":"0704.0001"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "0704.0001-calculation-of-prompt-diphoton", `{"paper":{"arxivId":"0704.0001"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "10.1103/PhysRevD.76.013009", `{"paper":{"arxivId":"0704.0001"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "https://doi.org/10.1103/physrevd.76.013009", `{"paper":{"arxivId":"0704.0001"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "hep-th/9301002", `{"paper":{"arxivId":"hep-th/9301002"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "arXiv:hep-th/9301002v3", `{"paper":{"arxivId":"hep-th/9301002"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "2401.01234", `{"paper":null}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, model.GlobalID(model.KindPaper, paperID), `{"paper":{"arxivId":"0704.0001"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, model.GlobalID(model.KindPaper, 1<<40), `{"paper":null}`},
			{`query($id: String!) { researcher(id: $id) { researcherId } }`, model.GlobalID(model.KindResearcher, researcherID), `{"researcher":{"researcherId":` + itoa(researcherID) + `}}`},
			{`query($id: String!) { institution(id: $id) { rorId } }`, model.GlobalID(model.KindInstitution, instID), `{"institution":{"rorId":"` + rorID + `"}}`},
			{`query($id: String!) { paper(id: $id) { arxivId } }`, "10.9999/unknown", `{"paper":null}`},
			{`query($id: String!) { researcher(id: $id) { researcherId } }`, itoa(researcherID), `{"researcher":{"researcherId":` + itoa(researcherID) + `}}`},
			{`query($id: String!) { researcher(id: $id) { researcherId } }`, itoa(researcherID) + "-" + slug, `{"researcher":{"researcherId":` + itoa(researcherID) + `}}`},
			{`query($id: String!) { researcher(id: $id) { researcherId } }`, orcid, `{"researcher":{"researcherId":` + itoa(researcherID) + `}}`},
			{`query($id: String!) { researcher(id: $id) { researcherId } }`, "https://orcid.org/" + orcid, `{"researcher":{"researcherId":` + itoa(researcherID) + `}}`},
			{`query($id: String!) { researcher(id: $id) { researcherId } }`, "A5023888391", `{"researcher":{"researcherId":` + itoa(researcherID) + `}}`},
			{`query($id: String!) { researcher(id: $id) { researcherId } }`, "https://openalex.org/A5023888391", `{"researcher":{"researcherId":` + itoa(researcherID) + `}}`},
			{`query($id: String!) { researcher(id: $id) { researcherId } }`, "s2:" + s2, `{"researcher":{"researcherId":` + itoa(s2Researcher) + `}}`},
			{`query($id: String!) { researcher(id: $id) { researcherId } }`, "999999999", `{"researcher":null}`},
			{`query($id: String!) { researcher(id: $id) { researcherId } }`, "A1", `{"researcher":null}`},
			{`query($id: String!) { institution(id: $id) { rorId } }`, rorID, `{"institution":{"rorId":"` + rorID + `"}}`},
			{`query($id: String!) { institution(id: $id) { rorId } }`, "https://ror.org/" + rorID, `{"institution":{"rorId":"` + rorID + `"}}`},
			{`query($id: String!) { institution(id: $id) { rorId } }`, strings.ToUpper(instName), `{"institution":{"rorId":"` + rorID + `"}}`},
			{`query($id: String!) { institution(id: $id) { rorId } }`, "No Such Institute", `{"institution":null}`},
			{`query($id: String!) { category(code: $id) { code name group } }`, "hep-th", `{"category":{"code":"hep-th","group":"Physics","name":"High Energy Physics - Theory"}}`},
			{`query($id: String!) { category(code: $id) { code } }`, "xx.YY", `{"category":null}`},
		}
		for _, tt := range tests {
			got, errs := rawPost(t, c, tt.query, client.Var("id", tt.arg))
			if got != tt.want || errs != nil {
				t.Errorf("%s with %q: got %s %v, want %s", tt.query, tt.arg, got, errs, tt.want)
			}
		}
	})
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestNodesAndBatches(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		var resp struct {
			Papers []*struct{ ID, ArxivID string }
		}
		c.MustPost(`{ papers(ids: ["hep-th/9301002", "2401.01234", "0704.0002", "0704.0001"]) { id arxivId } }`, &resp)
		if len(resp.Papers) != 4 || resp.Papers[0].ArxivID != "hep-th/9301002" || resp.Papers[1] != nil || resp.Papers[2].ArxivID != "0704.0002" || resp.Papers[3].ArxivID != "0704.0001" {
			t.Fatalf("papers = %+v", resp.Papers)
		}
		var nodes struct {
			Nodes []*struct {
				ID      string
				ArxivID *string
				Name    *string
			}
		}
		ids := []string{resp.Papers[3].ID, "UGFwZXI6OTk5OTk5", resp.Papers[0].ID}
		c.MustPost(`query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Paper { arxivId } ... on Researcher { name } } }`, &nodes, client.Var("ids", ids))
		if len(nodes.Nodes) != 3 || nodes.Nodes[0].ID != ids[0] || *nodes.Nodes[0].ArxivID != "0704.0001" || nodes.Nodes[1] != nil || *nodes.Nodes[2].ArxivID != "hep-th/9301002" {
			t.Errorf("nodes = %+v", nodes.Nodes)
		}
	})
}

func TestBadInput(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		tests := []struct{ query, message string }{
			{`{ paper(id: "xyz") { arxivId } }`, `id: not an arXiv id, DOI or paper global id: "xyz"`},
			{`{ papers(ids: ["0704.0001", "nope"]) { arxivId } }`, `ids: not an arXiv id, DOI or paper global id: "nope"`},
			{`{ researcher(id: "someone") { name } }`, `id: not a researcher id`},
			{`{ node(id: "bm90IGFuIGlk") { id } }`, `id: not a global id`},
			{`{ researcher(id: "10") { papers(first: 101) { totalCount } } }`, `first: must be between 0 and 100, got 101`},
			{`{ researcher(id: "10") { coauthors(last: 500) { totalCount } } }`, `last: must be between 0 and 100, got 500`},
			{`{ researcher(id: "10") { papers(after: "garbage") { totalCount } } }`, `after: not a cursor of this list`},
			{`{ paper(id: "hep-th/9301002") { citations(first: 1000) { totalCount } } }`, `first: must be between 0 and 100, got 1000`},
		}
		for _, tt := range tests {
			_, errs := rawPost(t, c, tt.query)
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Message, tt.message) || errs[0].Extensions.Code != "BAD_USER_INPUT" {
				t.Errorf("%s: got %+v, want one BAD_USER_INPUT %q", tt.query, errs, tt.message)
			}
		}
	})
}

func TestInternalErrorsHideDetails(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	c := newClient(bdb)
	if _, err := bdb.Exec("DROP TABLE researcher_categories"); err != nil {
		t.Fatal(err)
	}
	_, errs := rawPost(t, c, `{ researcher(id: "1") { name } }`)
	if errs != nil {
		t.Fatalf("unknown researcher: %+v, want no error", errs)
	}
	if _, err := bdb.Exec("INSERT INTO researchers (id, name, name_key, family_key, slug) VALUES (1, 'A B', 'a b', 'b', 'a-b')"); err != nil {
		t.Fatal(err)
	}
	_, errs = rawPost(t, c, `{ researcher(id: "1") { fields { count } } }`)
	if len(errs) != 1 || errs[0].Extensions.Code != "INTERNAL_SERVER_ERROR" || errs[0].Extensions.RequestID == "" ||
		strings.Contains(errs[0].Message, "researcher_categories") || strings.Contains(errs[0].Message, "SELECT") {
		t.Errorf("got %+v, want one INTERNAL_SERVER_ERROR with a request id and no SQL", errs)
	}
}

// TestInstitutionEnums checks that the status and the kinds of names
// stored in lower case come out as the enums' values.
func TestInstitutionEnums(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		id := scalar[int64](t, bdb, "SELECT MIN(institution_id) FROM institution_names WHERE kind = 'acronym'")
		var want struct {
			Status string
			Kinds  []string
		}
		want.Status = strings.ToUpper(scalar[string](t, bdb, "SELECT COALESCE(status, '') FROM institutions WHERE id = ?", id))
		if err := bdb.NewRaw("SELECT DISTINCT UPPER(kind) FROM institution_names WHERE institution_id = ? AND kind <> 'name' ORDER BY 1", id).
			Scan(context.Background(), &want.Kinds); err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Institution struct {
				Status *string
				Names  []struct{ Name, Kind string }
			}
		}
		c.MustPost(`query($id: String!) { institution(id: $id) { status names { name kind } } }`, &resp,
			client.Var("id", itoa(id)))
		var kinds []string
		for _, n := range resp.Institution.Names {
			if !slices.Contains(kinds, n.Kind) {
				kinds = append(kinds, n.Kind)
			}
		}
		slices.Sort(kinds)
		if got := resp.Institution.Status; (got == nil) != (want.Status == "") || got != nil && *got != want.Status {
			t.Errorf("status: got %v, want %q", got, want.Status)
		}
		if !slices.Equal(kinds, want.Kinds) || !slices.Contains(kinds, "ACRONYM") {
			t.Errorf("kinds of names: got %q, want %q", kinds, want.Kinds)
		}
	})
}

// TestPaperByRef checks the lookup the exports share with paper(id:): a
// global id finds the paper as its arXiv id does.
func TestPaperByRef(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		id := scalar[int64](t, bdb, "SELECT id FROM papers WHERE arxiv_id = '0704.0001'")
		for _, ref := range []string{"0704.0001", model.GlobalID(model.KindPaper, id), model.GlobalID(model.KindPaper, 1<<40)} {
			p, err := resolvers.PaperByRef(context.Background(), bdb, ref)
			if err != nil {
				t.Fatalf("PaperByRef(%q): %v", ref, err)
			}
			if found, want := p != nil, ref != model.GlobalID(model.KindPaper, 1<<40); found != want || found && p.ID != id {
				t.Errorf("PaperByRef(%q) = %+v, want paper %d: %v", ref, p, id, want)
			}
		}
	})
}
