package db

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// SitemapKind names what a sitemap file lists.
type SitemapKind string

// The kinds of sitemap files: papers with an arXiv id (the front end's
// paper URLs are made of it) and researchers with at least one authorship.
const (
	SitemapPapers      SitemapKind = "papers"
	SitemapResearchers SitemapKind = "researchers"
)

// SitemapFile is one file of a sitemap of files of size ids each: file
// Number lists the entries of its kind whose ids are in
// ((Number-1)*size, Number*size], so that it never holds more than size
// URLs and is read by ranges of the primary key. Lastmod is the newest
// date of its entries, zero when none has one.
type SitemapFile struct {
	Number  int64     `bun:"number"`
	Lastmod time.Time `bun:"lastmod"`
}

// SitemapFiles lists the files of kind, of size ids each, that hold at
// least one entry, in order, in one statement.
func SitemapFiles(ctx context.Context, idb bun.IDB, kind SitemapKind, size int) ([]SitemapFile, error) {
	if size <= 0 {
		return nil, fmt.Errorf("sitemap: file size %d", size)
	}
	var q string
	switch kind {
	case SitemapPapers:
		q = `SELECT (id - 1) / ? + 1 AS number, max(coalesce(updated, published)) AS lastmod
			FROM papers WHERE arxiv_id IS NOT NULL GROUP BY (id - 1) / ? ORDER BY number`
	case SitemapResearchers:
		q = `SELECT (researcher_id - 1) / ? + 1 AS number, max(published) AS lastmod
			FROM authorships WHERE researcher_id IS NOT NULL GROUP BY (researcher_id - 1) / ? ORDER BY number`
	default:
		return nil, fmt.Errorf("sitemap: unknown kind %q", kind)
	}
	var files []SitemapFile
	if err := idb.NewRaw(q, size, size).Scan(ctx, &files); err != nil {
		return nil, err
	}
	return files, nil
}

// SitemapEntry is one URL of a sitemap file: a paper's id, arXiv id and
// title, or a researcher's id and name slug, and the date it last changed
// (a paper's latest version, else its first; a researcher's newest paper),
// zero when unknown.
type SitemapEntry struct {
	ID      int64     `bun:"id"`
	ArxivID string    `bun:"arxiv_id"`
	Title   string    `bun:"title"`
	Slug    string    `bun:"slug"`
	Lastmod time.Time `bun:"lastmod"`
}

// SitemapEntries returns, in id order, up to limit entries of kind whose
// ids are in (after, through]: one statement, a range of the primary key
// (and, for researchers, of their authorships' index).
func SitemapEntries(ctx context.Context, idb bun.IDB, kind SitemapKind, after, through int64, limit int) ([]SitemapEntry, error) {
	var q string
	switch kind {
	case SitemapPapers:
		q = `SELECT id, arxiv_id, title, coalesce(updated, published) AS lastmod FROM papers
			WHERE id > ? AND id <= ? AND arxiv_id IS NOT NULL ORDER BY id LIMIT ?`
	case SitemapResearchers:
		q = `SELECT r.id, r.slug, max(a.published) AS lastmod
			FROM researchers r JOIN authorships a ON a.researcher_id = r.id
			WHERE r.id > ? AND r.id <= ? AND a.researcher_id > ? AND a.researcher_id <= ?
			GROUP BY r.id, r.slug ORDER BY r.id LIMIT ?`
	default:
		return nil, fmt.Errorf("sitemap: unknown kind %q", kind)
	}
	args := []any{after, through, limit}
	if kind == SitemapResearchers {
		args = []any{after, through, after, through, limit}
	}
	entries := make([]SitemapEntry, 0, limit)
	if err := idb.NewRaw(q, args...).Scan(ctx, &entries); err != nil {
		return nil, err
	}
	return entries, nil
}
