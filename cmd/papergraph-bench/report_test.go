package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPerformancePageMatchesJSON holds docs/performance.md's generated
// tables to the run files committed beside it, so that the page states
// no figure the JSON does not hold.
func TestPerformancePageMatchesJSON(t *testing.T) {
	files, err := filepath.Glob("../../docs/perf/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no run files in docs/perf (%v)", err)
	}
	runFiles, peerJSON := splitReportFiles(files)
	runs, err := readRuns(runFiles)
	if err != nil {
		t.Fatal(err)
	}
	peers, err := readPeers(peerJSON)
	if err != nil || len(peers) == 0 {
		t.Fatalf("no peer files in docs/perf (%v)", err)
	}
	page, err := os.ReadFile("../../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := replaceReport(page, reportTables(runs))
	if err != nil {
		t.Fatal(err)
	}
	if want, err = replaceBetween(want, peerReportBegin, peerReportEnd, peerTables(peers)); err != nil {
		t.Fatal(err)
	}
	if string(page) != string(want) {
		t.Error("docs/performance.md's tables differ from docs/perf/*.json; run\n" +
			"\tgo run ./cmd/papergraph-bench report --write docs/performance.md docs/perf/*.json")
	}
}

func TestReportTables(t *testing.T) {
	run := fileRun{file: "/tmp/x/pg-75k.json", runReport: runReport{
		DurationS: 5, Label: "PostgreSQL", Papers: 75000, Synthetic: true,
		Results: []result{
			{Operation: "paper", Clients: 1, Requests: 900, P50Ms: 1.234, P99Ms: 12.34, Throughput: 180.4},
			{Operation: "paper", Clients: 10, Requests: 3000, P50Ms: 9.5, P99Ms: 2409.6, Throughput: 600},
			{Operation: "export", Clients: 10, Requests: 7, P50Ms: 1500, P99Ms: 2000, Throughput: 1.4, Errors: 2},
		},
	}}
	got := reportTables([]fileRun{run})
	want := `
PostgreSQL, 75,000 synthetic papers, 5 s a cell (` + "`pg-75k.json`" + `):

| operation | p50 ms, 1 | p99 ms, 1 | req/s, 1 | p50 ms, 10 | p99 ms, 10 | req/s, 10 |
|---|--:|--:|--:|--:|--:|--:|
| paper | 1.23 | 12.3 | 180 | 9.50 | 2,410 | 600 |
| export | | | | 1,500 | 2,000 | 1.40 |

Failed requests: export at 10 clients: 2 of 7.

`
	if got != want {
		t.Errorf("reportTables:\n%s\nwant:\n%s", got, want)
	}
}

func TestReplaceReport(t *testing.T) {
	page := "# P\n\nbefore\n" + reportBegin + "\nold\n" + reportEnd + "\nafter\n"
	got, err := replaceReport([]byte(page), "\nnew\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# P\n\nbefore\n" + reportBegin + "\n\nnew\n" + reportEnd + "\nafter\n"; string(got) != want {
		t.Errorf("replaceReport = %q, want %q", got, want)
	}
	for _, bad := range []string{"no markers\n", reportBegin + "\nno end\n", reportEnd + "\n" + reportBegin + "\n"} {
		if _, err := replaceReport([]byte(bad), "x"); err == nil || !strings.Contains(err.Error(), "no line") {
			t.Errorf("replaceReport(%q): err %v, want one naming the missing marker", bad, err)
		}
	}
}
