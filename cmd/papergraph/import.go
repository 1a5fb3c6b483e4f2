package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/papergraph/papergraph/analysis"
	"github.com/papergraph/papergraph/demo"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/ingest"
)

func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var help strings.Builder
	help.WriteString("import [--db DSN] [--max-errors N] [--batch N] FORMAT PATH... [+ FORMAT PATH...]...\n\n" +
		"Formats joined by + are read one after the other in one run, which derives the figures once, at\n" +
		"its end; into an empty archive the run is one bulk load, which builds the indexes once (faster\n" +
		"than one import a format: citations are counted before the full-text indexes exist). A file\n" +
		"named + is ./+.\n\nFORMAT is one of:\n")
	for _, f := range ingest.Formats() {
		fmt.Fprintf(&help, "  %-11s %s\n", f.Name, f.Reads)
	}
	help.WriteString("  analysis    papers' analyses, a JSON object a line (see docs/analysis.md); after the papers\n" +
		"  demo        the demo data set shipped with papergraph (no PATH)\n\nFiles may be plain or gzip; .abs files may come in a tar.gz.")
	fs, dsn := newFlags("import", help.String(), stderr)
	maxErrors := fs.Int("max-errors", 0, "stop after N malformed records (0: never)")
	batch := fs.Int("batch", 2000, "records per transaction")
	var prof profiles
	fs.StringVar(&prof.cpu, "cpuprofile", "", "write a pprof CPU profile of the import to `FILE`")
	fs.StringVar(&prof.mem, "memprofile", "", "write a pprof heap profile to `FILE` at the Go heap's highest")
	ef := addEmbedFlags(fs, true)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := ef.check(); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("%w: import needs a FORMAT", errUsage)
	}
	jobs, err := importJobs(fs.Args())
	if err != nil {
		return err
	}
	bdb, closeDB, err := openLocked(ctx, *dsn)
	if err != nil {
		return err
	}
	defer closeDB()
	stopProfiles, err := prof.start(stderr)
	if err != nil {
		return err
	}
	failed := false
	announce := publisher(ctx, writerBus(*dsn, bdb), slog.New(slog.NewTextHandler(stderr, nil)))
	last := lastIngest(jobs)
	for i, job := range jobs {
		var ok bool
		var err error
		if job.analyses != nil {
			ok, err = runAnalysisImport(ctx, bdb, *job.analyses, stdout, stderr)
		} else {
			o := job.ingest
			o.MaxErrors, o.BatchSize, o.OnCommit = *maxErrors, *batch, announce
			o.SkipDerive = i < last // one derive, after the last format that needs one
			ok, err = runImport(ctx, bdb, o, stdout, stderr)
		}
		if err != nil {
			stopProfiles()
			return err
		}
		failed = failed || !ok
	}
	if err := stopProfiles(); err != nil {
		return err
	}
	if !*ef.skip {
		if err := runEmbed(ctx, bdb, ef.config(), embed.BuiltinOptions{}, stdout, stderr); err != nil {
			return err
		}
	}
	if failed {
		return errReported
	}
	return nil
}

// importSeparator joins the formats of one import run.
const importSeparator = "+"

// importJob is one FORMAT PATH... group of an import: a format of
// ingest, or, when analyses is set, analysis files.
type importJob struct {
	ingest   ingest.Options
	analyses *analysis.ImportOptions
}

// ingestJobs makes ingest's imports import jobs.
func ingestJobs(opts []ingest.Options) []importJob {
	jobs := make([]importJob, len(opts))
	for i, o := range opts {
		jobs[i].ingest = o
	}
	return jobs
}

// lastIngest is the index of the last of jobs that imports through
// ingest, the one whose end derives the figures (-1 for none): analyses
// change no derived figure.
func lastIngest(jobs []importJob) int {
	last := -1
	for i, j := range jobs {
		if j.analyses == nil {
			last = i
		}
	}
	return last
}

// importJobs reads an import's arguments, FORMAT PATH... [+ FORMAT
// PATH...]..., into its jobs, in order.
func importJobs(args []string) ([]importJob, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%w: import needs a FORMAT", errUsage)
	}
	var jobs []importJob
	start := 0
	for i := 0; i <= len(args); i++ {
		if i < len(args) && args[i] != importSeparator {
			continue
		}
		group := args[start:i]
		start = i + 1
		if len(group) == 0 {
			return nil, fmt.Errorf("%w: %q must stand between two FORMAT PATH... groups", errUsage, importSeparator)
		}
		name, paths := group[0], group[1:]
		if name == "demo" {
			if len(paths) > 0 {
				return nil, fmt.Errorf("%w: import demo takes no paths", errUsage)
			}
			a := demo.Analyses()
			jobs = append(append(jobs, ingestJobs(demo.Imports())...), importJob{analyses: &a})
			continue
		}
		if name == "analysis" {
			if len(paths) == 0 {
				return nil, fmt.Errorf("%w: import analysis needs at least one PATH", errUsage)
			}
			jobs = append(jobs, importJob{analyses: &analysis.ImportOptions{Paths: paths}})
			continue
		}
		f, ok := ingest.FormatByName(name)
		if !ok {
			return nil, fmt.Errorf("%w: unknown format %q; run papergraph import -h for the list", errUsage, name)
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("%w: import %s needs at least one PATH", errUsage, name)
		}
		jobs = append(jobs, importJob{ingest: ingest.Options{Format: f, Paths: paths}})
	}
	return jobs, nil
}
