package ingest

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db"
)

// openAlexJason is the author A5023888391 as testdata/openalex.jsonl has it.
var openAlexJason = &Researcher{
	Name: "Jason Priem", OpenAlexID: "A5023888391", ORCID: "0000-0001-6187-6610",
	HIndex: new(17), CitationCount: new(3890), WorksCount: new(62), FiguresSource: db.SourceOpenAlex,
}

func TestOpenAlex(t *testing.T) {
	recs, pos, bad := readFile(t, OpenAlex, "testdata/openalex.jsonl")
	if len(bad) != 0 {
		t.Fatalf("bad records: %v", bad)
	}
	// The fourth line, a source, is skipped.
	if got, want := recordLines(pos), []int{1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("got records at lines %v, want %v", got, want)
	}

	w, ok := recs[0].(*Paper)
	if !ok {
		t.Fatalf("got %T, want *Paper", recs[0])
	}
	if got, want := len(w.Authors), 9; got != want {
		t.Fatalf("got %d authors, want %d", got, want)
	}
	authors := w.Authors
	w.Authors = nil
	wantWork := &Paper{
		OpenAlexID:      "W2741809807",
		DOI:             "10.7717/peerj.4375",
		Title:           "The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles",
		Published:       time.Date(2018, 2, 13, 0, 0, 0, 0, time.UTC),
		CitedByCount:    new(962),
		CitedBySource:   db.SourceOpenAlex,
		AuthorsComplete: true,
	}
	if !reflect.DeepEqual(w, wantWork) {
		t.Errorf("work:\ngot  %+v\nwant %+v", w, wantWork)
	}
	authorTests := []struct {
		i    int
		want Author
	}{
		{0, Author{
			Name: "Heather Piwowar", OpenAlexID: "A5048491430", ORCID: "0000-0003-1613-5981",
			Affiliations: []Affiliation{{Raw: "Impact Technology Development (United States)", ROR: "05ppvf150"}},
		}},
		{3, Author{ // display_name, not raw_author_name "Juan Pablo Alperin"
			Name: "Juan Pablo Alperín", OpenAlexID: "A5085171399", ORCID: "0000-0002-9344-7439",
			Affiliations: []Affiliation{
				{Raw: "Simon Fraser University", ROR: "0213rcc28"},
				{Raw: "Public Knowledge Project", ROR: "05ek4tb53"},
			},
		}},
		{5, Author{ // "FlourishOA, USA" matched no institution
			Name: "Bree Norlander", OpenAlexID: "A5015414792", ORCID: "0000-0002-0431-4221",
			Affiliations: []Affiliation{
				{Raw: "University of Washington", ROR: "00cvxb145"},
				{Raw: "Seattle University", ROR: "02jqc0m91"},
				{Raw: "FlourishOA, USA"},
			},
		}},
	}
	for _, tt := range authorTests {
		if !reflect.DeepEqual(authors[tt.i], tt.want) {
			t.Errorf("author %d:\ngot  %+v\nwant %+v", tt.i, authors[tt.i], tt.want)
		}
	}

	if !reflect.DeepEqual(recs[1], openAlexJason) {
		t.Errorf("author:\ngot  %+v\nwant %+v", recs[1], openAlexJason)
	}
	wantInst := &Institution{
		ROR: "00jmfr291", Name: "University of Michigan", Country: "US", Types: []string{"funder"},
		OpenAlexID: "I27837315",
		Names: []InstitutionName{
			{"Université du Michigan", "alias"},
			{"UMich", "alias"},
			{"University of Michigan–Ann Arbor", "alias"},
			{"UM", "acronym"},
		},
	}
	if !reflect.DeepEqual(recs[2], wantInst) {
		t.Errorf("institution:\ngot  %+v\nwant %+v", recs[2], wantInst)
	}
}

func TestOpenAlexArxiv(t *testing.T) {
	tests := []struct {
		name, line      string
		wantID, wantDOI string
	}{
		{"arXiv DOI", `{"id": "https://openalex.org/W1", "doi": "https://doi.org/10.48550/arXiv.2111.04949"}`, "2111.04949", ""},
		{"landing page", `{"id": "https://openalex.org/W1", "doi": "https://doi.org/10.1103/PhysRevD.1.1",
			"locations": [{"landing_page_url": "https://doi.org/10.1103/PhysRevD.1.1"}, {"landing_page_url": "http://arxiv.org/abs/hep-th/9407087v2"}]}`,
			"hep-th/9407087", "10.1103/physrevd.1.1"},
		{"primary pdf", `{"id": "https://openalex.org/W1", "primary_location": {"pdf_url": "https://arxiv.org/pdf/2111.04949"}}`, "2111.04949", ""},
		{"other host", `{"id": "https://openalex.org/W1", "locations": [{"landing_page_url": "https://example.org/abs/2111.04949"}]}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := strings.ReplaceAll(tt.line, "\n", "")
			recs, _, bad := readFile(t, OpenAlex, tempFile(t, "w.jsonl", line+"\n"))
			if len(recs) != 1 || len(bad) != 0 {
				t.Fatalf("got %d records and bad %v, want one record", len(recs), bad)
			}
			p := recs[0].(*Paper)
			if p.ArxivID != tt.wantID || p.DOI != tt.wantDOI {
				t.Errorf("got arXiv %q DOI %q, want %q %q", p.ArxivID, p.DOI, tt.wantID, tt.wantDOI)
			}
		})
	}
}

func TestOpenAlexPretty(t *testing.T) {
	data, err := os.ReadFile("testdata/openalex-author-pretty.json")
	if err != nil {
		t.Fatal(err)
	}
	pretty := string(data)
	n := strings.Count(pretty, "\n")
	prettyLines := strings.SplitAfter(pretty, "\n")
	tests := []struct {
		name      string
		content   string
		wantLines []int // lines of the records found
		wantBad   []int
	}{
		{"one object", pretty, []int{1}, nil},
		{"two objects", pretty + pretty, []int{1, n + 1}, nil},
		{"leading blank line", "\n" + pretty, []int{2}, nil},
		{"truncated", strings.Join(prettyLines[:600], ""), nil, []int{600}},
		{"syntax error", strings.Join(prettyLines[:9], "") + " oops\n" + strings.Join(prettyLines[9:], ""), nil, []int{10}},
		{"error in second object", pretty + strings.Replace(pretty, `"h_index": 17,`, `"h_index": 17`, 1), []int{1}, []int{n + 14}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, pos, bad := readFile(t, OpenAlex, tempFile(t, "a.json", tt.content))
			if got := recordLines(pos); !slices.Equal(got, tt.wantLines) {
				t.Errorf("got records at lines %v, want %v", got, tt.wantLines)
			}
			for _, r := range recs {
				if !reflect.DeepEqual(r, openAlexJason) {
					t.Errorf("got %+v, want %+v", r, openAlexJason)
				}
			}
			if got := badLines(bad); !slices.Equal(got, tt.wantBad) {
				t.Errorf("got bad lines %v (%v), want %v", got, bad, tt.wantBad)
			}
		})
	}
}

func TestOpenAlexBadRecords(t *testing.T) {
	tests := []struct {
		name, line, reason string
	}{
		{"truncated", `{"id": "https://openalex.org/W2741809807", "title": "The state`, "invalid JSON: unexpected end of JSON input"},
		{"ROR record", `{"id": "https://ror.org/00jmfr291", "name": "University of Michigan"}`,
			`id "https://ror.org/00jmfr291" is not an OpenAlex id`},
		{"bad date", `{"id": "https://openalex.org/W2741809807", "publication_date": "2018-13-02"}`,
			`publication_date: parsing time "2018-13-02": month out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := withLine(t, "openalex.jsonl", 2, tt.line)
			recs, _, bad := readFile(t, OpenAlex, path)
			if len(recs) != 3 {
				t.Errorf("got %d records, want the 3 good ones", len(recs))
			}
			if got := badLines(bad); !slices.Equal(got, []int{2}) {
				t.Fatalf("got bad lines %v, want [2]", got)
			}
			if got, want := bad[0].Error(), path+":2: "+tt.reason; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}
