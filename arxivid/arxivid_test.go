package arxivid

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// parseTests are shared by TestParse and the seed corpus of FuzzParse.
var parseTests = []struct {
	in      string
	id      string
	version int
}{
	{"2111.04949", "2111.04949", 0},
	{"2111.04949v2", "2111.04949", 2},
	{"arXiv:2111.04949", "2111.04949", 0},
	{"arxiv:2111.04949v3", "2111.04949", 3},
	{"2401.01234", "2401.01234", 0},
	{"0704.0001", "0704.0001", 0},
	{"1412.9999v12", "1412.9999", 12},
	{"hep-th/9407087", "hep-th/9407087", 0},
	{"hep-th/9407087v1", "hep-th/9407087", 1},
	{"math.CA/0611800", "math/0611800", 0},
	{"math-ph/0001001", "math-ph/0001001", 0},
	{"cond-mat.str-el/0101001", "cond-mat/0101001", 0},
	{"alg-geom/9201001", "alg-geom/9201001", 0},
	{"q-alg/9503002v2", "q-alg/9503002", 2},
	{"chao-dyn/9304008", "chao-dyn/9304008", 0},
	{"cmp-lg/9404001", "cmp-lg/9404001", 0},
	{"2111.04949-a-survey-and-empirical-evaluation", "2111.04949", 0},
	{"hep-th/9407087-some-title-slug", "hep-th/9407087", 0},
	{"https://arxiv.org/abs/2111.04949v2", "2111.04949", 2},
	{"http://arxiv.org/pdf/2111.04949.pdf", "2111.04949", 0},
	{"https://arxiv.org/pdf/2111.04949v1", "2111.04949", 1},
	{"arxiv.org/pdf/hep-th/9407087v1", "hep-th/9407087", 1},
	{"https://export.arxiv.org/abs/math.CA/0611800v2", "math/0611800", 2},
	{"https://arxiv.org/abs/2111.04949?context=cs#section", "2111.04949", 0},
	{"  \t2111.04949v2\n", "2111.04949", 2},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		id, version, err := Parse(tt.in)
		if err != nil || id != tt.id || version != tt.version {
			t.Errorf("Parse(%q) = %q, %d, %v, want %q, %d, nil", tt.in, id, version, err, tt.id, tt.version)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{
		"",
		"arXiv:",
		"2111.4949",      // too few digits
		"2111.049491",    // too many digits
		"1501.0001",      // four digits after 2015
		"1412.00001",     // five digits before 2015
		"0612.0001",      // before new-style ids began
		"2113.04949",     // month 13
		"2111.04949v0",   // versions start at 1
		"2111.04949v",    // no version number
		"hep-th/940708",  // six digits
		"HEP-TH/9407087", // archives are lowercase
		"hep-th/0801001", // after old-style ids ended
		"hep_th/9407087", // not an archive name
		"https://example.org/abs/2111.04949",
		"https://arxiv.org/list/hep-th/new",
		"10.1103/PhysRevD.76.013009",
		"2111.04949 and more",
	} {
		if id, version, err := Parse(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %q, %d, %v, want an error wrapping ErrSyntax", in, id, version, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, version, err := Parse(s)
		if err != nil {
			return
		}
		again, v, err := Parse(id)
		if err != nil || again != id || v != 0 {
			t.Errorf("Parse(%q) = %q, %d, %v after Parse(%q) gave %q, %d", id, again, v, err, s, id, version)
		}
	})
}

func TestSlug(t *testing.T) {
	tests := []struct{ id, title, want string }{
		{"2111.04949", "A Survey and Empirical Evaluation", "2111.04949-a-survey-and-empirical-evaluation"},
		{"hep-th/9407087", "Exact Black String", "hep-th/9407087-exact-black-string"},
		// 0704.0001's title, with its TeX.
		{"0704.0001", `Calculation of prompt diphoton production cross sections at Tevatron and LHC energies`, "0704.0001-calculation-of-prompt-diphoton-production-cross-sections-at-tevatron-and-lhc"},
		{"0704.0062", `Sch\"odinger's $\alpha$-Operators`, "0704.0062-schodinger-s-alpha-operators"},
		{"2111.04949", "", "2111.04949"},
		{"2111.04949", "∑ ∞", "2111.04949"},
	}
	for _, tt := range tests {
		if got := Slug(tt.id, tt.title); got != tt.want {
			t.Errorf("Slug(%q, %q) = %q, want %q", tt.id, tt.title, got, tt.want)
		}
	}
}

func TestTitleSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Shuqing Lin", "shuqing-lin"},
		{"Balázs", "balazs"},
		{`C. Bal\'azs`, "c-balazs"},
		{"Mikkel Øbro", "mikkel-obro"},
		{"Groß 李 Wei", "gross-wei"},
		{"  --  ", ""},
		{"Pneumonoultramicroscopicsilicovolcanoconiosis-pneumonoultramicroscopicsilicovolcanoconiosis", "pneumonoultramicroscopicsilicovolcanoconiosis"},
		{"Supercalifragilisticexpialidociouspneumonoultramicroscopicsilicovolcanoconiosisxyzzy", "supercalifragilisticexpialidociouspneumonoultramicroscopicsilicovolcanoconiosisx"},
	}
	for _, tt := range tests {
		if got := TitleSlug(tt.in); got != tt.want {
			t.Errorf("TitleSlug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// doiTests are shared by TestNormalizeDOI and the seed corpus of
// FuzzNormalizeDOI.
var doiTests = []struct {
	in   string
	want string
	ok   bool
}{
	{"10.1103/PhysRevD.76.013009", "10.1103/physrevd.76.013009", true},
	{"doi:10.1103/PhysRevD.76.013009", "10.1103/physrevd.76.013009", true},
	{"DOI: 10.1103/PhysRevD.76.013009", "10.1103/physrevd.76.013009", true},
	{"https://doi.org/10.1103/PhysRevD.76.013009", "10.1103/physrevd.76.013009", true},
	{"http://dx.doi.org/10.1007/978-3-540-71070-1_1", "10.1007/978-3-540-71070-1_1", true},
	{"https://doi.org/10.1002/(SICI)1097-0258%2819980815%2917", "10.1002/(sici)1097-0258(19980815)17", true},
	{" 10.1088/1126-6708/2007/05/024 ", "10.1088/1126-6708/2007/05/024", true},
	{"10.1103", "", false},
	{"11.1103/PhysRevD.76.013009", "", false},
	{"10.1103/Phys Rev", "", false},
	{"2111.04949", "", false},
	{"", "", false},
	{"10.1/x\x00y", "", false},
	{"10.1103/x\u202ey", "", false},
	{"10.1103/x\xffy", "", false},
	{"https://doi.org/10.1103/x%00y", "", false},
	{"10.1103/x\u00a0y", "", false},
}

func TestNormalizeDOI(t *testing.T) {
	for _, tt := range doiTests {
		if got, ok := NormalizeDOI(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeDOI(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzNormalizeDOI checks that a DOI normalises to itself and never holds
// a blank, a control character or invalid UTF-8.
func FuzzNormalizeDOI(f *testing.F) {
	for _, tt := range doiTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doi, ok := NormalizeDOI(s)
		if !ok {
			return
		}
		if !utf8.ValidString(doi) || strings.IndexFunc(doi, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
			t.Errorf("NormalizeDOI(%q) = %q, which holds a blank, a control character or invalid UTF-8", s, doi)
		}
		if again, ok := NormalizeDOI(doi); !ok || again != doi {
			t.Errorf("NormalizeDOI(%q) = %q, %v after NormalizeDOI(%q) gave %q", doi, again, ok, s, doi)
		}
	})
}
