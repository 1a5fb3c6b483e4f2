package db

import (
	"context"

	"github.com/uptrace/bun"
)

// Stats counts the main rows of the graph.
type Stats struct {
	Papers       int `json:"papers"`
	Researchers  int `json:"researchers"`
	Institutions int `json:"institutions"`
	Authorships  int `json:"authorships"`
	// Citations counts citation edges inside the archive.
	Citations int `json:"citations"`
}

// ReadStats counts the rows of Stats in one statement.
func ReadStats(ctx context.Context, db bun.IDB) (Stats, error) {
	var s Stats
	err := db.NewRaw(`SELECT
		(SELECT COUNT(*) FROM papers) AS papers,
		(SELECT COUNT(*) FROM researchers) AS researchers,
		(SELECT COUNT(*) FROM institutions) AS institutions,
		(SELECT COUNT(*) FROM authorships) AS authorships,
		(SELECT COUNT(*) FROM paper_references WHERE cited_id IS NOT NULL) AS citations`).Scan(ctx, &s)
	return s, err
}
