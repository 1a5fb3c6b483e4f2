package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The lines between which report writes its tables into a page, so that
// the page's figures are always those of the committed JSON files.
const (
	reportBegin = "<!-- papergraph-bench report: begin; generated from docs/perf/*.json, do not edit -->"
	reportEnd   = "<!-- papergraph-bench report: end -->"
)

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", stderr)
	write := fs.String("write", "", "replace the tables between report's marker lines in `FILE` instead of printing them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("report needs run's or peer's JSON files")
	}
	runFiles, peerJSON := splitReportFiles(fs.Args())
	var parts []reportPart
	if len(runFiles) > 0 {
		runs, err := readRuns(runFiles)
		if err != nil {
			return err
		}
		parts = append(parts, reportPart{reportBegin, reportEnd, reportTables(runs)})
	}
	if len(peerJSON) > 0 {
		peers, err := readPeers(peerJSON)
		if err != nil {
			return err
		}
		parts = append(parts, reportPart{peerReportBegin, peerReportEnd, peerTables(peers)})
	}
	if *write == "" {
		for _, p := range parts {
			if _, err := io.WriteString(stdout, p.tables); err != nil {
				return err
			}
		}
		return nil
	}
	page, err := os.ReadFile(*write)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if page, err = replaceBetween(page, p.begin, p.end, p.tables); err != nil {
			return fmt.Errorf("%s: %w", *write, err)
		}
	}
	return os.WriteFile(*write, page, 0o644)
}

// reportPart is tables and the marker lines they go between.
type reportPart struct{ begin, end, tables string }

// replaceReport puts run's tables between their marker lines of page.
func replaceReport(page []byte, tables string) ([]byte, error) {
	return replaceBetween(page, reportBegin, reportEnd, tables)
}

// replaceBetween puts tables between the marker lines begin and end of
// page.
func replaceBetween(page []byte, begin, end, tables string) ([]byte, error) {
	before, rest, ok := bytes.Cut(page, []byte(begin+"\n"))
	if !ok {
		return nil, fmt.Errorf("no line %q", begin)
	}
	_, after, ok := bytes.Cut(rest, []byte(end))
	if !ok {
		return nil, fmt.Errorf("no line %q after the first marker", end)
	}
	return slices.Concat(before, []byte(begin+"\n"), []byte(tables), []byte(end), after), nil
}

// reportTables renders a Markdown table per run, the smaller archives
// first: a row per operation, and for each concurrency the p50 and p99
// latency and the successful requests a second.
func reportTables(runs []fileRun) string {
	runs = slices.Clone(runs)
	slices.SortStableFunc(runs, func(a, b fileRun) int {
		return cmp.Or(cmp.Compare(a.Papers, b.Papers), cmp.Compare(a.Label, b.Label))
	})
	var b strings.Builder
	for _, r := range runs {
		var clients []int
		for _, res := range r.Results {
			if !slices.Contains(clients, res.Clients) {
				clients = append(clients, res.Clients)
			}
		}
		slices.Sort(clients)
		fmt.Fprintf(&b, "\n%s, %s synthetic papers, %s a cell (`%s`):\n\n| operation |", cmp.Or(r.Label, "unlabelled"),
			thousands(r.Papers), seconds(r.DurationS), filepath.Base(r.file))
		for _, c := range clients {
			fmt.Fprintf(&b, " p50 ms, %[1]d | p99 ms, %[1]d | req/s, %[1]d |", c)
		}
		b.WriteString("\n|---|" + strings.Repeat("--:|", 3*len(clients)) + "\n")
		var failed []string
		for _, op := range operations(r.Results) {
			fmt.Fprintf(&b, "| %s |", op)
			for _, c := range clients {
				i := slices.IndexFunc(r.Results, func(res result) bool { return res.Operation == op && res.Clients == c })
				if i < 0 {
					b.WriteString(" | | |")
					continue
				}
				res := r.Results[i]
				fmt.Fprintf(&b, " %s | %s | %s |", figure(res.P50Ms), figure(res.P99Ms), figure(res.Throughput))
				if res.Errors > 0 {
					failed = append(failed, fmt.Sprintf("%s at %d clients: %d of %d", op, c, res.Errors, res.Requests))
				}
			}
			b.WriteString("\n")
		}
		if len(failed) > 0 {
			fmt.Fprintf(&b, "\nFailed requests: %s.\n", strings.Join(failed, "; "))
		}
	}
	b.WriteString("\n")
	return b.String()
}

// operations lists the operations of rs in the order run measured them.
func operations(rs []result) []string {
	var ops []string
	for _, r := range rs {
		if !slices.Contains(ops, r.Operation) {
			ops = append(ops, r.Operation)
		}
	}
	return ops
}

// figure writes v to three significant digits, or whole when larger.
func figure(v float64) string {
	switch {
	case v >= 100:
		return thousands(int(v + 0.5))
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func seconds(s float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", s), ".0") + " s"
}
