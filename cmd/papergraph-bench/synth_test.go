package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// No researcher is given more than maxPerYear papers in a calendar year,
// and the cap binds: without it the top rank would have thousands.
func TestSynthCapsPapersPerYear(t *testing.T) {
	m, err := demoModel()
	if err != nil {
		t.Fatal(err)
	}
	g := newGenerator(m, 30_000, 1)
	g.month = 1000 // 30 months: 2015, 2016 and half of 2017
	perYear := map[[2]int]int{}
	var p paper
	for i := range 30_000 {
		g.paper(i, &p)
		for _, k := range p.authors {
			perYear[[2]int{i / g.month / 12, k}]++
		}
	}
	for yk, n := range perYear {
		if n > maxPerYear {
			t.Errorf("researcher %d has %d papers in %d, want at most %d", yk[1], n, 2015+yk[0], maxPerYear)
		}
	}
	for y := range 2 {
		if got := perYear[[2]int{y, 0}]; got != maxPerYear {
			t.Errorf("the top researcher has %d papers in %d, want the cap, %d", got, 2015+y, maxPerYear)
		}
	}
}

// The increment holds the asked-for new papers, after the corpus's last
// one, and second versions of corpus papers with their authors; imported
// after the corpus it adds the new papers and updates the revised.
func TestSynthIncrement(t *testing.T) {
	papers := 2000
	if testing.Short() {
		papers = 500
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"synth", "--papers", itoa(papers), "--seed", "7", "--increment", "40", "--revised", "10", "--out", dir}, &out, &errOut); err != nil {
		t.Fatalf("synth: %v\n%s", err, errOut.String())
	}
	want := "papergraph import kaggle " + filepath.Join(dir, incrementFile)
	if !strings.Contains(out.String(), "\n"+want+"\n") {
		t.Errorf("synth's output lacks the line %q:\n%s", want, out.String())
	}
	corpus := map[string]kaggleLine{}
	last := ""
	for line := range strings.Lines(string(read(t, filepath.Join(dir, papersFile)))) {
		var rec kaggleLine
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		corpus[rec.ID], last = rec, rec.ID
	}
	var added, revised []string
	for line := range strings.Lines(string(read(t, filepath.Join(dir, incrementFile)))) {
		var rec kaggleLine
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		old, ok := corpus[rec.ID]
		switch {
		case !ok && len(rec.Versions) == 1 && rec.ID > last:
			added = append(added, rec.ID)
		case ok && len(rec.Versions) == 2 && rec.Versions[1].Version == "v2" && rec.Authors == old.Authors:
			revised = append(revised, rec.ID)
		default:
			t.Errorf("increment record %s (%d versions) is neither a new paper nor a second version of one", rec.ID, len(rec.Versions))
		}
	}
	if len(added) != 40 || len(revised) != 10 {
		t.Fatalf("increment: %d new papers and %d revised, want 40 and 10", len(added), len(revised))
	}
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		importCorpus(t, bdb, dir)
		if _, err := ingest.Import(ctx, bdb, ingest.Options{Format: mustFormat(t, "kaggle"), Paths: []string{filepath.Join(dir, incrementFile)}}); err != nil {
			t.Fatal(err)
		}
		if n, err := bdb.NewSelect().Table("papers").Count(ctx); err != nil || n != int64(papers)+40 {
			t.Errorf("%d papers after the increment (%v), want %d", n, err, papers+40)
		}
		if n, err := bdb.NewSelect().Table("papers").Where("version = 2").Where("arxiv_id IN (?)", bun.List(revised)).Count(ctx); err != nil || n != 10 {
			t.Errorf("%d revised papers at version 2 (%v), want 10", n, err)
		}
	})
}

func mustFormat(t *testing.T, name string) ingest.Format {
	t.Helper()
	f, ok := ingest.FormatByName(name)
	if !ok {
		t.Fatalf("no format %q", name)
	}
	return f
}
