package ingest

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestKaggle(t *testing.T) {
	recs, pos, bad := readFile(t, Kaggle, "testdata/kaggle.jsonl")
	if len(bad) != 0 {
		t.Fatalf("got bad records %v, want none", bad)
	}
	if got, want := recordLines(pos), []int{1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("got records on lines %v, want %v", got, want)
	}
	papers := paperByID(t, recs)
	tests := []struct {
		id         string
		title      string
		version    int
		published  time.Time
		updated    time.Time
		doi        string
		categories []string
		authors    []string
		complete   bool
		license    string
	}{
		{
			id:         "0704.0001",
			title:      "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies",
			version:    2,
			published:  time.Date(2007, 4, 2, 19, 18, 42, 0, time.UTC),
			updated:    time.Date(2007, 7, 24, 20, 10, 27, 0, time.UTC),
			doi:        "10.1103/physrevd.76.013009",
			categories: []string{"hep-ph"},
			authors:    []string{"C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C.-P. Yuan"},
			complete:   true,
		},
		{
			id:         "0704.0002",
			title:      "Sparsity-certifying Graph Decompositions",
			version:    2,
			published:  time.Date(2007, 3, 31, 2, 26, 18, 0, time.UTC),
			updated:    time.Date(2008, 12, 13, 17, 26, 0, 0, time.UTC),
			categories: []string{"math.CO", "cs.CG"},
			authors:    []string{"Ileana Streinu", "Louis Theran"},
			complete:   true,
			license:    "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
		},
		{
			// "The BABAR Collaboration, B. Aubert, et al"
			id:         "0704.0020",
			title:      "Measurement of the Hadronic Form Factor in D0 --> K- e+ nue Decays",
			version:    1,
			published:  time.Date(2007, 3, 31, 9, 49, 10, 0, time.UTC),
			updated:    time.Date(2007, 3, 31, 9, 49, 10, 0, time.UTC),
			doi:        "10.1103/physrevd.76.052005",
			categories: []string{"hep-ex"},
			authors:    []string{"The BABAR Collaboration", "B. Aubert"},
			complete:   false,
		},
		{
			id:         "0704.0027",
			title:      "Filling-Factor-Dependent Magnetophonon Resonance in Graphene",
			version:    4,
			published:  time.Date(2007, 4, 2, 19, 17, 14, 0, time.UTC),
			updated:    time.Date(2009, 9, 24, 12, 40, 18, 0, time.UTC),
			doi:        "10.1103/physrevlett.99.087402",
			categories: []string{"cond-mat.mes-hall"},
			authors:    []string{"M. O. Goerbig", "J.-N. Fuchs", "K. Kechedzhi", "Vladimir I. Fal'ko"},
			complete:   true,
			license:    "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
		},
	}
	for _, tt := range tests {
		p := papers[tt.id]
		if p == nil {
			t.Errorf("%s: missing", tt.id)
			continue
		}
		checkVersions(t, tt.id, p, tt.title, tt.version, tt.published, tt.updated)
		if p.DOI != tt.doi || p.License != tt.license {
			t.Errorf("%s: got DOI %q licence %q, want %q %q", tt.id, p.DOI, p.License, tt.doi, tt.license)
		}
		if !slices.Equal(p.Categories, tt.categories) {
			t.Errorf("%s: got categories %v, want %v", tt.id, p.Categories, tt.categories)
		}
		if got := authorNames(p.Authors); !slices.Equal(got, tt.authors) || p.AuthorsComplete != tt.complete {
			t.Errorf("%s: got authors %q complete %v, want %q %v", tt.id, got, p.AuthorsComplete, tt.authors, tt.complete)
		}
	}

	// 0704.0025 numbers its affiliations after the names.
	p := papers["0704.0025"]
	if p == nil {
		t.Fatal("0704.0025: missing")
	}
	wantByline := "A. S. Mishchenko (1 and 2) and N. Nagaosa (1 and 3) ((1) CREST, Japan Science and Technology Agency, (2) Russian Research Centre ``Kurchatov Institute'', (3) The University of Tokyo)"
	if p.Byline != wantByline {
		t.Errorf("0704.0025: got byline %q, want %q", p.Byline, wantByline)
	}
	want := []Author{
		{Name: "A. S. Mishchenko", Affiliations: []Affiliation{{Raw: "CREST, Japan Science and Technology Agency"}, {Raw: "Russian Research Centre ``Kurchatov Institute''"}}},
		{Name: "N. Nagaosa", Affiliations: []Affiliation{{Raw: "CREST, Japan Science and Technology Agency"}, {Raw: "The University of Tokyo"}}},
	}
	if !slices.EqualFunc(p.Authors, want, sameAuthor) {
		t.Errorf("0704.0025: got authors %+v, want %+v", p.Authors, want)
	}
	if wantAbstract := "We present recent advances in understanding of the ground and excited states"; len(p.Abstract) < len(wantAbstract) || p.Abstract[:len(wantAbstract)] != wantAbstract {
		t.Errorf("0704.0025: got abstract %.80q, want it to start %q", p.Abstract, wantAbstract)
	}
}

// sameAuthor compares the name and affiliations of two authors.
func sameAuthor(a, b Author) bool {
	return a.Name == b.Name && slices.Equal(a.Affiliations, b.Affiliations)
}

func TestKaggleBadLine(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		wantReason string
	}{
		{"cut JSON", `{"id":"0704.0003","title":"An`, "invalid JSON: unexpected end of JSON input"},
		{"no id", `{"id":null,"title":"A title"}`, "missing arXiv id"},
		{"bad id", `{"id":"0704.00x","title":"A title"}`, `invalid arXiv id "0704.00x"`},
		{"no title", `{"id":"0704.0003","title":""}`, "missing title for 0704.0003"},
		{"long id", `{"id":"` + strings.Repeat("9", 1_000_000) + `","title":"A title"}`, `invalid arXiv id "` + strings.Repeat("9", 80) + `…"`},
		{"10 MB title", `{"id":"0704.0003","title":"` + strings.Repeat("t", 10<<20) + `"}`, "0704.0003 title: 10485760 bytes, over the bound of 4096"},
		{"100,000 authors", `{"id":"0704.0003","title":"A title","authors":"` + strings.Repeat("A. Author, ", 99_999) + `A. Author"}`,
			"0704.0003 authors: 100000, over the bound of 20000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := withLine(t, "kaggle.jsonl", 3, tt.line)
			recs, pos, bad := readFile(t, Kaggle, path)
			if len(recs) != 5 {
				t.Errorf("got %d records, want all 5 good ones", len(recs))
			}
			if got, want := recordLines(pos), []int{1, 2, 4, 5, 6}; !slices.Equal(got, want) {
				t.Errorf("got records on lines %v, want %v", got, want)
			}
			if len(bad) != 1 {
				t.Fatalf("got %d bad records, want 1", len(bad))
			}
			if want := (Position{File: path, Line: 3}); bad[0].Pos != want || bad[0].Reason != tt.wantReason {
				t.Errorf("got %v: %q, want %v: %q", bad[0].Pos, bad[0].Reason, want, tt.wantReason)
			}
		})
	}
}
