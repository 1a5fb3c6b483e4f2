package ingest

import (
	"reflect"
	"slices"
	"testing"
)

func TestROR(t *testing.T) {
	recs, _, bad := readFile(t, ROR, "testdata/ror.jsonl")
	if len(bad) != 0 {
		t.Fatalf("bad records: %v", bad)
	}
	want := []*Institution{
		{ // v2: the display name is also a label and is not repeated.
			ROR: "000025p04", Name: "Thailand Science Research and Innovation", Country: "TH",
			Types: []string{"funder", "government"}, Status: "active", Established: 2019,
			Names: []InstitutionName{
				{"TSRI", "acronym"},
				{"สำนักงานคณะกรรมการส่งเสริมวิทยาศาสตร์ วิจัยและนวัตกรรม", "label"},
			},
		},
		{ // v2: "IESE" is typed both acronym and alias.
			ROR: "00v9d4z37", Name: "IESE Business School", Country: "ES",
			Types: []string{"education"}, Status: "active", Established: 1958,
			Names: []InstitutionName{
				{"IESE", "acronym"},
				{"IESE Business School, Universidad de Navarra", "alias"},
				{"IESE Business School, University of Navarra", "alias"},
				{"IESE Universidad de Navarra", "alias"},
				{"IESE University of Navarra", "alias"},
			},
		},
		{ // v2: withdrawn, established null.
			ROR: "00wb5fq03", Name: "University of Belgrade – Faculty of Biology", Country: "RS",
			Types: []string{"education"}, Status: "withdrawn",
			Names: []InstitutionName{
				{"Biološki fakultet Univerziteta u Beogradu", "alias"},
				{"Univerzitet u Beogradu – Biološki fakultet", "label"},
				{"Универзитет у Београду – Биолошки факултет", "label"},
			},
		},
		{ // v1: capitalised types.
			ROR: "000050t83", Name: "Electronic Navigation Research Institute", Country: "JP",
			Types: []string{"facility"}, Status: "active", Established: 1961,
			Names: []InstitutionName{
				{"電子航法研究所", "label"},
				{"でんしこうほうけんきゅうじょ", "alias"},
				{"デンシコウホウケンキュウジョ", "alias"},
				{"Denshi Kōhō Kenkyūjo", "alias"},
				{"Denshi Koho Kenkyujo", "alias"},
				{"ENRI", "acronym"},
			},
		},
		{
			ROR: "0009xxz90", Name: "Technological Educational Institute of Eastern Macedonia and Thrace", Country: "GR",
			Types: []string{"education"}, Status: "inactive", Established: 1976,
			Names: []InstitutionName{
				{"Ανώτατο Τεχνολογικό Εκπαιδευτικό Ίδρυμα Ανατολικής Μακεδονίας και Θράκης", "label"},
				{"Technological Educational Institute of Kavala", "alias"},
				{"TEI EMT", "acronym"},
				{"TEIKAV", "acronym"},
			},
		},
	}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if !reflect.DeepEqual(r, want[i]) {
			t.Errorf("record %d:\ngot  %+v\nwant %+v", i+1, r, want[i])
		}
	}
}

func TestRORBadRecords(t *testing.T) {
	tests := []struct {
		name, line, reason string
	}{
		{"truncated", `{"id": "https://ror.org/05dxps055", "name": "Calif`, "invalid JSON: unexpected end of JSON input"},
		{"not ROR", `{"id": "https://openalex.org/I27837315", "display_name": "University of Michigan"}`,
			`id "https://openalex.org/I27837315" is not a ROR id`},
		{"no id", `{"name": "Caltech"}`, `id "" is not a ROR id`},
		{"no name", `{"id": "https://ror.org/05dxps055"}`, "neither names (schema v2) nor name (schema v1)"},
		{"no display name", `{"id": "https://ror.org/05dxps055", "names": [{"value": "Caltech", "types": ["acronym"]}]}`,
			"no ror_display name"},
		{"not an object", `["https://ror.org/05dxps055"]`,
			"invalid JSON: json: cannot unmarshal array into Go value of type ingest.rorRecord"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := withLine(t, "ror.jsonl", 3, tt.line)
			recs, _, bad := readFile(t, ROR, path)
			if len(recs) != 5 {
				t.Errorf("got %d records, want the 5 good ones", len(recs))
			}
			if got := badLines(bad); !slices.Equal(got, []int{3}) {
				t.Fatalf("got bad lines %v, want [3]", got)
			}
			if got, want := bad[0].Error(), path+":3: "+tt.reason; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}
