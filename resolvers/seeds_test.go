package resolvers_test

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/topics"
)

// The data sets the tests read, each imported once a process on SQLite
// (dbtest.Seed); a test that changes its data changes its own copy.
var (
	// fixtures are the files in testdata.
	fixtures = importsSeed(
		ingestFile{ingest.ROR, "testdata/ror.jsonl"},
		ingestFile{ingest.Paperscape, "testdata/pscp-odintsov.csv"},
		ingestFile{ingest.Kaggle, "testdata/kaggle-first20.jsonl"},
		ingestFile{ingest.OpenAlex, "testdata/openalex.jsonl"},
		ingestFile{ingest.S2AG, "testdata/s2ag.jsonl"},
	)
	// fixturesWithTopics are the fixtures embedded by hashedEmbedder,
	// with their topics built.
	fixturesWithTopics = fixtures.Then(buildTopics).Reads()
	// pscp1992 is the real 1992 Paperscape file: papers, bylines and
	// citations.
	pscp1992 = importsSeed(ingestFile{ingest.Paperscape, "../demo/data/pscp-1992.csv.gz"})
)

// importsSeed is the Seed of imports(files...), which reads the files.
func importsSeed(files ...ingestFile) *dbtest.Seed {
	var paths []string
	for _, in := range files {
		paths = append(paths, in.path)
	}
	return dbtest.NewSeed(imports(files...)).Reads(paths...)
}

type ingestFile struct {
	format ingest.Format
	path   string
}

// imports is the fill of a Seed that imports files in order through the
// real import pipeline, refusing any bad record.
func imports(files ...ingestFile) func(context.Context, *bun.DB) error {
	return func(ctx context.Context, bdb *bun.DB) error {
		for _, in := range files {
			sum, err := ingest.Import(ctx, bdb, ingest.Options{Format: in.format, Paths: []string{in.path}})
			if err != nil {
				return fmt.Errorf("import %s: %w", in.path, err)
			}
			if !sum.OK() {
				return fmt.Errorf("import %s: %d bad records, %d file errors", in.path, sum.Bad, sum.FileErrors)
			}
		}
		return nil
	}
}

// buildTopics embeds the papers with hashedEmbedder and builds their
// topics, of which it wants at least two.
func buildTopics(ctx context.Context, bdb *bun.DB) error {
	if _, err := embed.Sync(ctx, bdb, hashedEmbedder{}, embed.SyncOptions{}); err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	sum, err := topics.Update(ctx, bdb, topics.Options{})
	if err != nil || !sum.Built || sum.Topics < 2 {
		return fmt.Errorf("topics.Update = %+v, %v; want topics built", sum, err)
	}
	return nil
}
