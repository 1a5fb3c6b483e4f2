package ingest

import (
	"context"
	"strings"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/names"
)

// writeAuthors replaces the author lists that are to be rewritten,
// matching each author to a researcher, and returns the researchers it
// wrote authorships of, and of those the ones to recompute: the authors
// of papers already stored, the profiles it created, and in a bulk load
// all.
func (w *writer) writeAuthors(ctx context.Context, tx bun.Tx, ps []*pending) (queue, recompute []int64, err error) {
	var ids []int64   // stored papers whose old list goes
	var dated []int64 // stored papers whose list stays and whose date moved
	var refs []*authorRef
	n := 0
	for _, p := range ps {
		if p.authors == nil {
			if !p.isNew && p.dateMoved {
				dated = append(dated, p.row.ID)
			}
			continue
		}
		n++
		if !p.isNew {
			ids = append(ids, p.row.ID)
		}
		for i := range p.authors.Authors {
			refs = append(refs, newAuthorRef(&p.authors.Authors[i]))
		}
	}
	if err := db.SyncAuthorshipDates(ctx, tx, dated); err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, nil
	}
	if err := w.researchers.resolve(ctx, tx, refs); err != nil {
		return nil, nil, err
	}
	var b db.Bylines
	k := 0
	for _, p := range ps {
		if p.authors == nil {
			continue
		}
		published := p.published()
		for i, a := range p.authors.Authors {
			b.Paper = append(b.Paper, p.row.ID)
			b.Published = append(b.Published, published)
			b.Position = append(b.Position, int64(i+1))
			b.Name = append(b.Name, a.Name)
			var rid *int64
			if id := refs[k].id; id != 0 {
				rid = &refs[k].id
				queue = append(queue, id)
				if w.bulk || !p.isNew || refs[k].created {
					recompute = append(recompute, id)
				}
			}
			b.Researcher = append(b.Researcher, rid)
			k++
			for j, af := range a.Affiliations {
				b.Affiliations = append(b.Affiliations, db.Affiliation{PaperID: p.row.ID, Position: i + 1, Seq: j + 1, Raw: clean(af.Raw), RORID: af.ROR})
			}
		}
	}
	if len(ids) > 0 {
		if err := db.DeleteBylines(ctx, tx, ids); err != nil {
			return nil, nil, err
		}
	}
	if err := db.InsertBylines(ctx, tx, b); err != nil {
		return nil, nil, err
	}
	return queue, recompute, nil
}

// queueAuthors puts the researchers of the given papers on the derive
// queue.
func queueAuthors(ctx context.Context, tx bun.Tx, ps []*pending) error {
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.row.ID
	}
	return db.QueueAuthorsOf(ctx, tx, ids)
}

// authorsScore ranks how much an author list tells: a complete list beats
// a truncated one, full given names beat initials, external ids and
// affiliations add. A source replaces the stored list only with a better one.
func authorsScore(p *Paper) int {
	if len(p.Authors) == 0 {
		return 0
	}
	s := 0
	if p.AuthorsComplete {
		s += 1 << 20
	}
	if p.Byline != "" {
		s++ // the source printed the byline itself, rather than a list of names
	}
	for _, a := range p.Authors {
		s++
		if !names.InitialsOnly(a.Name) {
			s++
		}
		if a.ORCID != "" || a.OpenAlexID != "" || a.S2ID != "" {
			s += 2
		}
		if len(a.Affiliations) > 0 {
			s++
		}
	}
	return s
}

func bylineOf(as []Author) string {
	ns := make([]string, len(as))
	for i, a := range as {
		ns[i] = a.Name
	}
	return strings.Join(ns, ", ")
}
