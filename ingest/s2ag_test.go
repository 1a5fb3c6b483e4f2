package ingest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db"
)

func TestS2AG(t *testing.T) {
	recs, _, bad := readFile(t, S2AG, "testdata/s2ag.jsonl")
	if len(bad) != 0 {
		t.Fatalf("bad records: %v", bad)
	}
	want := []Record{
		&Paper{
			S2ID:         "223588394",
			DOI:          "10.3760/cma.j.issn.2095-1485.2006.01.019",
			Title:        "Attaching Importance to Mental Quality Education in Clinical Practice",
			Published:    time.Date(2006, 2, 28, 0, 0, 0, 0, time.UTC),
			CitedByCount: new(0), CitedBySource: db.SourceS2,
			Authors: []Author{
				{Name: "粟毅", S2ID: "101039255"},
				{Name: "吴亚梅", S2ID: "2096896523"},
			},
			AuthorsComplete: true,
		},
		&Paper{ // no DOI, and a year but no date
			S2ID:         "173519558",
			Title:        "Der Trust als Kläger im deutschen Zivilprozess",
			CitedByCount: new(0), CitedBySource: db.SourceS2,
			Authors: []Author{
				{Name: "Stephan Wilske", S2ID: "2037399204"},
				{Name: "S. Meyer", S2ID: "143671376"},
			},
			AuthorsComplete: true,
		},
		&Researcher{Name: "Christina Cottiero", S2ID: "119387837", HIndex: new(2), CitationCount: new(41), WorksCount: new(3), FiguresSource: db.SourceS2},
		&Researcher{Name: "M. Amano", S2ID: "83553366", HIndex: new(2), CitationCount: new(31), WorksCount: new(5), FiguresSource: db.SourceS2},
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

// TestS2AGIDs covers the external ids of papers and authors, which the
// sample records happen not to have.
func TestS2AGIDs(t *testing.T) {
	tests := []struct {
		name, line string
		want       Record
	}{
		{"arXiv id", `{"corpusid": 1, "externalids": {"ArXiv": "hep-th/9407087", "DOI": "10.1016/0550-3213(94)00429-D"}}`,
			&Paper{S2ID: "1", ArxivID: "hep-th/9407087", DOI: "10.1016/0550-3213(94)00429-d", AuthorsComplete: true}},
		{"arXiv DOI", `{"corpusid": 2, "externalids": {"ArXiv": null, "DOI": "10.48550/arXiv.2111.04949"}}`,
			&Paper{S2ID: "2", ArxivID: "2111.04949", AuthorsComplete: true}},
		{"ORCID", `{"authorid": "3", "name": "A. Author", "externalids": {"ORCID": "0000-0002-1825-0097"}}`,
			&Researcher{Name: "A. Author", S2ID: "3", ORCID: "0000-0002-1825-0097"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, _, bad := readFile(t, S2AG, tempFile(t, "s2.jsonl", tt.line+"\n"))
			if len(recs) != 1 || len(bad) != 0 {
				t.Fatalf("got %d records and bad %v, want one record", len(recs), bad)
			}
			if !reflect.DeepEqual(recs[0], tt.want) {
				t.Errorf("got %+v, want %+v", recs[0], tt.want)
			}
		})
	}
}

func TestS2AGBadRecords(t *testing.T) {
	tests := []struct {
		name, line, reason string
	}{
		{"truncated", `{"corpusid":223588394,"externalids":{"ACL":null,`, "invalid JSON: unexpected end of JSON input"},
		{"unknown", `{"paperId": "061be346f7c4bcfe3d0123d0783e965ebccd5540"}`, "not a record of an S2AG dataset"},
		{"bad date", `{"corpusid": 1, "publicationdate": "2006-02-30"}`,
			`publicationdate: parsing time "2006-02-30": day out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := withLine(t, "s2ag.jsonl", 3, tt.line)
			recs, _, bad := readFile(t, S2AG, path)
			if len(recs) != 4 {
				t.Errorf("got %d records, want the 4 good ones", len(recs))
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

func TestS2AGOtherDataset(t *testing.T) {
	recs, _, bad := readFile(t, S2AG, "testdata/s2ag-citations.jsonl")
	if len(recs) != 0 {
		t.Errorf("got %d records, want none", len(recs))
	}
	want := "testdata/s2ag-citations.jsonl:1: s2ag citations dataset is not supported; import papers and authors"
	if len(bad) != 1 || bad[0].Error() != want {
		t.Errorf("got %v, want one %q", bad, want)
	}
}
