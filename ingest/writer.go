package ingest

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/uptrace/bun"
)

// Counts tallies what a write did to the records it was given.
type Counts struct {
	Inserted  int
	Updated   int
	Unchanged int
	Skipped   int // records with nothing to place them by
}

func (c *Counts) add(o Counts) {
	c.Inserted += o.Inserted
	c.Updated += o.Updated
	c.Unchanged += o.Unchanged
	c.Skipped += o.Skipped
}

// writer upserts batches of records, one transaction per batch. It keeps
// the researcher lookups of the current import in memory, so that a name
// seen in many papers costs one query in all.
type writer struct {
	db          *bun.DB
	researchers *researcherIndex
	categories  map[string]bool // codes known to be in the categories table
	// onCommit, when set, is told the ids of the papers and researchers
	// each committed batch wrote (see Options.OnCommit).
	onCommit func(papers, researchers []int64)
	// papers and people collect the current batch's ids for onCommit.
	papers, people []int64
	// bulk is set during a bulk load (db.BeginBulk), when nearly every
	// author is new to the archive: the authors of new papers are then
	// queued to be recomputed, rather than the papers to be added to
	// their figures (db.QueueAddedPapers), which would read every
	// authorship of the load a second time to find them queued.
	bulk bool
}

func newWriter(bdb *bun.DB) *writer {
	return &writer{db: bdb, researchers: newResearcherIndex(), categories: map[string]bool{}}
}

// write stores one batch in one transaction. On error nothing of the batch
// is kept and the in-memory indexes are reset, since they may hold rows
// the rolled-back transaction created.
func (w *writer) write(ctx context.Context, batch []Record) (Counts, error) {
	var papers []*Paper
	var people []*Researcher
	var insts []*Institution
	for _, r := range batch {
		switch r := r.(type) {
		case *Paper:
			papers = append(papers, r)
		case *Researcher:
			people = append(people, r)
		case *Institution:
			insts = append(insts, r)
		}
	}
	var c Counts
	w.papers, w.people = nil, nil
	err := w.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ic, err := writeInstitutions(ctx, tx, insts)
		if err != nil {
			return fmt.Errorf("institutions: %w", err)
		}
		rc, err := w.writeResearchers(ctx, tx, people)
		if err != nil {
			return fmt.Errorf("researchers: %w", err)
		}
		pc, err := w.writePapers(ctx, tx, papers)
		if err != nil {
			return fmt.Errorf("papers: %w", err)
		}
		c.add(ic)
		c.add(rc)
		c.add(pc)
		return nil
	})
	if err != nil {
		w.researchers = newResearcherIndex()
		w.categories = map[string]bool{}
		return Counts{}, err
	}
	if w.onCommit != nil && (len(w.papers) > 0 || len(w.people) > 0) {
		w.onCommit(w.papers, w.people)
	}
	// Everything cached is committed now: past its bound the cache starts
	// again, and the next batches read the researchers they meet.
	if w.researchers.size() > maxCachedResearchers {
		w.researchers = newResearcherIndex()
	}
	return c, nil
}

// maxCachedResearchers bounds the writer's researcher cache (entries and
// keys looked up), which otherwise holds every researcher an import meets
// and so grows with the archive.
var maxCachedResearchers = 100_000

// idKeys returns the matching keys of the ids that are set, given as
// pairs of a key's prefix and an id, in the order given.
func idKeys(prefixAndID ...string) []string {
	var ks []string
	for i := 0; i+1 < len(prefixAndID); i += 2 {
		if id := prefixAndID[i+1]; id != "" {
			ks = append(ks, prefixAndID[i]+id)
		}
	}
	return ks
}

// clean collapses the line wrapping of metadata text.
// Most fields come clean from their reader; those are returned as they are.
func clean(s string) string {
	if isClean(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// isClean reports whether s has no leading, trailing or repeated space and
// no space other than ' '.
func isClean(s string) bool {
	prevSpace := true // a leading space is not clean
	for _, r := range s {
		space := unicode.IsSpace(r)
		if space && (prevSpace || r != ' ') {
			return false
		}
		prevSpace = space
	}
	return !prevSpace || s == ""
}

// day keeps times in UTC at second precision, which is what both databases
// store and compare alike.
func day(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Second)
}
