package ingest

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/papergraph/papergraph/arxivid"
)

// Paperscape reads the Paperscape data files: arXiv papers with their
// categories, authors, title and the arXiv ids of the papers they cite.
var Paperscape = Format{
	Name:  "paperscape",
	Reads: "Paperscape data files (pscp-YYYY.csv: id;cats;found;total;refs;authors;title)",
	Read:  readPaperscape,
}

// paperscapeFields is the number of ;-separated fields of a line; the
// title, which comes last, may itself contain ";".
const paperscapeFields = 7

func readPaperscape(ctx context.Context, e Entry, s Sink) error {
	return eachLine(ctx, e, func(line []byte, n int) error {
		if line[0] == '#' {
			return nil
		}
		f := strings.SplitN(string(line), ";", paperscapeFields)
		if len(f) != paperscapeFields {
			return s.Bad(&RecordError{Pos: e.Pos(n), Reason: fmt.Sprintf("%d fields expected, got %d", paperscapeFields, len(f))})
		}
		p, reason := newArxivPaper(f[0], f[6])
		if reason != "" {
			return s.Bad(&RecordError{Pos: e.Pos(n), Reason: reason})
		}
		p.Categories = splitList(f[1])
		p.References = paperscapeRefs(f[4])
		// Paperscape gives no dates; the id tells the month of submission.
		p.Published = arxivid.Month(p.ArxivID)
		p.Authors, p.AuthorsComplete = bylineAuthors(spaceInitials(f[5]))
		return s.Record(p, e.Pos(n))
	})
}

// splitList splits a comma-separated list, nil when it is empty.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// paperscapeRefs returns the canonical ids of a comma-separated list of
// cited arXiv ids. Paperscape resolved them itself, so an id that does not
// parse is a glitch in one reference, not in the paper, and is dropped.
func paperscapeRefs(s string) []string {
	if s == "" {
		return nil
	}
	refs := make([]string, 0, strings.Count(s, ",")+1)
	for ref := range strings.SplitSeq(s, ",") {
		if id, _, err := arxivid.Parse(ref); err == nil {
			refs = append(refs, id)
		}
	}
	return refs
}

// spaceInitials puts back the blank after each initial that Paperscape
// squeezes out of its comma-separated names ("C.Itzykson,J.-B.Zuber" →
// "C. Itzykson,J.-B. Zuber", "B.Al.Berg" → "B. Al. Berg"). A dot before a
// hyphen stays put, and a stray dot that starts a name is dropped.
func spaceInitials(s string) string {
	var b bytes.Buffer
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' && (i == 0 || s[i-1] == ',') {
			continue
		}
		b.WriteByte(c)
		if c == '.' && i+1 < len(s) && isNameStart(s[i+1]) {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// isNameStart reports whether c can start a name part: an ASCII letter or
// the first byte of a non-ASCII (UTF-8) letter.
func isNameStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}
