package ingest

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// writeReferences adds reference targets; derive resolves them to papers.
func writeReferences(ctx context.Context, tx bun.Tx, ps []*pending) error {
	var rows []db.Reference
	for _, p := range ps {
		seen := map[string]bool{}
		for _, t := range p.refs {
			if t == "" || seen[t] || t == p.row.ArxivID {
				continue
			}
			seen[t] = true
			rows = append(rows, db.Reference{CitingID: p.row.ID, Target: t})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return db.AddReferences(ctx, tx, rows)
}
