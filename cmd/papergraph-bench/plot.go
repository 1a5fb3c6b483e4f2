package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// plotOptions are what plot draws of the runs: one latency at one
// concurrency, without the skipped operations.
type plotOptions struct {
	clients int
	metric  string
	skip    map[string]bool
}

func cmdPlot(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o plotOptions
	fs.IntVar(&o.clients, "clients", 10, "the concurrency to draw: one of those run's --clients measured")
	fs.StringVar(&o.metric, "metric", "p50", "the latency to draw: p50 or p99")
	skip := fs.String("skip", "", "comma-separated operations to leave out, such as one so slow it squashes the others (export-search-10k)")
	out := fs.String("out", "", "the file to write, FILE.svg or FILE.png")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return errors.New("plot needs --out FILE.svg and one or more RUN.json files run wrote")
	}
	if o.metric != "p50" && o.metric != "p99" {
		return fmt.Errorf("--metric: %q is neither p50 nor p99", o.metric)
	}
	if o.clients < 1 {
		return fmt.Errorf("--clients: %d is not a positive number", o.clients)
	}
	o.skip = map[string]bool{}
	for op := range strings.SplitSeq(*skip, ",") {
		if op = strings.TrimSpace(op); op != "" {
			o.skip[op] = true
		}
	}
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(*out), "."))
	if format != "svg" && format != "png" {
		return fmt.Errorf("--out %s: plot writes .svg or .png files", *out)
	}
	runs, err := readRuns(fs.Args())
	if err != nil {
		return err
	}
	c, err := drawRuns(runs, o, format, stderr)
	if err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fileRun is a run's JSON and the file it was read from, which every
// error about it names.
type fileRun struct {
	file string
	runReport
}

// readRuns reads run's JSON from files. Two files of one label and
// archive size are an error: their points would fall on one line at one
// x, and neither could be told from the other.
func readRuns(files []string) ([]fileRun, error) {
	type key struct {
		label  string
		papers int
	}
	seen := map[key]string{}
	var runs []fileRun
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		r := fileRun{file: f}
		if err := json.Unmarshal(b, &r.runReport); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		switch {
		case len(r.Results) == 0:
			return nil, fmt.Errorf("%s: no results: not the JSON papergraph-bench run prints", f)
		case r.Papers < 1:
			return nil, fmt.Errorf("%s: papers %d: no archive size to draw it at", f, r.Papers)
		case !r.Synthetic:
			// Only synth's corpora are measured, and the title says so.
			return nil, fmt.Errorf("%s: not of a synthetic corpus", f)
		}
		k := key{r.Label, r.Papers}
		if prev, ok := seen[k]; ok {
			return nil, fmt.Errorf("%s and %s are both label %q at %d papers: give one of them another run --label", prev, f, r.Label, r.Papers)
		}
		seen[k] = f
		runs = append(runs, r)
	}
	return runs, nil
}

// series is one line of the plot: an operation's latency under one label
// at each archive size.
type series struct {
	label, operation string
	points           plotter.XYs
}

// name is the series' legend entry, such as "SQLite readme-median".
func (s *series) name() string {
	return strings.TrimSpace(s.label + " " + s.operation)
}

// drawRuns draws what o selects of runs onto a canvas of format (svg or
// png), and notes on stderr the points it leaves out or whose latency
// counts failed requests.
func drawRuns(runs []fileRun, o plotOptions, format string, stderr io.Writer) (vg.CanvasWriterTo, error) {
	var ss []*series
	byKey := map[[2]string]*series{}
	labelIdx, opIdx := map[string]int{}, map[string]int{}
	var sizes []float64
	found := map[string]bool{}
	concurrencies := map[int]bool{}
	for _, r := range runs {
		for _, res := range r.Results {
			found[res.Operation] = true
			concurrencies[res.Clients] = true
			if res.Clients != o.clients || o.skip[res.Operation] {
				continue
			}
			ms := res.P50Ms
			if o.metric == "p99" {
				ms = res.P99Ms
			}
			if ms <= 0 {
				fmt.Fprintf(stderr, "plot: %s: %s has no latency (%v ms), left out\n", r.file, res.Operation, ms)
				continue
			}
			if res.Errors > 0 {
				fmt.Fprintf(stderr, "plot: %s: %s: %d of %d requests failed, and its latency counts them\n", r.file, res.Operation, res.Errors, res.Requests)
			}
			if _, ok := labelIdx[r.Label]; !ok {
				labelIdx[r.Label] = len(labelIdx)
			}
			if _, ok := opIdx[res.Operation]; !ok {
				opIdx[res.Operation] = len(opIdx)
			}
			k := [2]string{r.Label, res.Operation}
			s := byKey[k]
			if s == nil {
				s = &series{label: r.Label, operation: res.Operation}
				byKey[k] = s
				ss = append(ss, s)
			}
			s.points = append(s.points, plotter.XY{X: float64(r.Papers), Y: ms})
			if !slices.Contains(sizes, float64(r.Papers)) {
				sizes = append(sizes, float64(r.Papers))
			}
		}
	}
	for op := range o.skip {
		if !found[op] {
			return nil, fmt.Errorf("--skip: no file has an operation %s", op)
		}
	}
	if len(ss) == 0 {
		return nil, fmt.Errorf("nothing to draw at %d clients: the files measured %v clients", o.clients, slices.Sorted(maps.Keys(concurrencies)))
	}
	// The legend lists each operation's labels together, in the mix's
	// order, so that the lines of one colour are read side by side.
	slices.SortStableFunc(ss, func(a, b *series) int {
		if c := opIdx[a.operation] - opIdx[b.operation]; c != 0 {
			return c
		}
		return labelIdx[a.label] - labelIdx[b.label]
	})

	p := plot.New()
	clients := "clients"
	if o.clients == 1 {
		clients = "client"
	}
	p.Title.Text = fmt.Sprintf("papergraph on SYNTHETIC corpora: %s latency at %d %s", o.metric, o.clients, clients)
	p.X.Label.Text = "archive size (papers)"
	p.Y.Label.Text = o.metric + " latency (ms)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	slices.Sort(sizes)
	p.X.Tick.Marker = sizeTicks(sizes)
	p.Y.Tick.Marker, p.Y.AutoRescale = logTicks{}, true
	p.Add(plotter.NewGrid())
	lg := plot.NewLegend()
	lg.Top, lg.Left = true, true
	lg.ThumbnailWidth = vg.Points(36)
	for _, s := range ss {
		slices.SortFunc(s.points, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		l, pts, err := plotter.NewLinePoints(s.points)
		if err != nil {
			return nil, err
		}
		col := operationColours[opIdx[s.operation]%len(operationColours)]
		l.Color, l.Width, l.Dashes = col, vg.Points(1.5), plotutil.Dashes(labelIdx[s.label])
		pts.Color, pts.Shape, pts.Radius = col, plotutil.Shape(opIdx[s.operation]), vg.Points(3)
		p.Add(l, pts)
		lg.Add(s.name(), l, pts)
	}
	// A log axis over one value has no width; one decade around it does.
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		if a.Min == a.Max {
			a.Min, a.Max = a.Min/math.Sqrt(10), a.Max*math.Sqrt(10)
		}
	}

	// The legend goes to the right of the axes, not over them: with a
	// line per label and operation it would hide the data.
	pad := vg.Centimeter / 2
	lr := lg.Rectangle(draw.Canvas{})
	w := 16*vg.Centimeter + lr.Size().X + 2*pad
	h := max(11*vg.Centimeter, lr.Size().Y+2*pad)
	var c vg.CanvasWriterTo
	if format == "svg" {
		c = vgsvg.New(w, h)
	} else {
		c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(draw.Crop(dc, pad, -(lr.Size().X + 2*pad), pad, -pad))
	lg.Draw(draw.Crop(dc, w-lr.Size().X-pad, -pad, pad, -pad))
	return c, nil
}

// operationColours are Tableau's ten categorical colours (matplotlib's
// tab10): the mix has ten operations, plotutil's palettes seven colours.
// Past ten, an operation is still told apart by its glyph.
var operationColours = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff},
	color.RGBA{0xbc, 0xbd, 0x22, 0xff}, color.RGBA{0x17, 0xbe, 0xcf, 0xff},
}

// sizeTicks labels the archive sizes measured, so that a point's size is
// read off the axis.
func sizeTicks(sizes []float64) plot.ConstantTicks {
	var ts plot.ConstantTicks
	for _, n := range sizes {
		label := strconv.FormatFloat(n, 'f', -1, 64)
		switch {
		case n >= 1e6:
			label = strconv.FormatFloat(n/1e6, 'f', -1, 64) + "M"
		case n >= 1e3:
			label = strconv.FormatFloat(n/1e3, 'f', -1, 64) + "k"
		}
		ts = append(ts, plot.Tick{Value: n, Label: label})
	}
	return ts
}

// logTicks marks a log axis at each multiple of a power of ten and labels
// 1, 2 and 5 times each power, or over more than three decades the powers
// alone. Its ticks reach from the label at or below the lowest value to
// the one at or above the highest, so that the axis, rescaled to them,
// has a label at each end: plot.LogTicks labels only the powers, which
// leaves a range within one decade, as latencies often are, with one
// label or none.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) {
		return nil // no log axis: plot.LogScale will say so
	}
	labelled := []int{1, 2, 5}
	if hi/lo > 1000 {
		labelled = []int{1}
	}
	var ts []plot.Tick
	for e := int(math.Floor(math.Log10(lo))) - 1; e <= int(math.Ceil(math.Log10(hi)))+1; e++ {
		for m := 1; m < 10; m++ {
			t := plot.Tick{Value: float64(m) * math.Pow10(e)}
			if slices.Contains(labelled, m) {
				t.Label = strconv.FormatFloat(t.Value, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	first, last := 0, len(ts)-1
	for i, t := range ts {
		if t.Label == "" {
			continue
		}
		if t.Value <= lo {
			first = i
		}
		if t.Value >= hi {
			last = i
			break
		}
	}
	return ts[first : last+1]
}
