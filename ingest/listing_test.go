package ingest

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestListing(t *testing.T) {
	recs, pos, bad := readFile(t, Listing, "testdata/listing.jsonl.gz")
	if len(bad) != 0 {
		t.Fatalf("got bad records %v, want none", bad)
	}
	if got, want := recordLines(pos), []int{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("got records on lines %v, want %v", got, want)
	}
	papers := paperByID(t, recs)
	tests := []struct {
		id         string
		title      string
		published  time.Time
		categories []string
		authors    []string
		comments   string
	}{
		{
			// Listed in 2025-10, years after it was submitted: the listing
			// date is not its publication. MSC and ACM classes pass through.
			id:         "1812.06145",
			title:      "Improving the Performance of Unimodal Dynamic Hand-Gesture Recognition with Multimodal Training",
			categories: []string{"cs.CV", "cs.AI", "cs.HC", "cs.LG", "stat.ML", "68T45, 62H30", "I.5.3; I.2.10"},
			authors:    []string{"Mahdi Abavisani", "Hamid Reza Vaezi Joze", "Vishal M. Patel"},
		},
		{
			// Submitted in March, first listed on 2 April.
			id:         "2503.22516",
			title:      "Assessing Foundation Models for Sea Ice Type Segmentation in Sentinel-1 SAR Imagery",
			published:  time.Date(2025, 4, 2, 0, 0, 0, 0, time.UTC),
			categories: []string{"cs.LG", "cs.CV"},
			authors:    []string{"Samira Alkaee Taleghan", "Morteza Karimzadeh", "Andrew P. Barrett", "Walter N. Meier", "Farnoush Banaei-Kashani"},
		},
		{
			id:         "2507.00070",
			title:      "An efficient plant disease detection using transfer learning approach",
			published:  time.Date(2025, 7, 2, 0, 0, 0, 0, time.UTC),
			categories: []string{"cs.CV", "cs.AI"},
			authors:    []string{"Bosubabu Sambana", "Hillary Sunday Nnadi", "Mohd Anas Wajid", "Nwosu Ogochukwu Fidelia", "Claudia Camacho-Zuñiga", "Henry Dozie Ajuzie", "Edeh Michael Onyema"},
			comments:   "15 pages , 4 figures. Scientific Reports 2025",
		},
	}
	for _, tt := range tests {
		p := papers[tt.id]
		if p == nil {
			t.Errorf("%s: missing", tt.id)
			continue
		}
		if p.Title != tt.title || p.Comments != tt.comments {
			t.Errorf("%s: got title %q comments %q, want %q %q", tt.id, p.Title, p.Comments, tt.title, tt.comments)
		}
		if !p.Published.Equal(tt.published) {
			t.Errorf("%s: got published %v, want %v", tt.id, p.Published, tt.published)
		}
		if !slices.Equal(p.Categories, tt.categories) {
			t.Errorf("%s: got categories %q, want %q", tt.id, p.Categories, tt.categories)
		}
		if got := authorNames(p.Authors); !slices.Equal(got, tt.authors) || !p.AuthorsComplete {
			t.Errorf("%s: got authors %q complete %v, want %q complete", tt.id, got, p.AuthorsComplete, tt.authors)
		}
		if p.Abstract == "" {
			t.Errorf("%s: got no abstract", tt.id)
		}
	}
}

func TestFirstListed(t *testing.T) {
	tests := []struct {
		id     string
		listed string
		want   bool
	}{
		{"2503.22516", "2025-03-31", true},
		{"2503.22516", "2025-04-30", true},
		{"2503.22516", "2025-05-01", false},
		{"2503.22516", "2025-02-28", false},
		{"1812.06145", "2025-10-13", false},
	}
	for _, tt := range tests {
		listed, err := time.Parse(time.DateOnly, tt.listed)
		if err != nil {
			t.Fatal(err)
		}
		if got := firstListed(tt.id, listed); got != tt.want {
			t.Errorf("firstListed(%q, %s) = %v, want %v", tt.id, tt.listed, got, tt.want)
		}
	}
}

func TestListingBrokenFiles(t *testing.T) {
	gz, err := os.ReadFile("testdata/listing.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content string
		want    error
	}{
		{"empty", "", ErrEmptyFile},
		{"truncated gzip", string(gz[:len(gz)/2]), ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tempFile(t, "papers.jsonl.gz", tt.content)
			var read atomic.Int64
			sink := Sink{
				Record: func(Record, Position) error { return nil },
				Bad:    func(*RecordError) error { return nil },
			}
			err := eachEntry(nil, path, Listing, &read, func(e Entry) error { return Listing.Read(context.Background(), e, sink) })
			if !errors.Is(err, tt.want) {
				t.Errorf("got error %v, want %v", err, tt.want)
			}
		})
	}
}

// BenchmarkListingRead reads the whole daily listing file named by
// PAPERGRAPH_BENCH_LISTING (shared/data/daily-arxiv-cs/papers.jsonl.gz)
// and reports the rate in papers per second.
func BenchmarkListingRead(b *testing.B) {
	path := os.Getenv("PAPERGRAPH_BENCH_LISTING")
	if path == "" {
		b.Skip("PAPERGRAPH_BENCH_LISTING is not set")
	}
	var papers, bad int
	sink := Sink{
		Record: func(Record, Position) error { papers++; return nil },
		Bad:    func(*RecordError) error { bad++; return nil },
	}
	for b.Loop() {
		var read atomic.Int64
		err := eachEntry(nil, path, Listing, &read, func(e Entry) error { return Listing.Read(context.Background(), e, sink) })
		if err != nil {
			b.Fatal(err)
		}
	}
	if bad > 0 {
		b.Errorf("got %d bad records, want 0", bad)
	}
	b.ReportMetric(float64(papers)/b.Elapsed().Seconds(), "papers/s")
}
