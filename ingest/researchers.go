package ingest

import (
	"context"
	"strings"
	"time"

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

// size is the number of researchers and looked-up keys cached.
func (x *researcherIndex) size() int { return len(x.byID) + len(x.loaded) }

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
	var k db.ResearcherKeys
	want := func(k string) bool {
		if x.loaded[k] {
			return false
		}
		x.loaded[k] = true
		return true
	}
	for _, r := range refs {
		if r.key != "" && want("name:"+r.key) {
			k.NameKeys = append(k.NameKeys, r.key)
		}
		if r.orcid != "" && want("orcid:"+r.orcid) {
			k.ORCIDs = append(k.ORCIDs, r.orcid)
		}
		if r.openalex != "" && want("openalex:"+r.openalex) {
			k.OpenAlexIDs = append(k.OpenAlexIDs, r.openalex)
		}
		if r.s2 != "" && want("s2:"+r.s2) {
			k.S2IDs = append(k.S2IDs, r.s2)
		}
	}
	if len(k.NameKeys)+len(k.ORCIDs)+len(k.OpenAlexIDs)+len(k.S2IDs) == 0 {
		return nil
	}
	rows, err := db.ResearchersByKeys(ctx, tx, k)
	if err != nil {
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
	if err := db.UpdateResearcherProfiles(ctx, tx, rows); err != nil {
		return err
	}
	// An external id now set changes how initials and same names match.
	return db.QueueResearchers(ctx, tx, ids)
}

func (x *researcherIndex) insert(ctx context.Context, tx bun.Tx, es []*resEntry) error {
	if len(es) == 0 {
		return nil
	}
	rows := make([]*db.Researcher, len(es))
	for i, e := range es {
		rows[i] = &e.row
	}
	// RETURNING's row order is not promised, so ids are matched back by
	// the values that make each new row unique in the batch.
	got, err := db.InsertResearchers(ctx, tx, rows)
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
		if p := ref.profile; p.FiguresSource != "" && (p.HIndex != nil || p.CitationCount != nil || p.WorksCount != nil) &&
			(!sameFigures(before, e.row) || e.row.FiguresSource == "") {
			e.row.FiguresSource, e.row.FiguresAt = p.FiguresSource, day(time.Now())
		}
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
	if err := db.UpdateResearcherProfiles(ctx, tx, rows); err != nil {
		return c, err
	}
	// A changed profile (its figures, its ids) is news for the
	// researcher's subscribers (see Options.OnCommit).
	for _, r := range rows {
		w.people = append(w.people, r.ID)
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
	return a.ORCID == b.ORCID && a.OpenAlexID == b.OpenAlexID && a.S2ID == b.S2ID &&
		sameFigures(a, b) && a.FiguresSource == b.FiguresSource
}

// sameFigures reports whether a and b have the same external figures.
func sameFigures(a, b db.Researcher) bool {
	eq := func(x, y *int) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return eq(a.HIndex, b.HIndex) && eq(a.CitationCount, b.CitationCount) && eq(a.WorksCount, b.WorksCount)
}
