package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
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
