package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/vector"
)

// setList is the repeatable --set flag.
type setList []string

func (s *setList) String() string { return strings.Join(*s, ",") }

func (s *setList) Set(v string) error {
	if v = strings.TrimSpace(v); v == "" {
		return errors.New("empty set name")
	}
	*s = append(*s, v)
	return nil
}

// harvestFlags are the flags harvest and serve --harvest-every share.
type harvestFlags struct {
	url   *string
	sets  setList
	delay *time.Duration
	embed *embedFlags // brings the embeddings up to date after a harvest
}

func addHarvestFlags(fs *flag.FlagSet) *harvestFlags {
	f := &harvestFlags{}
	f.url = fs.String("oai-url", ingest.DefaultOAIURL, "the OAI-PMH repository to harvest arXivRaw records from")
	fs.Var(&f.sets, "set", "harvest the OAI-PMH `SET` (cs, math, physics:hep-th, ...); repeat for more; none: all of arXiv")
	f.delay = fs.Duration("harvest-delay", ingest.DefaultHarvestDelay, "pause between two requests to the repository (arXiv asks for 3 s at least)")
	f.embed = addEmbedFlags(fs, true)
	return f
}

func (f *harvestFlags) options() ingest.HarvestOptions {
	return ingest.HarvestOptions{URL: *f.url, Sets: f.sets, Delay: *f.delay}
}

func cmdHarvest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("harvest", "harvest [--db DSN] [--oai-url URL] [--set SET]... [--from DATE] [--until DATE]\n"+
		"       [--harvest-delay 5s] [--max-errors N]\n\n"+
		"Reads the arXiv records changed since the last harvest of each set (all of them, the first time)\n"+
		"from arXiv's OAI-PMH interface, and writes them as an import does. DATE is YYYY-MM-DD.", stderr)
	hf := addHarvestFlags(fs)
	from := fs.String("from", "", "harvest records changed on or after `DATE` (default: the day each set was last harvested through)")
	until := fs.String("until", "", "harvest records changed on or before `DATE` (default: today)")
	maxErrors := fs.Int("max-errors", 0, "stop after N malformed records (0: never)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: harvest takes no arguments, got %q", errUsage, fs.Arg(0))
	}
	if err := hf.embed.check(); err != nil {
		return err
	}
	bdb, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	o := hf.options()
	o.From, o.Until, o.MaxErrors = *from, *until, *maxErrors
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	o.OnCommit = publisher(ctx, writerBus(*dsn, bdb), logger)
	sum, err := runHarvest(ctx, bdb, o, hf.embed, logger, nil, nil)
	if errors.Is(err, ingest.ErrHarvestOptions) {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	fmt.Fprintf(stdout, "harvest: %d requests (%d retried), %d pages, %d records: inserted %d, updated %d, unchanged %d; "+
		"%d deleted and %d malformed skipped in %s (derived figures %s)\n",
		sum.Requests, sum.Retries, sum.Pages, sum.Records, sum.Inserted, sum.Updated, sum.Unchanged,
		sum.Deleted, sum.Bad, sum.Elapsed.Round(time.Millisecond), sum.Derive.Round(time.Millisecond))
	if err != nil {
		return err
	}
	for _, set := range slices.Sorted(maps.Keys(sum.Through)) {
		fmt.Fprintf(stdout, "%s: harvested through %s\n", setName(set), sum.Through[set])
	}
	if sum.Bad > 0 {
		return errReported
	}
	return nil
}

// runHarvest runs one harvest, logging its progress and counting it in m
// (when not nil), and then brings the embeddings up to date as ef says,
// adding the papers it embeds to live (a serving process's vector index)
// when not nil.
func runHarvest(ctx context.Context, bdb *bun.DB, o ingest.HarvestOptions, ef *embedFlags, logger *slog.Logger, m *harvestMetrics, live *vector.Live) (ingest.HarvestSummary, error) {
	o.Bad = func(e *ingest.RecordError) {
		logger.Warn("harvest: skipped a malformed record", "at", e.Pos.String(), "reason", e.Reason)
		m.malformed()
	}
	o.Retry = func(err error, wait time.Duration) {
		logger.Warn("harvest: request failed, trying again", "err", err, "wait", wait)
		m.retried()
	}
	o.Page = func(p ingest.HarvestPage) {
		logger.Info("harvest: page written", "set", setName(p.Set), "page", p.Page, "records", p.Records,
			"deleted", p.Deleted, "malformed", p.Bad, "done", p.Done, "of", p.Total, "datestamp", p.Datestamp)
		m.page(p)
	}
	m.started()
	sum, err := ingest.Harvest(ctx, bdb, o)
	m.finished(sum, err)
	if err == nil && !*ef.skip {
		err = embedLogged(ctx, bdb, ef.config(), logger, live)
	}
	return sum, err
}

// harvestEvery runs a harvest now and then every interval until ctx ends.
// A run that finds another harvest or import holding the database (on
// another instance, say) skips its turn.
func harvestEvery(ctx context.Context, bdb *bun.DB, every time.Duration, o ingest.HarvestOptions, ef *embedFlags, logger *slog.Logger, m *harvestMetrics, live *vector.Live) {
	for {
		sum, err := runHarvest(ctx, bdb, o, ef, logger, m, live)
		var running *db.ImportRunningError
		switch {
		case errors.As(err, &running):
			logger.Info("harvest: skipped, another harvest or import is writing", "holder", running.Holder.String(), "next", every)
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			logger.Error("harvest failed; what it wrote is kept and the next run asks again", "err", err, "next", every)
		default:
			logger.Info("harvest done", "records", sum.Records, "inserted", sum.Inserted, "updated", sum.Updated,
				"deleted", sum.Deleted, "malformed", sum.Bad, "requests", sum.Requests, "elapsed", sum.Elapsed.Round(time.Millisecond),
				"next", every)
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// harvestMetrics count the harvests of a serving process on /metrics.
type harvestMetrics struct {
	runs    *prometheus.CounterVec
	pages   prometheus.Counter
	records *prometheus.CounterVec
	errors  prometheus.Counter
	running prometheus.Gauge
	through *prometheus.GaugeVec
	latest  prometheus.Gauge
}

func newHarvestMetrics() *harvestMetrics {
	return &harvestMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "papergraph_harvest_runs_total",
			Help: "OAI-PMH harvests by result: ok, error, or skipped (another harvest or import was writing).",
		}, []string{"result"}),
		pages: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "papergraph_harvest_pages_total", Help: "OAI-PMH pages harvested and written.",
		}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "papergraph_harvest_records_total",
			Help: "OAI-PMH records harvested by outcome: written, deleted (skipped) or malformed (skipped).",
		}, []string{"outcome"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "papergraph_harvest_request_errors_total", Help: "Failed OAI-PMH requests that were tried again (503s among them).",
		}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "papergraph_harvest_running", Help: "1 while this process harvests.",
		}),
		through: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "papergraph_harvest_through_timestamp_seconds",
			Help: "The day each set is harvested through, as a Unix time (set=\"\" is all of arXiv).",
		}, []string{"set"}),
		latest: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "papergraph_harvest_last_datestamp_seconds", Help: "The latest datestamp of the last page written, as a Unix time.",
		}),
	}
}

func (m *harvestMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.runs, m.pages, m.records, m.errors, m.running, m.through, m.latest}
}

// The methods below do nothing on a nil *harvestMetrics (a harvest
// outside serve).

func (m *harvestMetrics) malformed() {
	if m != nil {
		m.records.WithLabelValues("malformed").Inc()
	}
}

func (m *harvestMetrics) retried() {
	if m != nil {
		m.errors.Inc()
	}
}

func (m *harvestMetrics) page(p ingest.HarvestPage) {
	if m == nil {
		return
	}
	m.pages.Inc()
	m.records.WithLabelValues("written").Add(float64(p.Records))
	m.records.WithLabelValues("deleted").Add(float64(p.Deleted))
	if t, err := time.Parse(time.DateOnly, p.Datestamp); err == nil {
		m.latest.Set(float64(t.Unix()))
	}
}

func (m *harvestMetrics) started() {
	if m != nil {
		m.running.Set(1)
	}
}

func (m *harvestMetrics) finished(sum ingest.HarvestSummary, err error) {
	if m == nil {
		return
	}
	m.running.Set(0)
	var running *db.ImportRunningError
	switch {
	case errors.As(err, &running):
		m.runs.WithLabelValues("skipped").Inc()
	case err != nil:
		m.runs.WithLabelValues("error").Inc()
	default:
		m.runs.WithLabelValues("ok").Inc()
	}
	for set, day := range sum.Through {
		if t, err := time.Parse(time.DateOnly, day); err == nil {
			m.through.WithLabelValues(set).Set(float64(t.Unix()))
		}
	}
}

// setName names a set in messages.
func setName(set string) string {
	if set == "" {
		return "all of arXiv"
	}
	return set
}
