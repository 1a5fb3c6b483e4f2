package names

import (
	"reflect"
	"testing"
)

func TestDecodeTeX(t *testing.T) {
	tests := []struct{ in, want string }{
		{`C. Bal\'azs`, "C. Balázs"}, // 0704.0001
		{`Rastislav \v{S}r\'amek, Bro\v{n}a Brejov\'a`, "Rastislav Šrámek, Broňa Brejová"}, // 0704.0062
		{`Mikkel {\O}bro`, "Mikkel Øbro"},          // 0704.0049
		{`M{\aa}ns Henningson`, "Måns Henningson"}, // hep-th/9205079
		{`Mart\'{\i}n`, "Martín"},                  // KDD
		{`Garc\'\i a`, "García"},                   // KDD
		{`A. Rodr\'{i}guez`, "A. Rodríguez"},
		{`{\"o}ckenhauer`, "öckenhauer"},                               // KDD
		{`F.E. Mendon\c{c}a da Silveira`, "F.E. Mendonça da Silveira"}, // hep-th/9810011
		{`Mendon\c ca`, "Mendonça"},
		{`Mi\l{}osz Wa{\l}ecki`, "Miłosz Wałecki"},
		{`Ro{\ss}hammer, \ss ling`, "Roßhammer, ßling"},
		{`Jo\~{a}o N. G. N. Prata`, "João N. G. N. Prata"}, // hep-th/9704070
		{`\u{a}escu \H{o} \={u}ichi \.{z}`, "ăescu ő ūichi ż"},
		{`{\ae}sir \AA ngstr\"om`, "æsir Ångström"},
		{`St\a 'ephane OUVRY`, "Stéphane OUVRY"}, // Paperscape hep-th/9306080
		{`Universit\"at Dortmund`, "Universität Dortmund"},
		{`Queen Mary \& Westfield`, "Queen Mary & Westfield"},
		{`no macros at all`, "no macros at all"},
		{`dangling \`, "dangling "},
		{`\'`, ""},
		{`\"{`, ""},
	}
	for _, tt := range tests {
		if got := DecodeTeX(tt.in); got != tt.want {
			t.Errorf("DecodeTeX(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseByline(t *testing.T) {
	tests := []struct {
		in        string
		want      []Author
		truncated bool
	}{
		{ // 0704.0001
			in:   `C. Bal\'azs, E. L. Berger, P. M. Nadolsky, C.-P. Yuan`,
			want: []Author{{Name: "C. Balázs"}, {Name: "E. L. Berger"}, {Name: "P. M. Nadolsky"}, {Name: "C.-P. Yuan"}},
		},
		{ // 0704.0020
			in:        "The BABAR Collaboration, B. Aubert, et al",
			want:      []Author{{Name: "The BABAR Collaboration"}, {Name: "B. Aubert"}},
			truncated: true,
		},
		{ // 0704.0029
			in:   "J.P.Hague and N.d'Ambrumenil",
			want: []Author{{Name: "J. P. Hague"}, {Name: "N. d'Ambrumenil"}},
		},
		{ // 0704.0155: an affiliation covers the names since the previous one
			in: "Floris van der Tak (SRON Groningen), John Black (Onsala), Fredrik\n  Schoeier (Stockholm), David Jansen and Ewine van Dishoeck (Leiden)",
			want: []Author{
				{Name: "Floris van der Tak", Affiliations: []string{"SRON Groningen"}},
				{Name: "John Black", Affiliations: []string{"Onsala"}},
				{Name: "Fredrik Schoeier", Affiliations: []string{"Stockholm"}},
				{Name: "David Jansen", Affiliations: []string{"Leiden"}},
				{Name: "Ewine van Dishoeck", Affiliations: []string{"Leiden"}},
			},
		},
		{ // 0704.0025
			in: "A. S. Mishchenko (1 and 2) and N. Nagaosa (1 and 3) ((1) CREST, Japan\n  Science and Technology Agency, (2) Russian Research Centre ``Kurchatov\n  Institute'', (3) The University of Tokyo)",
			want: []Author{
				{Name: "A. S. Mishchenko", Affiliations: []string{"CREST, Japan Science and Technology Agency", "Russian Research Centre ``Kurchatov Institute''"}},
				{Name: "N. Nagaosa", Affiliations: []string{"CREST, Japan Science and Technology Agency", "The University of Tokyo"}},
			},
		},
		{ // 0704.0139: bare numbers in the list, "Via Beirut 2 - 4" is no marker
			in: "F.R. Ferraro (1), M. Mapelli (7), S. Sigurdsson (8) (1\n  Dip. Astro., Bologna; 2 INAF--Oss. Astro., Bologna, 3 Dip. Astro. e Scienza\n  dello Spazio, Firenze; 4 Dip. di Scienze della Comunicazione, Teramo; 5\n  INAF--Oss. Astro. di Collurania, Teramo; 6 Dep. of Astronomy and\n  Astrophysics, The Pennsylvania State University; 7 S.I.S.S.A., Via Beirut 2 -\n  4, Trieste; 8 Astronomy Department, University of Virginia)",
			want: []Author{
				{Name: "F. R. Ferraro", Affiliations: []string{"Dip. Astro., Bologna"}},
				{Name: "M. Mapelli", Affiliations: []string{"S.I.S.S.A., Via Beirut 2 - 4, Trieste"}},
				{Name: "S. Sigurdsson", Affiliations: []string{"Astronomy Department, University of Virginia"}},
			},
		},
		{ // hep-th/9811027: "n:" markers separated by semicolons
			in: "A. K. Aringazin (1), S. Baskoutas (2) (1: Karaganda State University; 2: University of Patras)",
			want: []Author{
				{Name: "A. K. Aringazin", Affiliations: []string{"Karaganda State University"}},
				{Name: "S. Baskoutas", Affiliations: []string{"University of Patras"}},
			},
		},
		{ // hep-th/0201193: nested parentheses inside the numbered list
			in: "E. Toprak (1) and O. T. Turgut (1 and 2) ((1) Bogazici University, Istanbul and (2) Feza Gursey Institute (FGI), Istanbul)",
			want: []Author{
				{Name: "E. Toprak", Affiliations: []string{"Bogazici University, Istanbul"}},
				{Name: "O. T. Turgut", Affiliations: []string{"Bogazici University, Istanbul", "Feza Gursey Institute (FGI), Istanbul"}},
			},
		},
		{ // hep-th/9203080: a lone "Jr" joins the name before it
			in:   "H. Nishino, S.J. Gates, Jr, and S.V. Ketov",
			want: []Author{{Name: "H. Nishino"}, {Name: "S. J. Gates Jr"}, {Name: "S. V. Ketov"}},
		},
		{ // hep-th/0002098: "&" inside an affiliation does not split it
			in: "J. Bjoraker (Minnesota U & BNL) and Y. Hosotani (Minnesota U)",
			want: []Author{
				{Name: "J. Bjoraker", Affiliations: []string{"Minnesota U & BNL"}},
				{Name: "Y. Hosotani", Affiliations: []string{"Minnesota U"}},
			},
		},
		{ // hep-th/0002149: "&" between names
			in: "Massimo Bianchi & Jose F. Morales (Dipartimento di Fisica and INFN, Universita` di Roma ``Tor Vergata'')",
			want: []Author{
				{Name: "Massimo Bianchi", Affiliations: []string{"Dipartimento di Fisica and INFN, Universita` di Roma ``Tor Vergata''"}},
				{Name: "Jose F. Morales", Affiliations: []string{"Dipartimento di Fisica and INFN, Universita` di Roma ``Tor Vergata''"}},
			},
		},
		{ // hep-th/9302103
			in:   "M.Bershadsky, S.Cecotti, H.Ooguri and C.Vafa (with an appendix by S.Katz)",
			want: []Author{{Name: "M. Bershadsky"}, {Name: "S. Cecotti"}, {Name: "H. Ooguri"}, {Name: "C. Vafa"}, {Name: "S. Katz"}},
		},
		{ // hep-th/9910012: a collaboration before a colon
			in: "SDLCQ Collaboration: F. Antonuccio, U. Trittmann (Ohio State University), J. Hiller (University of Minnesota-Duluth)",
			want: []Author{
				{Name: "SDLCQ Collaboration", Affiliations: []string{"Ohio State University"}},
				{Name: "F. Antonuccio", Affiliations: []string{"Ohio State University"}},
				{Name: "U. Trittmann", Affiliations: []string{"Ohio State University"}},
				{Name: "J. Hiller", Affiliations: []string{"University of Minnesota-Duluth"}},
			},
		},
		{ // Paperscape hep-th/9110037 and hep-lat/9211040
			in:   "C.Itzykson,J.-B.Zuber,L.O'raifeartaigh,B.Al.Berg,UKQCD Collaboration,presented by Alan D.Simpson",
			want: []Author{{Name: "C. Itzykson"}, {Name: "J.-B. Zuber"}, {Name: "L. O'raifeartaigh"}, {Name: "B. Al. Berg"}, {Name: "UKQCD Collaboration"}, {Name: "Alan D. Simpson"}},
		},
		{ // hep-th/9501051 ties, hep-th/9201031 en dash
			in:   `N.~Shtykov and D.~V.~Vassilevich, M.~Ruiz--Altaba`,
			want: []Author{{Name: "N. Shtykov"}, {Name: "D. V. Vassilevich"}, {Name: "M. Ruiz-Altaba"}},
		},
		{ // hep-th/9603096: a stray closing parenthesis
			in:   "Tamiaki Yoneya (University of Tokyo, Komaba))",
			want: []Author{{Name: "Tamiaki Yoneya", Affiliations: []string{"University of Tokyo, Komaba"}}},
		},
		{ // an unclosed parenthesis runs to the end
			in:   "A. Smith (CERN",
			want: []Author{{Name: "A. Smith", Affiliations: []string{"CERN"}}},
		},
		{in: "", want: nil},
	}
	for _, tt := range tests {
		got, truncated := ParseByline(tt.in)
		if !reflect.DeepEqual(got, tt.want) || truncated != tt.truncated {
			t.Errorf("ParseByline(%q) = %+v, %v, want %+v, %v", tt.in, got, truncated, tt.want, tt.truncated)
		}
	}
}

func TestSplit(t *testing.T) {
	tests := []struct{ in, given, family string }{
		{"J.-B. Zuber", "J.-B.", "Zuber"},
		{"Jean-Bernard Zuber", "Jean-Bernard", "Zuber"},
		{"C.Itzykson", "C.", "Itzykson"},
		{"B.Al.Berg", "B. Al.", "Berg"},
		{"Ludwig van Beethoven", "Ludwig", "van Beethoven"},
		{"Floris van der Tak", "Floris", "van der Tak"},
		{"Paolo Di Vecchia", "Paolo", "Di Vecchia"},
		{"M. Lopez de Haro", "M. Lopez", "de Haro"},
		{"Neal J. Evans II", "Neal J.", "Evans"},
		{"S. James Gates Jr.", "S. James", "Gates"},
		{"W. D. Linch, III.", "W. D.", "Linch"},
		{"The BABAR Collaboration", "", "The BABAR Collaboration"},
		{"Sudha", "", "Sudha"},
		{`P\'eter E. Frenkel`, "Péter E.", "Frenkel"},
		{"", "", ""},
	}
	for _, tt := range tests {
		if given, family := Split(tt.in); given != tt.given || family != tt.family {
			t.Errorf("Split(%q) = %q, %q, want %q, %q", tt.in, given, family, tt.given, tt.family)
		}
	}
}

func TestKeys(t *testing.T) {
	tests := []struct{ in, key, family string }{
		{"J.-B. Zuber", "j b zuber", "zuber"},
		{"Jean-Bernard Zuber", "jean bernard zuber", "zuber"},
		{"C.Itzykson", "c itzykson", "itzykson"},
		{"C. Balázs", "c balazs", "balazs"},
		{"Mikkel Øbro", "mikkel obro", "obro"},
		{"Miłosz Roßhammer", "milosz rosshammer", "rosshammer"},
		{"Ludwig van Beethoven", "ludwig van beethoven", "van beethoven"},
		{"P. T. O'Brien", "p t o brien", "o brien"},
		{"S. James Gates Jr.", "s james gates", "gates"},
		{"SHUQING LIN", "shuqing lin", "lin"},
		{"Balázs Ö. Kovács Jr.", "balazs o kovacs", "kovacs"},
	}
	for _, tt := range tests {
		if key, family := Keys(tt.in); key != tt.key || family != tt.family {
			t.Errorf("Keys(%q) = %q, %q, want %q, %q", tt.in, key, family, tt.key, tt.family)
		}
	}
}

func TestInitialsOnly(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"J.-B. Zuber", true},
		{"Jean-Bernard Zuber", false},
		{"Jean B. Zuber", false},
		{"Yu. N. Kosovtsov", true},
		{"S C Tiwari", true},
		{"Tanya M Elliott", false},
		{"Sudha", false},
	}
	for _, tt := range tests {
		if got := InitialsOnly(tt.in); got != tt.want {
			t.Errorf("InitialsOnly(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestCompatible(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"J. Zuber", "Jean-Bernard Zuber", true},
		{"J.-B. Zuber", "Jean-Bernard Zuber", true},
		{"J.-B. Zuber", "Jean B. Zuber", true},
		{"J. Zuber", "K. Zuber", false},
		{"Jean Zuber", "John Zuber", false},
		{"J.-B. Zuber", "J.-P. Zuber", false},
		{"Xiao-Lin Chen", "Xiaolin Chen", true},
		{"Al. L. Efros", "A. L. Efros", true},
		{"Yu. N. Kosovtsov", "Yuri Kosovtsov", true},
		{"C. Balázs", `C. Bal\'azs`, true},
		{"C. Balazs", "Csaba Balázs", true},
		{"Zuber", "Jean-Bernard Zuber", true},
		{"Jean Zuber", "Jean Zubers", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := Compatible(tt.a, tt.b); got != tt.want {
			t.Errorf("Compatible(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Compatible(tt.b, tt.a); got != tt.want {
			t.Errorf("Compatible(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Balázs", []string{"balazs"}},
		{"Shuqing Lin", []string{"shuqing", "lin"}},
		{"Groß-Øbro, Łukasz", []string{"gross", "obro", "lukasz"}},
		{"李 Wei", []string{"李", "wei"}},
		{" -- ", nil},
	}
	for _, tt := range tests {
		if got := Words(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParseByline(f *testing.F) {
	for _, s := range []string{
		`C. Bal\'azs, E. L. Berger (1,2) and C.-P. Yuan (2) ((1) A, (2) B)`,
		"A (1 X; 2 Y) B (with an appendix by C)",
		`{\"{o}} \c \a '`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		authors, _ := ParseByline(s)
		for _, a := range authors {
			if a.Name == "" {
				t.Errorf("ParseByline(%q) has an author without a name", s)
			}
			if _, family := Keys(a.Name); family != "" && !Compatible(a.Name, a.Name) {
				t.Errorf("Compatible(%q, %q) = false, want true", a.Name, a.Name)
			}
		}
	})
}
