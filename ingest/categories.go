package ingest

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// canonicalCategories maps a source's category list to canonical codes in
// order without repeats, dropping strings that are not categories; nil
// when none is left.
func canonicalCategories(in []string) []string {
	var out []string
	for _, c := range in {
		if code, _, ok := db.CanonicalCategory(c); ok && !slices.Contains(out, code) {
			out = append(out, code)
		}
	}
	return out
}

// ensureCategories adds the codes the taxonomy lacks as flagged
// categories, so that papers keep them.
func (w *writer) ensureCategories(ctx context.Context, tx bun.Tx, ps []*pending) error {
	var unknown []db.Category
	for _, p := range ps {
		for _, code := range p.cats {
			if _, known, _ := db.CanonicalCategory(code); !known && !w.categories[code] {
				w.categories[code] = true
				unknown = append(unknown, db.UnknownCategory(code))
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return db.AddCategories(ctx, tx, unknown)
}

// writeCategories replaces the category lists of papers whose list
// changed, and brings the date on the category rows of the other stored
// papers whose date moved up to their paper's.
func writeCategories(ctx context.Context, tx bun.Tx, ps []*pending) error {
	var ids []int64   // stored papers whose old list goes
	var dated []int64 // stored papers whose list stays and whose date moved
	var paper, position []int64
	var code []string
	var published []*time.Time
	for _, p := range ps {
		if !p.writeCats {
			if !p.isNew && p.dateMoved {
				dated = append(dated, p.row.ID)
			}
			continue
		}
		if !p.isNew {
			ids = append(ids, p.row.ID)
		}
		date := p.published()
		for i, c := range p.cats {
			paper = append(paper, p.row.ID)
			position = append(position, int64(i))
			code = append(code, c)
			published = append(published, date)
		}
	}
	if err := db.ReplacePaperCategories(ctx, tx, ids, paper, position, code, published); err != nil {
		return err
	}
	return db.SyncCategoryDates(ctx, tx, dated)
}
