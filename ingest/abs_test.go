package ingest

import (
	"slices"
	"testing"
	"time"
)

func TestAbs(t *testing.T) {
	const file = "testdata/abs.tar.gz"
	recs, pos, bad := readFile(t, Abs, file)
	// The empty 0509037.abs of the arxiv-browse fixtures has no id; the
	// superseded orig/ version of 9709111 is not read at all.
	wantBad := []RecordError{{Pos: Position{File: file, Member: "abs_files/ftp/math-ph/papers/0509/0509037.abs"}, Reason: "missing arXiv id"}}
	if !slices.EqualFunc(bad, wantBad, func(a *RecordError, b RecordError) bool { return *a == b }) {
		t.Errorf("got bad records %v, want %v", bad, wantBad)
	}
	if len(recs) != 8 {
		t.Errorf("got %d records, want 8", len(recs))
	}
	for _, p := range pos {
		if p.Line != 0 || p.Member == "" {
			t.Errorf("got position %v, want a tar member and no line", p)
		}
	}
	papers := paperByID(t, recs)
	tests := []struct {
		id         string
		title      string
		version    int
		published  time.Time
		updated    time.Time
		categories []string
		authors    []Author
		byline     string
		doi        string
		journalRef string
		reportNo   string
	}{
		{
			id:         "hep-th/9201001",
			title:      "Combinatorics of the Modular Group II: the Kontsevich integrals",
			version:    1,
			published:  time.Date(1991, 12, 31, 22, 54, 17, 0, time.UTC), // "Tue Dec 31 23:54:17 MET 1991 +0100"
			updated:    time.Date(1991, 12, 31, 22, 54, 17, 0, time.UTC),
			categories: []string{"hep-th"}, // from the id; Subj-class is not a category
			authors:    []Author{{Name: "C. Itzykson"}, {Name: "J.-B. Zuber"}},
			byline:     "C. Itzykson and J.-B. Zuber",
			journalRef: "Int.J.Mod.Phys. A7 (1992) 5661-5705",
		},
		{
			// "Author:", singular, with a TeX-accented affiliation.
			id:         "hep-th/9212003",
			title:      "Simple BRST quantization of general gauge models",
			version:    1,
			published:  time.Date(1992, 12, 1, 13, 57, 22, 0, time.UTC),
			updated:    time.Date(1992, 12, 1, 13, 57, 22, 0, time.UTC),
			categories: []string{"hep-th"},
			authors:    []Author{{Name: "Robert Marnelius", Affiliations: []Affiliation{{Raw: "Göteborg ITP"}}}},
			byline:     "Robert Marnelius (Göteborg ITP)",
			journalRef: "Nucl. Phys. B395 (1993) 647",
			reportNo:   `G\"{o}teborg ITP 92-48`,
		},
		{
			// A bare "Date (revised)" line makes version 2.
			id:         "hep-th/9201016",
			title:      "Bicovariant Differential Calculus on the Quantum D=2 Poincare Group",
			version:    2,
			published:  time.Date(1992, 1, 9, 17, 50, 0, 0, time.UTC),
			updated:    time.Date(1992, 2, 26, 17, 34, 0, 0, time.UTC),
			categories: []string{"hep-th"},
			authors:    []Author{{Name: "Leonardo Castellani"}},
			byline:     "Leonardo Castellani",
			journalRef: "Phys.Lett. B279 (1992) 291-298",
		},
		{
			// The Authors line wraps onto the next.
			id:         "hep-th/9302103",
			title:      "Holomorphic Anomalies in Topological Field Theories",
			version:    1,
			published:  time.Date(1993, 2, 22, 16, 26, 22, 0, time.UTC),
			updated:    time.Date(1993, 2, 22, 16, 26, 22, 0, time.UTC),
			categories: []string{"hep-th"},
			authors:    []Author{{Name: "M. Bershadsky"}, {Name: "S. Cecotti"}, {Name: "H. Ooguri"}, {Name: "C. Vafa"}, {Name: "S. Katz"}},
			byline:     "M.Bershadsky, S.Cecotti, H.Ooguri and C.Vafa (with an appendix by S.Katz)",
			journalRef: "Nucl.Phys. B405 (1993) 279-304",
			reportNo:   "HUTP-93/A008;RIMS-915",
		},
		{
			id:         "hep-th/9709111",
			title:      "On the effective interactions of a light gravitino with matter fermions",
			version:    3,
			published:  time.Date(1997, 9, 16, 14, 44, 58, 0, time.UTC),
			updated:    time.Date(1997, 11, 3, 19, 27, 30, 0, time.UTC),
			categories: []string{"hep-th", "hep-ph"},
			authors: []Author{
				{Name: "Andrea Brignole", Affiliations: []Affiliation{{Raw: "CERN-TH"}}},
				{Name: "Ferruccio Feruglio", Affiliations: []Affiliation{{Raw: "Padua Univ."}}},
				{Name: "Fabio Zwirner", Affiliations: []Affiliation{{Raw: "INFN-Padua"}}},
			},
			byline:     "Andrea Brignole (CERN-TH), Ferruccio Feruglio (Padua Univ.), Fabio Zwirner (INFN-Padua)",
			doi:        "10.1088/1126-6708/1997/11/001",
			journalRef: "JHEP 9711:001,1997",
			reportNo:   "CERN-TH/97-244, DFPD~97/TH/35",
		},
		{
			// MSC-class is not a category.
			id:         "0704.0104",
			title:      "A geometric realization of sl(6,C)",
			version:    1,
			published:  time.Date(2007, 4, 1, 19, 52, 31, 0, time.UTC),
			updated:    time.Date(2007, 4, 1, 19, 52, 31, 0, time.UTC),
			categories: []string{"math.DG", "math.RT"},
			authors:    []Author{{Name: "Giovanni Gaiffi"}, {Name: "Michele Grassi"}},
			byline:     "Giovanni Gaiffi, Michele Grassi",
		},
		{
			// Latin-1, not UTF-8.
			id:         "1607.08199",
			title:      "Bridgeland Stability Conditions on Fano Threefolds",
			version:    5,
			published:  time.Date(2016, 7, 27, 17, 52, 31, 0, time.UTC),
			updated:    time.Date(2017, 4, 5, 18, 19, 17, 0, time.UTC),
			categories: []string{"math.AG"},
			authors:    []Author{{Name: "Marcello Bernardara"}, {Name: "Emanuele Macrì"}, {Name: "Benjamin Schmidt"}, {Name: "Xiaolei Zhao"}},
			byline:     "Marcello Bernardara, Emanuele Macrì, Benjamin Schmidt, Xiaolei Zhao",
			journalRef: "Épijournal de Géométrie Algébrique, Volume 1 (September 1, 2017) epiga:3255",
		},
	}
	for _, tt := range tests {
		p := papers[tt.id]
		if p == nil {
			t.Errorf("%s: missing", tt.id)
			continue
		}
		checkVersions(t, tt.id, p, tt.title, tt.version, tt.published, tt.updated)
		if !slices.Equal(p.Categories, tt.categories) {
			t.Errorf("%s: got categories %v, want %v", tt.id, p.Categories, tt.categories)
		}
		if !slices.EqualFunc(p.Authors, tt.authors, sameAuthor) || !p.AuthorsComplete {
			t.Errorf("%s: got authors %+v complete %v, want %+v complete", tt.id, p.Authors, p.AuthorsComplete, tt.authors)
		}
		if p.Byline != tt.byline {
			t.Errorf("%s: got byline %q, want %q", tt.id, p.Byline, tt.byline)
		}
		if p.DOI != tt.doi || p.JournalRef != tt.journalRef || p.ReportNo != tt.reportNo {
			t.Errorf("%s: got DOI %q journal-ref %q report-no %q, want %q %q %q", tt.id, p.DOI, p.JournalRef, p.ReportNo, tt.doi, tt.journalRef, tt.reportNo)
		}
		if p.Abstract == "" {
			t.Errorf("%s: got no abstract", tt.id)
		}
	}
	// The .abs file and the Kaggle line of 0704.0001 tell the same paper.
	kaggle, _, _ := readFile(t, Kaggle, "testdata/kaggle.jsonl")
	k, a := paperByID(t, kaggle)["0704.0001"], papers["0704.0001"]
	if a == nil || k == nil {
		t.Fatal("0704.0001: missing")
	}
	if a.Title != k.Title || a.Abstract != k.Abstract || a.Version != k.Version || !a.Published.Equal(k.Published) || !a.Updated.Equal(k.Updated) || a.DOI != k.DOI {
		t.Errorf("0704.0001: abs gives %q v%d %v..%v %q, kaggle %q v%d %v..%v %q",
			a.Title, a.Version, a.Published, a.Updated, a.DOI, k.Title, k.Version, k.Published, k.Updated, k.DOI)
	}
}

func TestAbsMalformed(t *testing.T) {
	const head = "------------------------------------------------------------------------------\n\\\\\n"
	tests := []struct {
		name, content, wantReason string
	}{
		{"no title", head + "Paper: hep-th/9201001\nAuthors: C. Itzykson\n\\\\\n  Text.\n\\\\\n", "missing title for hep-th/9201001"},
		{"no id", head + "From: someone\nTitle: A title\n\\\\\n  Text.\n\\\\\n", "missing arXiv id"},
		{"bad id", head + "Paper: hep-th/92010\nTitle: A title\n\\\\\n", `invalid arXiv id "hep-th/92010"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tempFile(t, "x.abs", tt.content)
			recs, _, bad := readFile(t, Abs, path)
			if len(recs) != 0 || len(bad) != 1 {
				t.Fatalf("got %d records and %d bad ones, want 0 and 1", len(recs), len(bad))
			}
			if want := (Position{File: path}); bad[0].Pos != want || bad[0].Reason != tt.wantReason {
				t.Errorf("got %v: %q, want %v: %q", bad[0].Pos, bad[0].Reason, want, tt.wantReason)
			}
		})
	}
}

func TestIsAbsMember(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"abstracts/1992/9201001.abs", true},
		{"abs_files/ftp/arxiv/papers/0704/0704.0001.abs", true},
		{"abs_files/orig/arxiv/papers/0704/0704.0001v1.abs", false},
		{"orig/hep-th/papers/9709/9709111v1.abs", false},
		{"abs_files/README.md", false},
	}
	for _, tt := range tests {
		if got := isAbsMember(tt.name); got != tt.want {
			t.Errorf("isAbsMember(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
