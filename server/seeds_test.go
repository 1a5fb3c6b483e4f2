package server

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// importer imports the demo set's file at path, of format f.
func importer(f ingest.Format, path string) func(context.Context, *bun.DB) error {
	return func(ctx context.Context, bdb *bun.DB) error {
		_, err := ingest.Import(ctx, bdb, ingest.Options{Format: f, Paths: []string{path}})
		return err
	}
}

// The fixtures the server's tests read. On SQLite each is imported once a
// process and every test's database is a copy of it (see dbtest.Seed).
var (
	// pscp1992 is the demo set's 1992 Paperscape file: citations and
	// co-authors.
	pscp1992 = dbtest.NewSeed(importer(ingest.Paperscape, "../demo/data/pscp-1992.csv.gz")).
			Reads("../demo/data/pscp-1992.csv.gz")
	// largeBylines is pscp1992 and then the arXiv .abs fixtures, which
	// hold the largest real bylines (1411.4413 with 2,832 authors,
	// 2103.11058 with 969).
	largeBylines = pscp1992.Then(importer(ingest.Abs, "../demo/data/arxiv-abs-fixtures.tar.gz")).
			Reads("../demo/data/arxiv-abs-fixtures.tar.gz")
)
