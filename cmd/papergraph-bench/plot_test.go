package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeRun writes a file as run prints it, of label (none if empty) at
// papers, with a result at 1 and 10 clients for each operation of ops,
// and returns its path.
func writeRun(t *testing.T, dir, name, label string, papers int, ops ...string) string {
	t.Helper()
	var rs []string
	for _, c := range []int{1, 10} {
		for i, op := range ops {
			p50 := float64(papers) / 1000 * float64(i+1) * float64(c)
			rs = append(rs, fmt.Sprintf(`{"operation": %q, "clients": %d, "requests": 100, "p50_ms": %g, "p99_ms": %g, "throughput_per_s": 50, "errors": 0}`,
				op, c, p50, 3*p50))
		}
	}
	labelField := ""
	if label != "" {
		labelField = fmt.Sprintf(`"label": %q, `, label)
	}
	path := filepath.Join(dir, name)
	b := fmt.Sprintf(`{"duration_s": 5, %s"papers": %d, "results": [%s], "seed": 1, "synthetic": true}`, labelField, papers, strings.Join(rs, ", "))
	if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// svgDrawing is what a test reads of an SVG: its texts, and its lines'
// strokes (the plot's lines and the legend's thumbnails, drawn 1.5 wide)
// as colour and dash pattern.
type svgDrawing struct {
	texts []string
	lines map[[2]string]bool
}

func readSVG(t *testing.T, path string) svgDrawing {
	t.Helper()
	d := svgDrawing{lines: map[[2]string]bool{}}
	dec := xml.NewDecoder(bytes.NewReader(read(t, path)))
	inText := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s does not parse as XML: %v", path, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inText = tok.Name.Local == "text"
			for _, a := range tok.Attr {
				if tok.Name.Local != "path" || a.Name.Local != "style" || !strings.Contains(a.Value, "stroke-width:1.5") {
					continue
				}
				var stroke, dashes string
				for f := range strings.SplitSeq(a.Value, ";") {
					if v, ok := strings.CutPrefix(f, "stroke:"); ok {
						stroke = v
					}
					if v, ok := strings.CutPrefix(f, "stroke-dasharray:"); ok {
						dashes = v
					}
				}
				d.lines[[2]string{stroke, dashes}] = true
			}
		case xml.CharData:
			if inText {
				d.texts = append(d.texts, strings.TrimSpace(string(tok)))
			}
		case xml.EndElement:
			inText = false
		}
	}
	return d
}

// TestPlot draws small runs and reads the SVG back: a legend entry for
// each label and operation a file has, none for a skipped operation or
// one a file lacks, a colour per operation and a dash pattern per label.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	sqlite1k := writeRun(t, dir, "sqlite-1k.json", "SQLite", 1000, "readme-median", "search-rare", "export-search-10k")
	sqlite10k := writeRun(t, dir, "sqlite-10k.json", "SQLite", 10000, "readme-median", "search-rare", "export-search-10k")
	pg1k := writeRun(t, dir, "pg-1k.json", "PostgreSQL", 1000, "readme-median", "export-search-10k")
	unlabelled := writeRun(t, dir, "unlabelled.json", "", 50, "paper")
	for _, c := range []struct {
		name      string
		args      []string
		title     string
		legend    []string
		colours   int
		dashes    int
		notInSVG  []string
		formatPNG bool
	}{
		{"three files", []string{"--skip", "export-search-10k", sqlite1k, sqlite10k, pg1k}, "p50 latency at 10 clients",
			[]string{"SQLite readme-median", "SQLite search-rare", "PostgreSQL readme-median"}, 2, 2,
			[]string{"export-search-10k", "PostgreSQL search-rare"}, false},
		{"p99 at one client", []string{"--metric", "p99", "--clients", "1", sqlite1k, pg1k}, "p99 latency at 1 client",
			[]string{"SQLite readme-median", "SQLite search-rare", "SQLite export-search-10k", "PostgreSQL readme-median", "PostgreSQL export-search-10k"}, 3, 2,
			nil, false},
		// One point, of 0.5 ms: both log axes over a single value, and
		// plot's default of one either side of it would reach below 0.
		{"one file without a label", []string{"--skip", "", unlabelled}, "p50 latency at 10 clients", []string{"paper"}, 1, 1, nil, false},
		{"png", []string{sqlite1k, sqlite10k}, "", nil, 0, 0, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "plot.svg")
			if c.formatPNG {
				out = strings.TrimSuffix(out, ".svg") + ".png"
			}
			var stdout, stderr bytes.Buffer
			args := append([]string{"plot", "--out", out}, c.args...)
			if err := run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatalf("plot: %v\n%s", err, stderr.String())
			}
			if c.formatPNG {
				f, err := os.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := png.DecodeConfig(f); err != nil {
					t.Errorf("%s is not a PNG: %v", out, err)
				}
				return
			}
			d := readSVG(t, out)
			title := slices.IndexFunc(d.texts, func(s string) bool { return strings.Contains(s, "SYNTHETIC") })
			if title < 0 || !strings.Contains(d.texts[title], c.title) {
				t.Errorf("no title saying SYNTHETIC and %q in %q", c.title, d.texts)
			}
			for _, name := range c.legend {
				if !slices.Contains(d.texts, name) {
					t.Errorf("no legend entry %q in %q", name, d.texts)
				}
			}
			for _, s := range c.notInSVG {
				if bytes.Contains(read(t, out), []byte(s)) {
					t.Errorf("the SVG has %q", s)
				}
			}
			colours, dashes := map[string]bool{}, map[string]bool{}
			for l := range d.lines {
				colours[l[0]], dashes[l[1]] = true, true
			}
			if len(d.lines) != len(c.legend) || len(colours) != c.colours || len(dashes) != c.dashes {
				t.Errorf("lines %v: %d strokes in %d colours and %d dash patterns, want %d in %d and %d",
					d.lines, len(d.lines), len(colours), len(dashes), len(c.legend), c.colours, c.dashes)
			}
		})
	}
}

// TestPlotErrors: each mistake is an error that names the flag or the
// file, and no plot is written.
func TestPlotErrors(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, "a.json", "SQLite", 1000, "readme-median")
	b := writeRun(t, dir, "b.json", "SQLite", 1000, "readme-median")
	other := writeRun(t, dir, "other.json", "PostgreSQL", 1000, "readme-median")
	missing := filepath.Join(dir, "missing.json")
	empty := filepath.Join(dir, "empty.json")
	notJSON := filepath.Join(dir, "table.txt")
	for path, s := range map[string]string{empty: `{"papers": 1000, "synthetic": true, "results": []}`, notJSON: "operation  clients\n"} {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"same label and papers", []string{a, other, b}, []string{a, b, `"SQLite"`, "1000"}},
		{"missing file", []string{a, missing}, []string{missing}},
		{"no results", []string{empty, a}, []string{empty, "no results"}},
		{"not JSON", []string{a, notJSON}, []string{notJSON}},
		{"metric", []string{"--metric", "p90", a}, []string{"--metric", "p90"}},
		{"format", []string{"--out", filepath.Join(dir, "plot.pdf"), a}, []string{".svg or .png"}},
		{"clients", []string{"--clients", "3", a}, []string{"3 clients", "[1 10]"}},
		{"skip", []string{"--skip", "readme-medain", a}, []string{"--skip", "readme-medain"}},
		{"no files", nil, []string{"RUN.json"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "plot.svg")
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"plot", "--out", out}, c.args...), &stdout, &stderr)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a plot was written (%v)", err)
			}
		})
	}
}

// The latency axis has a label at each end and 1, 2 and 5 times each
// power of ten between, or the powers alone over more than three decades.
func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{12, 18, []string{"10", "20"}},
		{3, 40, []string{"2", "5", "10", "20", "50"}},
		{0.04, 0.5, []string{"0.02", "0.05", "0.1", "0.2", "0.5"}},
		{0.5, 5000, []string{"0.1", "1", "10", "100", "1000", "10000"}},
	} {
		var got []string
		for _, tk := range (logTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ticks from %g to %g labelled %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}
