package db_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// paperscapeYear imports the demo set's Paperscape file of year.
func paperscapeYear(year string) func(context.Context, *bun.DB) error {
	return func(ctx context.Context, bdb *bun.DB) error {
		_, err := ingest.Import(ctx, bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{paperscapeFile(year)}})
		return err
	}
}

func paperscapeFile(year string) string { return "../demo/data/pscp-" + year + ".csv.gz" }

// The demo set's Paperscape citation data, a year and then three, each
// year imported onto the data of the years before it.
var (
	pscp1992     = dbtest.NewSeed(paperscapeYear("1992")).Reads(paperscapeFile("1992"))
	pscp1992to93 = pscp1992.Then(paperscapeYear("1993")).Reads(paperscapeFile("1993"))
	pscp1992to94 = pscp1992to93.Then(paperscapeYear("1994")).Reads(paperscapeFile("1994"))
)

// scoreSeed is the data TestGoBM25MatchesFTS5 compares the scorers over:
// the three years, or under -short the first alone, whose texts hold the
// same markup and letters outside ASCII and match every query of it.
func scoreSeed() *dbtest.Seed {
	if testing.Short() {
		return pscp1992
	}
	return pscp1992to94
}
