package ingest

import (
	"context"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/names"
)

// writeInstitutions upserts institutions by ROR id (or OpenAlex id when
// there is none) and replaces their alternative names.
func writeInstitutions(ctx context.Context, tx bun.Tx, in []*Institution) (Counts, error) {
	b, c := newInstitutionBatch(in)
	if len(b.keys) == 0 {
		return c, nil
	}
	stored, signatures, err := b.stored(ctx, tx)
	if err != nil {
		return c, err
	}
	rows, inserts := b.changed(stored, signatures, &c)
	if err := insertInstitutions(ctx, tx, inserts); err != nil {
		return c, err
	}
	return c, b.upsert(ctx, tx, rows)
}

// institutionBatch is a batch's institution records, one per key: the
// ROR id, or "openalex:" and the OpenAlex id when there is none.
type institutionBatch struct {
	byKey map[string]*Institution
	keys  []string // in the order first met
}

// newInstitutionBatch keeps the last record of each key, and counts the
// records with no id or no name as skipped.
func newInstitutionBatch(in []*Institution) (institutionBatch, Counts) {
	var c Counts
	b := institutionBatch{byKey: map[string]*Institution{}}
	for _, r := range in {
		if r.ROR == "" && r.OpenAlexID == "" || r.Name == "" {
			c.Skipped++
			continue
		}
		k := r.ROR
		if k == "" {
			k = "openalex:" + r.OpenAlexID
		}
		if b.byKey[k] == nil {
			b.keys = append(b.keys, k)
		}
		b.byKey[k] = r
	}
	return b, c
}

// record returns the batch's record of a row.
func (b institutionBatch) record(row *db.Institution) *Institution {
	if r := b.byKey[row.RORID]; r != nil {
		return r
	}
	return b.byKey["openalex:"+row.OpenAlexID]
}

// stored reads the stored institutions of the batch, keyed as the batch
// is (and by OpenAlex id too), and the signatures of their names.
func (b institutionBatch) stored(ctx context.Context, tx bun.Tx) (map[string]*db.Institution, map[int64]string, error) {
	var rors, oas []string
	for _, k := range b.keys {
		r := b.byKey[k]
		if r.ROR != "" {
			rors = append(rors, r.ROR)
		}
		if r.OpenAlexID != "" {
			oas = append(oas, r.OpenAlexID)
		}
	}
	existing, err := db.InstitutionsByKeys(ctx, tx, rors, oas)
	if err != nil {
		return nil, nil, err
	}
	stored := map[string]*db.Institution{}
	ids := make([]int64, 0, len(existing))
	for _, e := range existing {
		if e.RORID != "" {
			stored[e.RORID] = e
		}
		if e.OpenAlexID != "" {
			stored["openalex:"+e.OpenAlexID] = e
		}
		ids = append(ids, e.ID)
	}
	signatures, err := storedNameSignatures(ctx, tx, ids)
	return stored, signatures, err
}

// changed merges each record into its stored row, or makes a new row of
// it, and returns the rows to write (the new ones also in inserts),
// counting what it found in c.
func (b institutionBatch) changed(stored map[string]*db.Institution, signatures map[int64]string, c *Counts) (rows, inserts []*db.Institution) {
	for _, k := range b.keys {
		r := b.byKey[k]
		old := stored[k]
		if old == nil && r.OpenAlexID != "" {
			old = stored["openalex:"+r.OpenAlexID]
		}
		row := &db.Institution{RORID: r.ROR, OpenAlexID: r.OpenAlexID, Name: clean(r.Name), Country: strings.ToUpper(r.Country),
			Types: strings.Join(r.Types, ","), Status: r.Status, Established: r.Established}
		switch {
		case old == nil:
			c.Inserted++
			inserts = append(inserts, row)
		case fillInstitution(old, row) || namesSignature(nameRowsOf(old.ID, r)) != signatures[old.ID]:
			c.Updated++
			row = old
		default:
			c.Unchanged++
			continue
		}
		rows = append(rows, row)
	}
	return rows, inserts
}

// insertInstitutions inserts new institutions and sets their ids.
func insertInstitutions(ctx context.Context, tx bun.Tx, inserts []*db.Institution) error {
	if len(inserts) == 0 {
		return nil
	}
	got, err := db.InsertInstitutions(ctx, tx, inserts)
	if err != nil {
		return err
	}
	// RETURNING's row order is not promised, so ids are matched back by key.
	ids := map[string]int64{}
	for _, g := range got {
		ids[g.RORID+"|"+g.OpenAlexID] = g.ID
	}
	for _, r := range inserts {
		r.ID = ids[r.RORID+"|"+r.OpenAlexID]
	}
	return nil
}

// upsert writes rows and replaces their names with those of the batch's
// records.
func (b institutionBatch) upsert(ctx context.Context, tx bun.Tx, rows []*db.Institution) error {
	if len(rows) == 0 {
		return nil
	}
	var nameRows []db.InstitutionName
	for _, row := range rows {
		nameRows = append(nameRows, nameRowsOf(row.ID, b.record(row))...)
	}
	return db.UpdateInstitutions(ctx, tx, rows, nameRows)
}

// nameRowsOf lists the names an institution record gives, its display
// name first, each once.
func nameRowsOf(id int64, r *Institution) []db.InstitutionName {
	var out []db.InstitutionName
	seen := map[string]bool{}
	for _, n := range append([]InstitutionName{{Value: r.Name, Kind: "name"}}, r.Names...) {
		v := clean(n.Value)
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, db.InstitutionName{InstitutionID: id, Name: v, Kind: n.Kind, NameKey: foldKey(v)})
	}
	return out
}

// namesSignature is a list of names as one comparable string.
func namesSignature(ns []db.InstitutionName) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.Kind + "\x00" + n.Name
	}
	slices.Sort(parts)
	return strings.Join(parts, "\x01")
}

// storedNameSignatures returns the namesSignature of each stored
// institution's names.
func storedNameSignatures(ctx context.Context, tx bun.Tx, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.AllInstitutionNames(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	by := map[int64][]db.InstitutionName{}
	for _, r := range rows {
		by[r.InstitutionID] = append(by[r.InstitutionID], r)
	}
	for id, ns := range by {
		out[id] = namesSignature(ns)
	}
	return out, nil
}

// fillInstitution takes every value the new record has; institution
// records are whole descriptions, so the newer one wins field by field.
// It reports whether old changed.
func fillInstitution(old, in *db.Institution) bool {
	before := *old
	for _, f := range []struct{ dst, src *string }{
		{&old.RORID, &in.RORID}, {&old.OpenAlexID, &in.OpenAlexID}, {&old.Name, &in.Name},
		{&old.Country, &in.Country}, {&old.Types, &in.Types}, {&old.Status, &in.Status},
	} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	if in.Established != 0 {
		old.Established = in.Established
	}
	return *old != before
}

// foldKey is the matching key of an institution name: folded lowercase
// words joined by single spaces.
func foldKey(s string) string { return strings.Join(names.Words(s), " ") }
