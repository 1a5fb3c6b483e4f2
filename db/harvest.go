package db

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"
)

// harvestState is one row of harvest_state: how far `papergraph harvest`
// has read an OAI-PMH set.
type harvestState struct {
	bun.BaseModel `bun:"table:harvest_state"`
	Set           string `bun:"set_spec,pk"`
	Through       string `bun:"through,notnull"`
}

// HarvestedThrough returns the datestamp (YYYY-MM-DD) through which set
// ("" for the whole archive) has been harvested, or "" when it never was.
func HarvestedThrough(ctx context.Context, idb bun.IDB, set string) (string, error) {
	var through string
	err := idb.NewSelect().Model((*harvestState)(nil)).Column("through").Where("set_spec = ?", set).Scan(ctx, &through)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return through, err
}

// SetHarvestedThrough records that set has been harvested through the
// datestamp through. It never moves a set's datestamp back, so a run over
// an older window (a backfill) leaves the next incremental run where it was.
func SetHarvestedThrough(ctx context.Context, idb bun.IDB, set, through string) error {
	_, err := idb.NewInsert().Model(&harvestState{Set: set, Through: through}).
		On("CONFLICT (set_spec) DO UPDATE").
		Set("through = EXCLUDED.through").
		Where("harvest_state.through < EXCLUDED.through").
		Exec(ctx)
	return err
}
