package ingest

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// writeReferences adds reference targets, each with its citing paper's
// first-version date, and brings the date on the stored references of
// the stored papers whose date moved up to their paper's; derive resolves the
// targets to papers.
func writeReferences(ctx context.Context, tx bun.Tx, ps []*pending) error {
	var rows []db.Reference
	var dated []int64 // stored papers whose date moved
	for _, p := range ps {
		if !p.isNew && p.dateMoved {
			dated = append(dated, p.row.ID)
		}
		published := p.published()
		seen := map[string]bool{}
		for _, t := range p.refs {
			if t == "" || seen[t] || t == p.row.ArxivID {
				continue
			}
			seen[t] = true
			rows = append(rows, db.Reference{CitingID: p.row.ID, Target: t, CitingPublished: published})
		}
	}
	if len(rows) > 0 {
		if err := db.AddReferences(ctx, tx, rows); err != nil {
			return err
		}
	}
	return db.SyncCitingDates(ctx, tx, dated)
}
