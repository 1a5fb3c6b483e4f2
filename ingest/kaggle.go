package ingest

import (
	"context"
)

// Kaggle reads the arXiv metadata snapshot that arXiv publishes on Kaggle.
var Kaggle = Format{
	Name:  "kaggle",
	Reads: "arXiv metadata snapshot from Kaggle (arxiv-metadata-oai-snapshot.json, JSON lines)",
	Read:  readKaggle,
}

func readKaggle(ctx context.Context, e Entry, s Sink) error {
	return eachJSON(ctx, e, s, func(r *arxivRecord, pos Position) error {
		p, reason := r.paper()
		if reason != "" {
			return s.Bad(&RecordError{Pos: pos, Reason: reason})
		}
		return s.Record(p, pos)
	})
}
