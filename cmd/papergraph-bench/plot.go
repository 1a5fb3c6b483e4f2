package main

import (
	"cmp"
	"encoding/json"
	"errors"
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
	fs := newFlags("plot", stderr)
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
	set, err := collectSeries(runs, o, stderr)
	if err != nil {
		return nil, err
	}
	p, lg, err := set.plot(o)
	if err != nil {
		return nil, err
	}
	return render(p, lg, format), nil
}

// seriesSet is the lines of a plot, with the order in which their labels
// and operations first appear in the files and the archive sizes measured.
type seriesSet struct {
	series          []*series
	labelIdx, opIdx map[string]int
	sizes           []float64
}

// collectSeries gathers the latencies o selects of runs into lines, in
// the legend's order: each operation's labels together, in the mix's
// order, so that the lines of one colour are read side by side.
func collectSeries(runs []fileRun, o plotOptions, stderr io.Writer) (*seriesSet, error) {
	set := &seriesSet{labelIdx: map[string]int{}, opIdx: map[string]int{}}
	byKey := map[[2]string]*series{}
	found := map[string]bool{}
	concurrencies := map[int]bool{}
	for _, r := range runs {
		for _, res := range r.Results {
			found[res.Operation] = true
			concurrencies[res.Clients] = true
			if res.Clients != o.clients || o.skip[res.Operation] {
				continue
			}
			ms, ok := latency(r, res, o.metric, stderr)
			if !ok {
				continue
			}
			k := [2]string{r.Label, res.Operation}
			s := byKey[k]
			if s == nil {
				s = set.add(r.Label, res.Operation)
				byKey[k] = s
			}
			s.points = append(s.points, plotter.XY{X: float64(r.Papers), Y: ms})
			if !slices.Contains(set.sizes, float64(r.Papers)) {
				set.sizes = append(set.sizes, float64(r.Papers))
			}
		}
	}
	for op := range o.skip {
		if !found[op] {
			return nil, fmt.Errorf("--skip: no file has an operation %s", op)
		}
	}
	if len(set.series) == 0 {
		return nil, fmt.Errorf("nothing to draw at %d clients: the files measured %v clients", o.clients, slices.Sorted(maps.Keys(concurrencies)))
	}
	slices.SortStableFunc(set.series, func(a, b *series) int {
		if c := set.opIdx[a.operation] - set.opIdx[b.operation]; c != 0 {
			return c
		}
		return set.labelIdx[a.label] - set.labelIdx[b.label]
	})
	slices.Sort(set.sizes)
	return set, nil
}

// latency is res's latency in ms by metric (p50 or p99); it notes on
// stderr a result without one, which it leaves out, and one whose
// latency counts failed requests.
func latency(r fileRun, res result, metric string, stderr io.Writer) (float64, bool) {
	ms := res.P50Ms
	if metric == "p99" {
		ms = res.P99Ms
	}
	if ms <= 0 {
		fmt.Fprintf(stderr, "plot: %s: %s has no latency (%v ms), left out\n", r.file, res.Operation, ms)
		return 0, false
	}
	if res.Errors > 0 {
		fmt.Fprintf(stderr, "plot: %s: %s: %d of %d requests failed, and its latency counts them\n", r.file, res.Operation, res.Errors, res.Requests)
	}
	return ms, true
}

// add starts the line of label and operation.
func (set *seriesSet) add(label, operation string) *series {
	if _, ok := set.labelIdx[label]; !ok {
		set.labelIdx[label] = len(set.labelIdx)
	}
	if _, ok := set.opIdx[operation]; !ok {
		set.opIdx[operation] = len(set.opIdx)
	}
	s := &series{label: label, operation: operation}
	set.series = append(set.series, s)
	return s
}

// plot draws the lines on log axes, a colour and glyph an operation and
// a dash pattern a label, and their legend.
func (set *seriesSet) plot(o plotOptions) (*plot.Plot, *plot.Legend, error) {
	p := plot.New()
	clients := "clients"
	if o.clients == 1 {
		clients = "client"
	}
	p.Title.Text = fmt.Sprintf("papergraph on SYNTHETIC corpora: %s latency at %d %s", o.metric, o.clients, clients)
	p.X.Label.Text = "archive size (papers)"
	p.Y.Label.Text = o.metric + " latency (ms)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = sizeTicks(set.sizes)
	p.Y.Tick.Marker, p.Y.AutoRescale = logTicks{}, true
	p.Add(plotter.NewGrid())
	lg := plot.NewLegend()
	lg.Top, lg.Left = true, true
	lg.ThumbnailWidth = vg.Points(36)
	for _, s := range set.series {
		slices.SortFunc(s.points, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		l, pts, err := plotter.NewLinePoints(s.points)
		if err != nil {
			return nil, nil, err
		}
		op := set.opIdx[s.operation]
		col := operationColours[op%len(operationColours)]
		l.Color, l.Width, l.Dashes = col, vg.Points(1.5), plotutil.Dashes(set.labelIdx[s.label])
		pts.Color, pts.Shape, pts.Radius = col, plotutil.Shape(op), vg.Points(3)
		p.Add(l, pts)
		lg.Add(s.name(), l, pts)
	}
	// A log axis over one value has no width; one decade around it does.
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		if a.Min == a.Max {
			a.Min, a.Max = a.Min/math.Sqrt(10), a.Max*math.Sqrt(10)
		}
	}
	return p, &lg, nil
}

// render draws p and its legend onto a canvas of format (svg or png). The
// legend goes to the right of the axes, not over them: with a line per
// label and operation it would hide the data.
func render(p *plot.Plot, lg *plot.Legend, format string) vg.CanvasWriterTo {
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
	return c
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
