package ingest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// readFile runs f over the file at path the way the import command does
// and returns the records, where each was found, and the bad records.
func readFile(t *testing.T, f Format, path string) ([]Record, []Position, []*RecordError) {
	t.Helper()
	var (
		recs []Record
		pos  []Position
		bad  []*RecordError
		n    atomic.Int64
	)
	sink := Sink{
		Record: func(r Record, p Position) error {
			recs = append(recs, r)
			pos = append(pos, p)
			return nil
		},
		Bad: func(e *RecordError) error {
			bad = append(bad, e)
			return nil
		},
	}
	err := eachEntry(nil, path, f, &n, func(e Entry) error { return f.Read(context.Background(), e, sink) })
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return recs, pos, bad
}

// tempFile writes content to a file in a fresh temporary directory and
// returns its path.
func tempFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// withLine copies the testdata file name with line inserted so that it
// becomes line number at, and returns the copy's path.
func withLine(t *testing.T, name string, at int, line string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := slices.Insert(strings.SplitAfter(string(data), "\n"), at-1, line+"\n")
	return tempFile(t, name, strings.Join(lines, ""))
}

// recordLines returns the line numbers of positions.
func recordLines(pos []Position) []int {
	var n []int
	for _, p := range pos {
		n = append(n, p.Line)
	}
	return n
}

// badLines returns the line numbers of errs.
func badLines(errs []*RecordError) []int {
	var lines []int
	for _, e := range errs {
		lines = append(lines, e.Pos.Line)
	}
	return lines
}

// checkVersions checks what every arXiv-metadata reader gives of a paper:
// its title, latest version and the dates of its first and latest version.
func checkVersions(t *testing.T, id string, p *Paper, title string, version int, published, updated time.Time) {
	t.Helper()
	if p.Title != title {
		t.Errorf("%s: got title %q, want %q", id, p.Title, title)
	}
	if p.Version != version || !p.Published.Equal(published) || !p.Updated.Equal(updated) {
		t.Errorf("%s: got v%d %v..%v, want v%d %v..%v", id, p.Version, p.Published, p.Updated, version, published, updated)
	}
}
