package db

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// EnrichCheck records that papergraph enrich asked a remote source about
// a paper or a researcher (ItemID is the id of the one the source is
// about), whatever the answer was.
type EnrichCheck struct {
	bun.BaseModel `bun:"table:enrich_checks"`

	Source    string    `bun:"source,pk"`
	ItemID    int64     `bun:"item_id,pk"`
	CheckedAt time.Time `bun:"checked_at,notnull"`
}

// EnrichPaper is a paper to ask a remote source about.
type EnrichPaper struct {
	ID        int64     `bun:"id"`
	ArxivID   string    `bun:"arxiv_id"`
	DOI       string    `bun:"doi"`
	Published time.Time `bun:"published,nullzero"`
}

// PapersToEnrich returns up to limit papers that source has not been asked
// about (or not since staleBefore, when that is set), newest first, after
// the paper after (nil: from the newest), then those without a date, the
// highest id first. It skips papers with neither an arXiv id nor a DOI to
// ask by. Each call reads papers_published from where the last one ended,
// so a run over the whole archive reads the index once.
func PapersToEnrich(ctx context.Context, idb bun.IDB, source string, staleBefore time.Time, after *EnrichPaper, limit int) ([]EnrichPaper, error) {
	q := func(dated bool, after *EnrichPaper) ([]EnrichPaper, error) {
		var ps []EnrichPaper
		sq := idb.NewSelect().TableExpr("papers AS p").
			ColumnExpr("p.id, COALESCE(p.arxiv_id, '') AS arxiv_id, COALESCE(p.doi, '') AS doi, p.published").
			Join("LEFT JOIN enrich_checks AS c ON c.source = ? AND c.item_id = p.id", source).
			Apply(notCheckedSince(staleBefore)).
			Where("p.arxiv_id IS NOT NULL OR p.doi IS NOT NULL")
		switch {
		case dated && after != nil:
			sq.Where("p.published < ? OR (p.published = ? AND p.id < ?)", after.Published, after.Published, after.ID)
		case dated:
			sq.Where("p.published IS NOT NULL")
		case after != nil:
			sq.Where("p.published IS NULL AND p.id < ?", after.ID)
		default:
			sq.Where("p.published IS NULL")
		}
		if dated {
			sq.OrderExpr("p.published DESC, p.id DESC")
		} else {
			sq.OrderExpr("p.id DESC")
		}
		err := sq.Limit(int64(limit)).Scan(ctx, &ps)
		return ps, err
	}
	if after == nil || !after.Published.IsZero() {
		ps, err := q(true, after)
		if err != nil || len(ps) > 0 {
			return ps, err
		}
		after = nil // the dated papers are done: the others from the top
	}
	return q(false, after)
}

// EnrichResearcher is a researcher linked to an external profile, to ask
// that profile's source about.
type EnrichResearcher struct {
	ID         int64  `bun:"id"`
	ExternalID string `bun:"external_id"`
}

// ResearchersToEnrich returns up to limit researchers with an OpenAlex id
// (s2 false) or a Semantic Scholar id (s2 true) that source has not been
// asked about (or not since staleBefore, when that is set), the most
// recently created first, from below the id before (0: from the top).
func ResearchersToEnrich(ctx context.Context, idb bun.IDB, source string, s2 bool, staleBefore time.Time, before int64, limit int) ([]EnrichResearcher, error) {
	col := bun.Ident("openalex_id")
	if s2 {
		col = bun.Ident("s2_id")
	}
	var rs []EnrichResearcher
	err := idb.NewSelect().TableExpr("researchers AS r").
		ColumnExpr("r.id, r.? AS external_id", col).
		Join("LEFT JOIN enrich_checks AS c ON c.source = ? AND c.item_id = r.id", source).
		Apply(notCheckedSince(staleBefore)).
		Where("r.? IS NOT NULL", col).
		Apply(func(q *bun.SelectQuery) *bun.SelectQuery {
			if before > 0 {
				return q.Where("r.id < ?", before)
			}
			return q
		}).
		OrderExpr("r.id DESC").
		Limit(int64(limit)).Scan(ctx, &rs)
	return rs, err
}

// MarkEnriched records that source was asked about the items ids at at.
func MarkEnriched(ctx context.Context, idb bun.IDB, source string, ids []int64, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	rows := make([]EnrichCheck, len(ids))
	for i, id := range ids {
		rows[i] = EnrichCheck{Source: source, ItemID: id, CheckedAt: at.UTC().Truncate(time.Second)}
	}
	_, err := idb.NewInsert().Model(&rows).
		On("CONFLICT (source, item_id) DO UPDATE").Set("checked_at = EXCLUDED.checked_at").
		Exec(ctx)
	return err
}

// notCheckedSince keeps the rows that enrich_checks (joined as c) has no
// row for, or, when staleBefore is set, an older one.
func notCheckedSince(staleBefore time.Time) func(*bun.SelectQuery) *bun.SelectQuery {
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		if staleBefore.IsZero() {
			return q.Where("c.item_id IS NULL")
		}
		return q.Where("c.item_id IS NULL OR c.checked_at < ?", staleBefore.UTC())
	}
}
