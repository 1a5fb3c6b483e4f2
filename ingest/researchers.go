package ingest

import (
	"context"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/names"
)

// authorRef is one author (or external profile) to be matched to a
// researcher. key is the name's matching key, computed once: parsing a
// name is the costly part of matching. resolve fills id, entry and created.
type authorRef struct {
	name, key, family   string
	orcid, openalex, s2 string
	profile             *Researcher
	id                  int64
	entry               *resEntry
	created             bool
}

func newAuthorRef(a *Author) *authorRef {
	return &authorRef{name: a.Name, key: a.key, family: a.family, orcid: a.ORCID, openalex: a.OpenAlexID, s2: a.S2ID}
}

func newProfileRef(r *Researcher) *authorRef {
	key, family := names.Keys(r.Name)
	return &authorRef{name: r.Name, key: key, family: family, orcid: r.ORCID, openalex: r.OpenAlexID, s2: r.S2ID, profile: r}
}

func (r *authorRef) extKeys() []string {
	return idKeys("orcid:", r.orcid, "openalex:", r.openalex, "s2:", r.s2)
}

// resEntry is a researcher row as the current import knows it.
type resEntry struct{ row db.Researcher }

// conflicts reports whether ref carries an external id that differs from
// one the researcher already has: then they are different people.
func (e *resEntry) conflicts(ref *authorRef) bool {
	differ := func(a, b string) bool { return a != "" && b != "" && a != b }
	return differ(e.row.ORCID, ref.orcid) || differ(e.row.OpenAlexID, ref.openalex) || differ(e.row.S2ID, ref.s2)
}

// fill attaches the external ids of ref that the researcher lacks and
// reports whether any was new.
func (e *resEntry) fill(ref *authorRef) bool {
	changed := false
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&e.row.ORCID, ref.orcid}, {&e.row.OpenAlexID, ref.openalex}, {&e.row.S2ID, ref.s2},
	} {
		if f.src != "" && *f.dst == "" {
			*f.dst = f.src
			changed = true
		}
	}
	return changed
}

// researcherIndex matches authors to researchers: by external id first,
// then by the same normalised full name. It caches what it has looked up
// for the length of one import.
type researcherIndex struct {
	byName map[string][]*resEntry
	byExt  map[string]*resEntry
	byID   map[int64]*resEntry
	loaded map[string]bool // name and external keys already looked up
}

func newResearcherIndex() *researcherIndex {
	return &researcherIndex{
		byName: map[string][]*resEntry{},
		byExt:  map[string]*resEntry{},
		byID:   map[int64]*resEntry{},
		loaded: map[string]bool{},
	}
}

func (x *researcherIndex) add(e *resEntry) {
	x.byName[e.row.NameKey] = append(x.byName[e.row.NameKey], e)
	x.index(e)
}

func (x *researcherIndex) index(e *resEntry) {
	for _, k := range []string{"orcid:" + e.row.ORCID, "openalex:" + e.row.OpenAlexID, "s2:" + e.row.S2ID} {
		if !strings.HasSuffix(k, ":") {
			x.byExt[k] = e
		}
	}
}

// load reads the researchers of the given keys that are not cached yet.
func (x *researcherIndex) load(ctx context.Context, tx bun.Tx, refs []*authorRef) error {
	var nameKeys, orcids, oas, s2s []string
	want := func(k string) bool {
		if x.loaded[k] {
			return false
		}
		x.loaded[k] = true
		return true
	}
	for _, r := range refs {
		if r.key != "" && want("name:"+r.key) {
			nameKeys = append(nameKeys, r.key)
		}
		if r.orcid != "" && want("orcid:"+r.orcid) {
			orcids = append(orcids, r.orcid)
		}
		if r.openalex != "" && want("openalex:"+r.openalex) {
			oas = append(oas, r.openalex)
		}
		if r.s2 != "" && want("s2:"+r.s2) {
			s2s = append(s2s, r.s2)
		}
	}
	if len(nameKeys)+len(orcids)+len(oas)+len(s2s) == 0 {
		return nil
	}
	var rows []db.Researcher
	q := tx.NewSelect().Model(&rows).Order("id")
	orIn(q, "name_key", nameKeys)
	orIn(q, "orcid", orcids)
	orIn(q, "openalex_id", oas)
	orIn(q, "s2_id", s2s)
	if err := q.Scan(ctx); err != nil {
		return err
	}
	for _, r := range rows {
		if x.byID[r.ID] != nil {
			continue
		}
		e := &resEntry{row: r}
		x.byID[r.ID] = e
		x.add(e)
	}
	return nil
}

// resolve matches every ref to a researcher, creating researchers for
// names met for the first time and attaching new external ids to the
// researchers they matched.
func (x *researcherIndex) resolve(ctx context.Context, tx bun.Tx, refs []*authorRef) error {
	if err := x.load(ctx, tx, refs); err != nil {
		return err
	}
	var created, attached []*resEntry
	for _, r := range refs {
		key := r.key
		var e *resEntry
		for _, k := range r.extKeys() {
			if e = x.byExt[k]; e != nil {
				break
			}
		}
		if e == nil {
			for _, c := range x.byName[key] {
				if !c.conflicts(r) {
					e = c
					break
				}
			}
		}
		switch {
		case e == nil && key == "":
			continue // nothing to match by: the authorship stays unmatched
		case e == nil:
			e = &resEntry{row: db.Researcher{
				Name: strings.TrimSpace(r.name), NameKey: key, FamilyKey: r.family,
				Slug: arxivid.TitleSlug(r.name), ORCID: r.orcid, OpenAlexID: r.openalex, S2ID: r.s2,
			}}
			x.add(e)
			created = append(created, e)
			r.created = true
		case e.fill(r):
			x.index(e)
			if e.row.ID != 0 {
				attached = append(attached, e)
			}
		}
		r.entry = e
	}
	if err := x.insert(ctx, tx, created); err != nil {
		return err
	}
	for _, r := range refs {
		if r.entry != nil {
			r.id = r.entry.row.ID
		}
	}
	rows := make([]*db.Researcher, 0, len(attached))
	ids := make([]int64, 0, len(attached))
	seen := map[int64]bool{}
	for _, e := range attached {
		if !seen[e.row.ID] {
			seen[e.row.ID] = true
			rows = append(rows, &e.row)
			ids = append(ids, e.row.ID)
		}
	}
	if err := upsertResearchers(ctx, tx, rows); err != nil {
		return err
	}
	// An external id now set changes how initials and same names match.
	return db.QueueResearchers(ctx, tx, ids)
}

func (x *researcherIndex) insert(ctx context.Context, tx bun.Tx, es []*resEntry) error {
	if len(es) == 0 {
		return nil
	}
	n := len(es)
	name, nameKey, familyKey, slug := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	orcid, oa, s2 := make([]*string, n), make([]*string, n), make([]*string, n)
	h, cites, works := make([]*int64, n), make([]*int64, n), make([]*int64, n)
	for i, e := range es {
		r := &e.row
		name[i], nameKey[i], familyKey[i], slug[i] = r.Name, r.NameKey, r.FamilyKey, r.Slug
		orcid[i], oa[i], s2[i] = nullText(r.ORCID), nullText(r.OpenAlexID), nullText(r.S2ID)
		h[i], cites[i], works[i] = nullInt(r.HIndex), nullInt(r.CitationCount), nullInt(r.WorksCount)
	}
	// RETURNING's row order is not promised, so ids are matched back by
	// the values that make each new row unique in the batch.
	got, err := db.InsertColumnsReturning[db.Researcher](ctx, tx, "researchers",
		[]string{"name", "name_key", "family_key", "slug", "orcid", "openalex_id", "s2_id", "h_index", "citation_count", "works_count"},
		"id, name_key, orcid, openalex_id, s2_id",
		name, nameKey, familyKey, slug, orcid, oa, s2, h, cites, works)
	if err != nil {
		return err
	}
	key := func(r *db.Researcher) string {
		return r.NameKey + "\x00" + r.ORCID + "\x00" + r.OpenAlexID + "\x00" + r.S2ID
	}
	ids := make(map[string]int64, len(got))
	for i := range got {
		ids[key(&got[i])] = got[i].ID
	}
	for _, e := range es {
		e.row.ID = ids[key(&e.row)]
		x.byID[e.row.ID] = e
	}
	return nil
}

// writeResearchers stores external author profiles (OpenAlex, S2),
// attaching them to the researcher they match.
func (w *writer) writeResearchers(ctx context.Context, tx bun.Tx, in []*Researcher) (Counts, error) {
	var c Counts
	if len(in) == 0 {
		return c, nil
	}
	refs := make([]*authorRef, 0, len(in))
	for _, r := range in {
		if r.ORCID == "" && r.OpenAlexID == "" && r.S2ID == "" {
			c.Skipped++
			continue
		}
		refs = append(refs, newProfileRef(r))
	}
	if err := w.researchers.resolve(ctx, tx, refs); err != nil {
		return c, err
	}
	var rows []*db.Researcher
	seen := map[int64]bool{}
	for _, ref := range refs {
		e := ref.entry
		if ref.created {
			c.Inserted++
		}
		before := e.row
		e.fill(ref)
		fillInt(&e.row.HIndex, ref.profile.HIndex)
		fillInt(&e.row.CitationCount, ref.profile.CitationCount)
		fillInt(&e.row.WorksCount, ref.profile.WorksCount)
		if sameResearcher(before, e.row) {
			if !ref.created {
				c.Unchanged++
			}
			continue
		}
		if !ref.created {
			c.Updated++
		}
		if !seen[e.row.ID] {
			seen[e.row.ID] = true
			rows = append(rows, &e.row)
		}
	}
	if err := upsertResearchers(ctx, tx, rows); err != nil {
		return c, err
	}
	// A new or changed profile can make or break same-name links.
	ids := make([]int64, 0, len(refs))
	for _, ref := range refs {
		if ref.created || seen[ref.entry.row.ID] {
			ids = append(ids, ref.entry.row.ID)
		}
	}
	return c, db.QueueResearchers(ctx, tx, ids)
}

func fillInt(dst **int, src *int) {
	if src != nil {
		v := *src
		*dst = &v
	}
}

func sameResearcher(a, b db.Researcher) bool {
	eq := func(x, y *int) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return a.ORCID == b.ORCID && a.OpenAlexID == b.OpenAlexID && a.S2ID == b.S2ID &&
		eq(a.HIndex, b.HIndex) && eq(a.CitationCount, b.CitationCount) && eq(a.WorksCount, b.WorksCount)
}

var researcherColumns = []string{"orcid", "openalex_id", "s2_id", "h_index", "citation_count", "works_count"}

func upsertResearchers(ctx context.Context, tx bun.Tx, rows []*db.Researcher) error {
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, func(a, b *db.Researcher) int { return int(a.ID - b.ID) })
	return db.UpsertByID(ctx, tx, &rows, researcherColumns)
}
