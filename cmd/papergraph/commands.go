package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/analysis"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/demo"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/ingest"
)

// newFlags makes a flag set with the --db flag every command takes.
func newFlags(name, synopsis string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := os.Getenv("PAPERGRAPH_DB")
	if dsn == "" {
		dsn = db.DefaultDSN
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: papergraph %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs, fs.String("db", dsn, "database: SQLite file, sqlite:PATH or postgres:// URL (env PAPERGRAPH_DB)")
}

// parse parses args, turning flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

// openDB opens and migrates the database.
func openDB(ctx context.Context, dsn string) (*bun.DB, error) {
	bdb, err := db.Open(dsn)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, bdb); err != nil {
		bdb.Close()
		if errors.Is(err, db.ErrReadOnly) {
			return nil, fmt.Errorf("%s: the schema is not current and the database is read-only: "+
				"run `papergraph migrate` on it once with write access (without mode=ro or immutable=1): %w",
				redactDSN(dsn), err)
		}
		return nil, fmt.Errorf("%s: %w", redactDSN(dsn), err)
	}
	return bdb, nil
}

// openLocked opens and migrates the database and takes the import lock
// (see db.LockImport), for the commands that write what imports write;
// the function it returns releases the lock and closes the database.
func openLocked(ctx context.Context, dsn string) (*bun.DB, func(), error) {
	bdb, err := openDB(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	release, err := db.LockImport(ctx, bdb)
	if err != nil {
		bdb.Close()
		return nil, nil, err
	}
	return bdb, func() {
		release()
		bdb.Close()
	}, nil
}

// redactDSN hides a password in a DSN shown in messages.
func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			if colon := strings.Index(dsn[i+3:at], ":"); colon >= 0 {
				return dsn[:i+3+colon] + ":***" + dsn[at:]
			}
		}
	}
	return dsn
}

func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("migrate", "migrate [--db DSN]", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	// An import that was stopped before its end left the readers' indexes
	// unbuilt, if it was a bulk load, and the derived figures stale: the
	// derive that ends an import ends them, at a cost that follows what
	// imports changed since the last one. Under a running import it would
	// race it.
	bdb, closeDB, err := openLocked(ctx, *dsn)
	if err != nil {
		return err
	}
	defer closeDB()
	steps, err := ingest.DeriveSteps(ctx, bdb, nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "schema and derived figures are up to date")
	fmt.Fprintf(stdout, "derived figures by step: %s\n", stepTimes(steps))
	return nil
}

func cmdStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("stats", "stats [--db DSN] [--json]", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	bdb, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	s, err := db.ReadStats(ctx, bdb)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(s)
	}
	fmt.Fprintf(stdout, "papers        %d\nresearchers   %d\ninstitutions  %d\nauthorships   %d\ncitations     %d\n",
		s.Papers, s.Researchers, s.Institutions, s.Authorships, s.Citations)
	return nil
}

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
