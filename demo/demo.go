// Package demo ships papergraph's demo data set inside the binary, so that
// a first start has real papers to show without a download.
package demo

import (
	"embed"
	"io/fs"

	"github.com/papergraph/papergraph/analysis"
	"github.com/papergraph/papergraph/ingest"
)

//go:embed data/*.gz data/*.jsonl
var files embed.FS

// Files returns the demo set's files, by the names demo/data/README.md
// gives them.
func Files() fs.FS {
	sub, err := fs.Sub(files, "data")
	if err != nil {
		panic(err) // the embedded tree always has data/
	}
	return sub
}

// Imports returns the imports that load the demo set, in order: the
// institutions first, so affiliations can be matched as papers arrive.
func Imports() []ingest.Options {
	sub := Files()
	return []ingest.Options{
		{Format: ingest.ROR, FS: sub, Paths: []string{"ror.jsonl.gz"}},
		{Format: ingest.Paperscape, FS: sub, Paths: []string{
			"pscp-1991.csv.gz", "pscp-1992.csv.gz", "pscp-1993.csv.gz",
			"pscp-1994.csv.gz", "pscp-1995.csv.gz", "pscp-1996.csv.gz",
		}},
		{Format: ingest.Abs, FS: sub, Paths: []string{"hepth-abstracts-1992-1996.tar.gz", "arxiv-abs-fixtures.tar.gz"}},
		{Format: ingest.Kaggle, FS: sub, Paths: []string{"kaggle-arxiv-sample.jsonl.gz"}},
		{Format: ingest.OpenAlex, FS: sub, Paths: []string{"openalex.jsonl"}},
	}
}

// Analyses returns the import of the demo set's paper analyses, which
// runs after Imports: an analysis is of a paper already in the archive.
func Analyses() analysis.ImportOptions {
	return analysis.ImportOptions{FS: Files(), Paths: []string{"analyses.jsonl"}}
}
