package db

import (
	"context"

	"github.com/uptrace/bun"
)

// UpsertByID writes rows, a pointer to a slice of models: a row whose id
// is stored gets the values of cols, any other is inserted.
func UpsertByID(ctx context.Context, idb bun.IDB, rows any, cols []string) error {
	q := idb.NewInsert().Model(rows).On("CONFLICT (id) DO UPDATE")
	for _, c := range cols {
		q.Set("? = EXCLUDED.?", bun.Ident(c), bun.Ident(c))
	}
	_, err := q.Exec(ctx)
	return err
}
