package ingest

import (
	"slices"
	"testing"
	"time"
)

func TestPaperscapeYear(t *testing.T) {
	// The file's trailing comment says "# 306 entries".
	recs, _, bad := readFile(t, Paperscape, "../demo/data/pscp-1991.csv.gz")
	if len(recs) != 306 || len(bad) != 0 {
		t.Errorf("got %d records and bad ones %v, want 306 and none", len(recs), bad)
	}
	papers := paperByID(t, recs)
	tests := []struct {
		id         string
		title      string
		categories []string
		authors    []string
		refs       int
	}{
		{"hep-lat/9107001", "How to Put a Heavier Higgs on the Lattice", []string{"hep-lat"}, []string{"U. M. Heller", "H. Neuberger", "P. Vranas"}, 0},
		{"hep-lat/9107002", "Spectral Density Study of the SU(3) Deconfining Phase Transition", []string{"hep-lat"}, []string{"N. A. Alves", "B. Al. Berg", "S. Sanielevici"}, 0},
		{"hep-th/9112068", "On the General Structure of Hamiltonian Reductions of the Wznw Theory", []string{"hep-th"}, []string{"L. Feher", "L. O'raifeartaigh", "P. Ruelle", "I. Tsutsui", "A. Wipf"}, 0},
		{"hep-th/9112030", "Supersymmetric String Solitons", []string{"hep-th"}, []string{"C. G. Callan Jr", "J. A. Harvey", "A. E. Strominger"}, 0},
	}
	for _, tt := range tests {
		p := papers[tt.id]
		if p == nil {
			t.Errorf("%s: missing", tt.id)
			continue
		}
		if p.Title != tt.title || !slices.Equal(p.Categories, tt.categories) || len(p.References) != tt.refs {
			t.Errorf("%s: got %q %v with %d refs, want %q %v with %d", tt.id, p.Title, p.Categories, len(p.References), tt.title, tt.categories, tt.refs)
		}
		if got := authorNames(p.Authors); !slices.Equal(got, tt.authors) || !p.AuthorsComplete {
			t.Errorf("%s: got authors %q complete %v, want %q complete", tt.id, got, p.AuthorsComplete, tt.authors)
		}
	}
	if p := papers["hep-th/9112068"]; p != nil && !p.Published.Equal(time.Date(1991, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("hep-th/9112068: got published %v, want 1991-12-01", p.Published)
	}
}

func TestPaperscape(t *testing.T) {
	recs, pos, bad := readFile(t, Paperscape, "testdata/paperscape.csv")
	if len(bad) != 0 {
		t.Fatalf("got bad records %v, want none", bad)
	}
	if got, want := recordLines(pos), []int{9, 10, 11, 12}; !slices.Equal(got, want) {
		t.Errorf("got records on lines %v, want %v", got, want)
	}
	papers := paperByID(t, recs)
	tests := []struct {
		id        string
		title     string
		published time.Time
		refs      []string
		authors   []string
	}{
		{
			id:        "hep-lat/9208017",
			title:     "The triviality bound on the Higgs mass; its value and what it means",
			published: time.Date(1992, 8, 1, 0, 0, 0, 0, time.UTC),
			refs:      []string{"hep-lat/9107001"},
			authors:   []string{"H. Neuberger", "U. M. Heller", "M. Klomfass", "P. Vranas"},
		},
		{
			// No authors at all.
			id:        "astro-ph/9612068",
			title:     "The Amanda Experiment",
			published: time.Date(1996, 12, 1, 0, 0, 0, 0, time.UTC),
			refs:      []string{"astro-ph/9412028", "astro-ph/9501073"},
		},
		{
			// A 1992 paper citing new-style ids, as Paperscape has it.
			id:        "hep-th/9202090",
			title:     "From wormhole to time machine: Comments on Hawking's Chronology Protection Conjecture",
			published: time.Date(1992, 2, 1, 0, 0, 0, 0, time.UTC),
			refs:      []string{"0809.0907", "0809.0927"},
			authors:   []string{"B. M. Visser"},
		},
	}
	for _, tt := range tests {
		p := papers[tt.id]
		if p == nil {
			t.Errorf("%s: missing", tt.id)
			continue
		}
		if p.Title != tt.title || !p.Published.Equal(tt.published) {
			t.Errorf("%s: got %q %v, want %q %v", tt.id, p.Title, p.Published, tt.title, tt.published)
		}
		if !slices.Equal(p.References, tt.refs) {
			t.Errorf("%s: got references %q, want %q", tt.id, p.References, tt.refs)
		}
		if got := authorNames(p.Authors); !slices.Equal(got, tt.authors) || p.AuthorsComplete != (len(tt.authors) > 0) {
			t.Errorf("%s: got authors %q complete %v, want %q", tt.id, got, p.AuthorsComplete, tt.authors)
		}
	}
}

func TestPaperscapeBadLine(t *testing.T) {
	tests := []struct {
		name, line, wantReason string
	}{
		{"too few fields", "hep-th/9203078;hep-th;0", "7 fields expected, got 3"},
		{"bad id", "hep-th/92xx;hep-th;0;0;;A.Author;A title", `invalid arXiv id "hep-th/92xx"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := withLine(t, "paperscape.csv", 10, tt.line)
			recs, pos, bad := readFile(t, Paperscape, path)
			if got, want := recordLines(pos), []int{9, 11, 12, 13}; len(recs) != 4 || !slices.Equal(got, want) {
				t.Errorf("got records on lines %v, want %v", got, want)
			}
			if len(bad) != 1 {
				t.Fatalf("got %d bad records, want 1", len(bad))
			}
			if want := (Position{File: path, Line: 10}); bad[0].Pos != want || bad[0].Reason != tt.wantReason {
				t.Errorf("got %v: %q, want %v: %q", bad[0].Pos, bad[0].Reason, want, tt.wantReason)
			}
		})
	}
}

func TestSpaceInitials(t *testing.T) {
	tests := []struct{ in, want string }{
		{"C.Itzykson,J.-B.Zuber", "C. Itzykson,J.-B. Zuber"},
		{"N.A.Alves,B.Al.Berg", "N. A. Alves,B. Al. Berg"},
		{"L.O'raifeartaigh", "L. O'raifeartaigh"},
		{"A.C.D.van Enter", "A. C. D. van Enter"},
		{".Yu.L'vov,A.D'Adda", "Yu. L'vov,A. D'Adda"},
		{"C.G.Callan Jr", "C. G. Callan Jr"},
		{"ALEPH Collaboration", "ALEPH Collaboration"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := spaceInitials(tt.in); got != tt.want {
			t.Errorf("spaceInitials(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
