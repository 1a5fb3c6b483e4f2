package db

import (
	"context"

	"github.com/uptrace/bun"
)

// The index behind paper suggestions (SuggestPapers), which match titles
// only.
//
// SQLite needs none: an FTS5 column filter ({title}) reads the full-text
// index of 0003_search. PostgreSQL gets a GIN index over the title alone,
// folded and tokenized as papers_search_doc folds and tokenizes it.
var postgresSuggest = []string{
	`CREATE FUNCTION papers_title_doc(title text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT to_tsvector('simple', search_fold(title)) $$`,
	`CREATE INDEX papers_title_search ON papers USING GIN (papers_title_doc(title))`,
}

// createSuggestIndex is the 0004_suggest migration.
func createSuggestIndex(ctx context.Context, tx bun.Tx) error {
	if !IsPostgres(tx) {
		return nil
	}
	for _, s := range postgresSuggest {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
