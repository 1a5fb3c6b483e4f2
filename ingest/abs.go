package ingest

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Abs reads arXiv's .abs metadata files: a header block (Paper:, Date:,
// Title:, Authors:, ...) and the abstract, each closed by a line "\\".
var Abs = Format{
	Name:      "abs",
	Reads:     "arXiv .abs metadata files, alone or in a tar(.gz) archive (KDD Cup 2003 hep-th, arXiv mirror layout)",
	Read:      readAbs,
	TarMember: isAbsMember,
}

// isAbsMember selects the .abs files of an archive, leaving out the
// superseded versions that arXiv's mirror layout keeps under orig/: the
// file under ftp/ already describes the latest version.
func isAbsMember(name string) bool {
	return strings.HasSuffix(name, ".abs") && !strings.HasPrefix(name, "orig/") && !strings.Contains(name, "/orig/")
}

// absHeader is one header field, its continuation lines joined.
type absHeader struct{ key, value string }

func readAbs(ctx context.Context, e Entry, s Sink) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := io.ReadAll(e.R)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return ErrTruncated
		}
		return err
	}
	text := string(data)
	if !utf8.Valid(data) {
		text = latin1(data)
	}
	p, reason := absPaper(splitAbs(text))
	if reason != "" {
		return s.Bad(&RecordError{Pos: e.Pos(0), Reason: reason})
	}
	return s.Record(p, e.Pos(0))
}

// latin1 decodes bytes as ISO 8859-1, the encoding of the few .abs files
// that are not UTF-8.
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// splitAbs splits an .abs file into its header fields, in order, and its
// abstract. Anything before the header block (a rule of dashes, the
// opening "\\") is skipped, and a header line that starts with a blank
// continues the field before it.
func splitAbs(text string) (headers []absHeader, abstract string) {
	const (
		before = iota
		inHeaders
		inAbstract
	)
	section := before
	var abs strings.Builder
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if trimmed == `\\` {
			if section == inAbstract {
				break
			}
			section++
			continue
		}
		switch {
		case section == inAbstract:
			abs.WriteString(line)
			abs.WriteByte('\n')
		case trimmed == "" || section == before && strings.Trim(trimmed, "-") == "":
		case line[0] == ' ' || line[0] == '\t' || !strings.Contains(line, ":"):
			if n := len(headers); n > 0 {
				headers[n-1].value += " " + trimmed
			}
		default:
			section = inHeaders
			key, value, _ := strings.Cut(line, ":")
			headers = append(headers, absHeader{strings.TrimSpace(key), strings.TrimSpace(value)})
		}
	}
	return headers, abs.String()
}

// absPaper builds the paper an .abs file describes, or returns why the
// file is malformed.
func absPaper(headers []absHeader, abstract string) (*Paper, string) {
	var rawID, title string
	for _, h := range headers {
		switch {
		case h.key == "arXiv" || strings.HasPrefix(h.key, "Paper"): // "Paper (*cross-listing*)" too
			rawID, _, _ = strings.Cut(h.value, " ")
		case h.key == "Title":
			title = h.value
		}
	}
	p, reason := newArxivPaper(rawID, title)
	if reason != "" {
		return nil, reason
	}
	p.Abstract = clean(abstract)
	revisions, lastVersion := 0, 0
	for _, h := range headers {
		switch key := h.key; {
		case key == "Authors" || key == "Author":
			setByline(p, h.value)
		case key == "Date":
			p.Published, _ = parseSubmitDate(h.value)
			p.Updated = p.Published
		case strings.HasPrefix(key, "Date (revised"):
			// "Date (revised v3)" since 2007; before, a bare "Date (revised)"
			// for each new version.
			revisions++
			if v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(key, "Date (revised v"), ")")); err == nil {
				lastVersion = v
			}
			if t, ok := parseSubmitDate(h.value); ok {
				p.Updated = t
			}
		case key == "Categories":
			p.Categories = strings.Fields(h.value)
		case key == "Comments":
			p.Comments = clean(h.value)
		case key == "Report-no":
			p.ReportNo = clean(h.value)
		case key == "Journal-ref":
			p.JournalRef = clean(h.value)
		case key == "DOI":
			setFirstDOI(p, h.value)
		case key == "License":
			p.License = h.value
		}
	}
	p.Version = max(p.Version, lastVersion, revisions+1)
	if archive, _, ok := strings.Cut(p.ArxivID, "/"); ok && p.Categories == nil {
		// Files from before arXiv printed categories (the KDD Cup set) are
		// filed under their archive, which the old-style id names.
		p.Categories = []string{archive}
	}
	return p, ""
}
