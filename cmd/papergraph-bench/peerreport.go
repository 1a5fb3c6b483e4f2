package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The peer's part of report: its JSON files (named peer-*.json) are
// rendered between marker lines of their own.
const (
	peerReportBegin = "<!-- papergraph-bench report peer: begin; generated from docs/perf/peer-*.json, do not edit -->"
	peerReportEnd   = "<!-- papergraph-bench report peer: end -->"
)

// isPeerFile tells peer's JSON files from run's by name.
func isPeerFile(file string) bool { return strings.HasPrefix(filepath.Base(file), "peer-") }

// filePeer is one peer report and the file it came from.
type filePeer struct {
	file string
	peerReport
}

// readPeers reads peer's JSON files.
func readPeers(files []string) ([]filePeer, error) {
	var out []filePeer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		p := filePeer{file: f}
		if err := json.Unmarshal(b, &p.peerReport); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(p.Results) == 0 || p.CheckedAnswers == 0 {
			return nil, fmt.Errorf("%s: no results or no answers compared: not the JSON papergraph-bench peer prints", f)
		}
		out = append(out, p)
	}
	return out, nil
}

// peerTables renders each peer report as two Markdown tables: each
// server's figures cell by cell, and papergraph's ratios to the peers.
func peerTables(reps []filePeer) string {
	var b strings.Builder
	for _, p := range reps {
		fmt.Fprintf(&b, "\n%d round(s) of %s a cell, PostgreSQL %s, Node %s", p.Rounds, seconds(p.DurationS), p.PostgreSQL, p.Node)
		if p.Node5 != "" {
			fmt.Fprintf(&b, " (%s for PostGraphile 5)", p.Node5)
		}
		fmt.Fprintf(&b, ", %s answers compared first; load average %s before, %s after (`%s`):\n\n",
			thousands(p.CheckedAnswers), p.LoadAvgBefore, p.LoadAvgAfter, filepath.Base(p.file))
		b.WriteString("| cell | server | req/s | p50 ms | p99 ms | CPU ms a request (server + PostgreSQL) |\n|---|---|--:|--:|--:|--:|\n")
		var failed []string
		for _, r := range p.Results {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s (%s + %s) |\n", r.Cell, r.Server, figure(r.Throughput), figure(r.P50Ms),
				figure(r.P99Ms), figure(r.CPUMsPerReq), figure(r.ServerCPUMs), figure(r.PGCPUMs))
			if r.Errors > 0 {
				failed = append(failed, fmt.Sprintf("%s, %s: %d of %d", r.Server, r.Cell, r.Errors, r.Requests))
			}
		}
		if len(failed) > 0 {
			fmt.Fprintf(&b, "\nFailed requests: %s.\n", strings.Join(failed, "; "))
		}
		b.WriteString("\n| cell | req/s papergraph PG / PostGraphile 5 (rounds) | / PostGraphile 4 | p99 PG / PostGraphile 5 | CPU a request PostGraphile 5 / PG | req/s SQLite / PG | p99 one address / ten, PG, SQLite |\n|---|--:|--:|--:|--:|--:|--:|\n")
		for _, r := range p.Ratios {
			rounds := make([]string, len(r.PGOverPeer5Rounds))
			for i, x := range r.PGOverPeer5Rounds {
				rounds[i] = fmt.Sprintf("%.2f", x)
			}
			ten := ""
			if r.Cell.OneAddress {
				ten = fmt.Sprintf("%.2f, %.2f", r.P99PGOverTen, r.P99SQLiteOverTen)
			}
			fmt.Fprintf(&b, "| %s | %.2f (%s) | %.2f | %.2f | %.2f | %.2f | %s |\n", r.Cell, r.PGOverPeer5, strings.Join(rounds, ", "),
				r.PGOverPeer, r.P99PGOverPeer5, r.Peer5CPUOverPG, r.SQLiteOverPG, ten)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// splitReportFiles separates peer's files from run's, each in the order
// given.
func splitReportFiles(files []string) (runs, peers []string) {
	for _, f := range files {
		if isPeerFile(f) {
			peers = append(peers, f)
		} else {
			runs = append(runs, f)
		}
	}
	return runs, slices.Clip(peers)
}
