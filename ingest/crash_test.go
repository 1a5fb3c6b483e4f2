package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// The crash test runs an import in a child process (this test binary,
// re-executed) that kills itself with SIGKILL part way through.
const (
	childDSNEnv = "PAPERGRAPH_TEST_CHILD_IMPORT"
	crashFile   = "../demo/data/pscp-1992.csv.gz"
	crashAfter  = 1500 // records read before the child kills itself
)

// crashImported is crashFile imported whole into a database of its own,
// what a killed import's rerun must match.
var crashImported = dbtest.NewSeed(func(ctx context.Context, bdb *bun.DB) error {
	sum, err := ingest.Import(ctx, bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{crashFile}})
	if err == nil && !sum.OK() {
		err = fmt.Errorf("import %s: %d bad records, %d file errors", crashFile, sum.Bad, sum.FileErrors)
	}
	return err
}).Reads(crashFile)

func TestMain(m *testing.M) {
	if dsn := os.Getenv(childDSNEnv); dsn != "" {
		os.Exit(childImport(dsn))
	}
	if dsn := os.Getenv(childHarvestEnv); dsn != "" {
		os.Exit(childHarvest(dsn, os.Getenv(childURLEnv)))
	}
	os.Exit(m.Run())
}

// childImport imports crashFile in small batches and is killed by SIGKILL
// after crashAfter records, wherever the writer is at that moment.
func childImport(dsn string) int {
	bdb, err := db.Open(dsn)
	if err != nil {
		return 3
	}
	f := ingest.Paperscape
	read := f.Read
	n := 0
	f.Read = func(ctx context.Context, e ingest.Entry, s ingest.Sink) error {
		record := s.Record
		s.Record = func(r ingest.Record, p ingest.Position) error {
			if n++; n == crashAfter {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
			return record(r, p)
		}
		return read(ctx, e, s)
	}
	if _, err := ingest.Import(context.Background(), bdb, ingest.Options{Format: f, Paths: []string{crashFile}, BatchSize: 100}); err != nil {
		return 4
	}
	return 0
}

func TestKilledImportRerunMatchesUninterrupted(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childDSNEnv+"="+dsn)
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child import: %v, want death by SIGKILL", err)
		}
		partial := stats(t, bdb)
		if partial.Papers == 0 || partial.Papers >= 3261 {
			t.Fatalf("after the kill: %d papers stored, want some but not all of 3261", partial.Papers)
		}
		importFiles(t, bdb, ingest.Paperscape, crashFile)

		clean := dbtest.Open(t, dbtest.NewSeeded(t, kindOf(dsn), crashImported))
		dbtest.SameDump(t, dbtest.Dump(t, bdb), dbtest.Dump(t, clean))
		if got := stats(t, bdb); got.Papers != 3261 {
			t.Errorf("after the rerun: %d papers, want 3261", got.Papers)
		}
	})
}

func kindOf(dsn string) string {
	if len(dsn) > 8 && dsn[:8] == "postgres" {
		return "postgres"
	}
	return "sqlite"
}
