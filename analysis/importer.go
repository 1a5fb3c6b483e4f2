package analysis

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/ingest"
)

// ImportOptions configure an import of analysis files.
type ImportOptions struct {
	// FS, when set, holds the paths; otherwise they are on disk.
	FS    fs.FS
	Paths []string
	// Bad is told about every record skipped: malformed, or of a paper
	// the archive does not hold.
	Bad func(*ingest.RecordError)
	// Now is the time an analysis without analysed_at is written at
	// (time.Now when nil).
	Now func() time.Time
}

// ImportSummary counts what an import of analyses did.
type ImportSummary struct {
	Read      int // good records
	Written   int // analyses written, new or changed
	Unchanged int // analyses the database already held
	Bad       int // records skipped
}

// importBatch is how many records one transaction writes.
const importBatch = 500

// maxLine is the longest line an analysis file may have.
const maxLine = 1 << 20

// pending is a good record with where it was read.
type pending struct {
	rec Record
	at  time.Time
	pos ingest.Position
}

// Import writes the analyses of the JSON-lines files of o, a record a
// line: an analysis of the paper with arXiv id arxiv_id (any form the
// archive's ids take). A record that is not JSON of the record schema, or
// names a paper the archive does not hold, is reported to o.Bad with its
// file and line and skipped; the good records are written. A record equal
// to the stored analysis changes nothing, so a rerun writes nothing.
func Import(ctx context.Context, bdb *bun.DB, o ImportOptions) (ImportSummary, error) {
	var sum ImportSummary
	now := o.Now
	if now == nil {
		now = time.Now
	}
	for _, path := range o.Paths {
		if err := importFile(ctx, bdb, o, path, now, &sum); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

func importFile(ctx context.Context, bdb *bun.DB, o ImportOptions, path string, now func() time.Time, sum *ImportSummary) error {
	var f io.ReadCloser
	var err error
	if o.FS != nil {
		f, err = o.FS.Open(path)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	defer f.Close()
	bad := func(pos ingest.Position, reason string) {
		sum.Bad++
		if o.Bad != nil {
			o.Bad(&ingest.RecordError{Pos: pos, Reason: reason})
		}
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var batch []pending
	for line := 1; ; line++ {
		raw, err := readLine(r)
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if raw = bytes.TrimSpace(raw); len(raw) > 0 {
			pos := ingest.Position{File: path, Line: line}
			if p, reason := parseRecord(raw, now); reason != "" {
				bad(pos, reason)
			} else {
				p.pos = pos
				batch = append(batch, p)
			}
		}
		if len(batch) == importBatch || (err == io.EOF && len(batch) > 0) {
			if werr := writeBatch(ctx, bdb, batch, bad, sum); werr != nil {
				return werr
			}
			batch = batch[:0]
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine reads one line, however long, without its newline; a line
// longer than maxLine is an error.
func readLine(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := r.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxLine)
		}
		if err != bufio.ErrBufferFull {
			return bytes.TrimSuffix(out, []byte("\n")), err
		}
	}
}

// parseRecord checks one line; reason says what is wrong with it.
func parseRecord(raw []byte, now func() time.Time) (pending, string) {
	var p pending
	if err := recordValidator.decode(raw, &p.rec); err != nil {
		return p, err.Error()
	}
	id, _, err := arxivid.Parse(p.rec.ArxivID)
	if err != nil {
		return p, fmt.Sprintf("arxiv_id: %v", err)
	}
	p.rec.ArxivID = id
	p.at = now()
	if p.rec.AnalysedAt != "" {
		if p.at, err = time.Parse(time.RFC3339, p.rec.AnalysedAt); err != nil {
			return p, fmt.Sprintf("analysed_at %q is not an RFC 3339 time", p.rec.AnalysedAt)
		}
	}
	return p, ""
}

// writeBatch writes the analyses of a batch of good records in one
// transaction.
func writeBatch(ctx context.Context, bdb *bun.DB, batch []pending, bad func(ingest.Position, string), sum *ImportSummary) error {
	ids := make([]string, len(batch))
	for i, p := range batch {
		ids[i] = p.rec.ArxivID
	}
	return bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		papers, _, err := db.PapersByRefs(ctx, tx, ids, nil)
		if err != nil {
			return err
		}
		pids := make([]int64, 0, len(papers))
		for _, p := range papers {
			pids = append(pids, p.ID)
		}
		stored, err := db.AnalysesByPaperIDs(ctx, tx, pids)
		if err != nil {
			return err
		}
		var rows []*db.PaperAnalysis
		for _, p := range batch {
			paper := papers[p.rec.ArxivID]
			if paper == nil {
				bad(p.pos, fmt.Sprintf("no paper with arXiv id %s in the archive", p.rec.ArxivID))
				continue
			}
			sum.Read++
			row := p.rec.row(paper.ID, paper.Title, paper.Abstract, p.rec.Model, p.rec.PromptVersion, p.at)
			if old := stored[paper.ID]; old != nil && sameAnalysis(old, row, p.rec.AnalysedAt == "") {
				sum.Unchanged++
				continue
			}
			stored[paper.ID] = row // a later line of the same paper wins
			rows = append(rows, row)
		}
		rows = dedupe(rows)
		sum.Written += len(rows)
		return db.SaveAnalyses(ctx, tx, rows)
	})
}

// dedupe keeps the last row of each paper: one statement may not write a
// row twice.
func dedupe(rows []*db.PaperAnalysis) []*db.PaperAnalysis {
	seen := map[int64]bool{}
	var out []*db.PaperAnalysis
	for _, r := range slices.Backward(rows) {
		if !seen[r.PaperID] {
			seen[r.PaperID] = true
			out = append(out, r)
		}
	}
	return out
}

// sameAnalysis reports whether b says what a says; anyTime ignores when
// each was written (a record that does not say).
func sameAnalysis(a, b *db.PaperAnalysis, anyTime bool) bool {
	return a.Summary == b.Summary && a.Novelty == b.Novelty && a.PaperType == b.PaperType &&
		a.ResearchField == b.ResearchField && a.SignificanceScore == b.SignificanceScore &&
		slices.Equal(a.Keywords, b.Keywords) && a.Model == b.Model && a.PromptVersion == b.PromptVersion &&
		a.AbstractHash == b.AbstractHash && (anyTime || a.AnalysedAt.Equal(b.AnalysedAt))
}

// unwrapPathError drops the path an *fs.PathError repeats.
func unwrapPathError(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
