package dbtest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// dumpQueries list every table by natural keys (arXiv ids, name keys, ROR
// ids) rather than row ids, which a database may hand out differently
// after a crash; two databases with equal dumps hold the same data.
var dumpQueries = []string{
	`SELECT 'paper', COALESCE(arxiv_id, ''), COALESCE(doi, ''), version, title, COALESCE(abstract, ''), COALESCE(comments, ''),
	   COALESCE(journal_ref, ''), COALESCE(report_no, ''), COALESCE(license, ''), COALESCE(CAST(published AS TEXT), ''),
	   COALESCE(CAST(updated AS TEXT), ''), COALESCE(primary_category, ''), COALESCE(byline, ''), COALESCE(cited_by_count, -1),
	   COALESCE(openalex_id, ''), COALESCE(s2_id, ''), author_count, authors_complete, authors_score,
	   archive_citation_count, citation_count
	 FROM papers`,
	`SELECT 'category', p.arxiv_id, c.position, c.category, COALESCE(CAST(c.published AS TEXT), '') FROM paper_categories c JOIN papers p ON p.id = c.paper_id`,
	`SELECT 'authorship', p.arxiv_id, a.position, a.name, COALESCE(r.name_key, ''), COALESCE(CAST(a.published AS TEXT), '') FROM authorships a
	 JOIN papers p ON p.id = a.paper_id LEFT JOIN researchers r ON r.id = a.researcher_id`,
	`SELECT 'affiliation', p.arxiv_id, a.position, a.seq, a.raw, COALESCE(i.ror_id, '') FROM affiliations a
	 JOIN papers p ON p.id = a.paper_id LEFT JOIN institutions i ON i.id = a.institution_id`,
	`SELECT 'researcher', r.name_key, r.name, COALESCE(r.orcid, ''), COALESCE(r.openalex_id, ''), COALESCE(r.s2_id, ''),
	   r.paper_count, r.position_known_count, r.first_count, r.middle_count, r.last_count, r.sole_count,
	   r.archive_h_index, r.coauthor_count, COALESCE(p.arxiv_id, '') FROM researchers r LEFT JOIN papers p ON p.id = r.most_cited_paper_id`,
	`SELECT 'field', r.name_key, c.category, c.paper_count FROM researcher_categories c JOIN researchers r ON r.id = c.researcher_id`,
	`SELECT 'coauthor', a.name_key, b.name_key, c.paper_count FROM coauthors c
	 JOIN researchers a ON a.id = c.researcher_id JOIN researchers b ON b.id = c.coauthor_id`,
	`SELECT 'same-name', a.name_key, b.name_key FROM same_name s
	 JOIN researchers a ON a.id = s.researcher_id JOIN researchers b ON b.id = s.other_id`,
	`SELECT 'reference', p.arxiv_id, r.target, COALESCE(q.arxiv_id, ''), COALESCE(CAST(r.citing_published AS TEXT), '') FROM paper_references r
	 JOIN papers p ON p.id = r.citing_id LEFT JOIN papers q ON q.id = r.cited_id`,
	`SELECT 'institution', COALESCE(ror_id, ''), COALESCE(openalex_id, ''), name, COALESCE(country, ''), COALESCE(types, ''),
	   COALESCE(status, ''), COALESCE(established, 0) FROM institutions`,
	`SELECT 'institution-name', i.ror_id, n.name, n.kind FROM institution_names n JOIN institutions i ON i.id = n.institution_id`,
	`SELECT 'unknown-category', code FROM categories WHERE NOT in_taxonomy`,
	`SELECT 'category-count', code, paper_count FROM categories WHERE paper_count <> 0`,
	`SELECT 'harvest-state', set_spec, through FROM harvest_state`,
}

// Dump returns every row of the graph as a sorted list of lines, and the
// state of its indexes: two databases with equal dumps hold the same data
// and serve it alike.
func Dump(t testing.TB, bdb *bun.DB) []string {
	t.Helper()
	var lines []string
	for _, q := range dumpQueries {
		rows, err := bdb.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("dump: %v\n%s", err, q)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			line := ""
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				line += fmt.Sprintf("%v|", v)
			}
			lines = append(lines, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	lines = append(lines, searchState(t, bdb)...)
	slices.Sort(lines)
	return lines
}

// searchState lists the indexes and triggers, and how many papers a few
// full-text searches find: an import must leave both as an uninterrupted
// one does, whatever bulk loading deferred.
func searchState(t testing.TB, bdb *bun.DB) []string {
	t.Helper()
	ctx := context.Background()
	q := `SELECT 'schema|' || name || '|' || sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL`
	if db.IsPostgres(bdb) {
		q = `SELECT 'schema|' || indexname || '|' || indexdef FROM pg_indexes WHERE schemaname = current_schema()
			UNION ALL
			SELECT 'schema|' || c.conname || '|' || c.conrelid::regclass || ' ' || pg_get_constraintdef(c.oid) FROM pg_constraint c
			WHERE c.connamespace = current_schema()::regnamespace`
	}
	var lines []string
	if err := bdb.NewRaw(q).Scan(ctx, &lines); err != nil {
		t.Fatal(err)
	}
	for _, words := range []string{"theory", "field*", `"string theory"`} {
		sq, err := db.ParseSearchQuery(words)
		if err != nil {
			t.Fatal(err)
		}
		n, err := db.SearchTotal(ctx, bdb, db.PaperSearch{Query: sq})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("search|%s|%d", words, n))
	}
	return lines
}

// SameDump fails the test at the first line where two dumps differ.
func SameDump(t testing.TB, got, want []string) {
	t.Helper()
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			t.Fatalf("dumps differ at line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("dump has %d lines, want %d", len(got), len(want))
	}
}
