package db

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
)

// Bulk loading.
//
// An import into an empty archive writes every row once. Keeping the
// indexes that only readers use (the full-text indexes, the orderings, the
// reverse links) up to date row by row costs it several times more than
// building each once at the end. BeginBulk drops them and keeps each
// definition, as the database itself gives it, in the bulk_load table in
// the same transaction; EndBulk builds them again from those definitions
// and forgets each in the transaction that builds it (two: the full-text
// indexes last). A crash in between leaves the definitions behind: the next
// import goes on in bulk mode and ends it, and so does migrate. One import
// at a time: a bulk load is the archive's, not a process's.

// bulkDeferred names what a bulk load drops: indexes that no step of the
// writer reads (it finds papers by their ids and DOI, researchers by
// name_key and their external ids, and those indexes stay), and on SQLite
// the triggers that feed the full-text index. On PostgreSQL it drops the
// foreign keys too (see BeginBulk).
var bulkDeferred = []string{
	"papers_published", "papers_citation_count", "paper_categories_category",
	"researchers_family_key", "authorships_researcher", "affiliations_institution",
	"paper_references_cited", "paper_references_target", "papers_figures",
	// Read only by papergraph embed, after the import.
	"papers_text_rev",
	// PostgreSQL: the full-text and name-prefix indexes.
	"papers_search_doc", "papers_title_doc", "researchers_name_key_c", "researchers_family_key_c",
	// SQLite: the full-text triggers.
	"papers_fts_insert", "papers_fts_update", "papers_fts_delete",
	"papers_fts_cited_insert", "papers_fts_cited_update", "papers_fts_cited_delete",
}

// The bands of citations' full-text indexes (migration 0019) are deferred
// too: on PostgreSQL their partial GIN indexes, built after derive has set
// the citation counts (kept up to date row by row, they grow to over three
// times the size of the same indexes built at once), and on SQLite the
// triggers that feed papers_fts_cited, which the full-text step refills.
func init() {
	for _, b := range citedBands {
		bulkDeferred = append(bulkDeferred, citedIndex(b))
	}
}

// citedIndex is the name of the PostgreSQL index of the band of citations
// from b.
func citedIndex(b int) string { return "papers_search_cited_" + strconv.Itoa(b) }

// bulkTables are the tables whose foreign keys a PostgreSQL bulk load drops.
var bulkTables = []string{"papers", "paper_categories", "authorships", "affiliations", "paper_references", "institution_names"}

// bulkLoadRow is one deferred index, trigger or foreign key and the statement that
// creates it.
type bulkLoadRow struct {
	bun.BaseModel `bun:"table:bulk_load"`
	Name          string `bun:"name,pk"`
	Kind          string `bun:"kind"`
	Definition    string `bun:"definition"`
}

// BeginBulk puts an empty archive in bulk mode and reports true, or
// reports true when an earlier bulk load was not ended (so the caller
// goes on with it). An archive with papers is left as it is.
func BeginBulk(ctx context.Context, bdb *bun.DB) (bool, error) {
	bulk := false
	err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if n, err := tx.NewSelect().Table("bulk_load").Count(ctx); err != nil || n > 0 {
			bulk = n > 0
			return err
		}
		if has, err := tx.NewSelect().Table("papers").Exists(ctx); err != nil || has {
			return err
		}
		var found []struct {
			Name, Kind, Definition string
			Drop                   string `bun:"drop_stmt"`
		}
		var err error
		b := binding(tx)
		if IsPostgres(tx) {
			// PostgreSQL checks a foreign key row by row, with a query per
			// row, which is most of the cost of writing authorships. Added
			// back at the end, each key is checked by one join.
			indexes, args := in(b, "indexname", bulkDeferred)
			tables, a := in(b, "t.relname", bulkTables)
			err = tx.NewRaw(`SELECT indexname AS name, 'index' AS kind, indexdef AS definition,
				  'DROP INDEX ' || quote_ident(indexname) AS drop_stmt
				FROM pg_indexes WHERE schemaname = current_schema() AND `+indexes+`
				UNION ALL
				SELECT c.conname, 'constraint',
				  'ALTER TABLE ' || quote_ident(t.relname) || ' ADD CONSTRAINT ' || quote_ident(c.conname) || ' ' || pg_get_constraintdef(c.oid),
				  'ALTER TABLE ' || quote_ident(t.relname) || ' DROP CONSTRAINT ' || quote_ident(c.conname)
				FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
				WHERE c.contype = 'f' AND t.relnamespace = current_schema()::regnamespace AND `+tables+`
				ORDER BY 1`, append(args, a...)...).Scan(b.ctx(ctx), &found)
		} else {
			names, args := in(b, "name", bulkDeferred)
			err = tx.NewRaw(`SELECT name, type AS kind, sql AS definition, 'DROP ' || type || ' "' || name || '"' AS drop_stmt
				FROM sqlite_master
				WHERE type IN ('index', 'trigger') AND sql IS NOT NULL AND `+names+` ORDER BY name`, args...).Scan(b.ctx(ctx), &found)
		}
		if err != nil || len(found) == 0 {
			return err
		}
		rows := make([]bulkLoadRow, len(found))
		for i, f := range found {
			rows[i] = bulkLoadRow{Name: f.Name, Kind: f.Kind, Definition: f.Definition}
		}
		if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
			return err
		}
		for _, f := range found {
			if _, err := tx.ExecContext(ctx, f.Drop); err != nil {
				return err
			}
		}
		bulk = true
		return nil
	})
	return bulk, err
}

// BulkOpen reports whether a bulk load is open: its indexes unbuilt.
func BulkOpen(ctx context.Context, bdb *bun.DB) (bool, error) {
	n, err := bdb.NewSelect().Table("bulk_load").Count(ctx)
	return n > 0, err
}

// ftsHashSize is the memory the SQLite full-text index fills before it
// writes a segment while EndBulk refills it: fewer, larger segments mean
// less merging than FTS5's default of 1 MiB. A variable only so
// that a test can make a small refill write several segments.
var ftsHashSize = 64 << 20

// EndBulk ends a bulk load, if one is open: it creates the deferred
// indexes again and refills the full-text index. It does nothing when no
// bulk load is open.
func EndBulk(ctx context.Context, bdb *bun.DB) error {
	fullText, err := EndBulkIndexes(ctx, bdb)
	if err != nil {
		return err
	}
	return fullText(ctx)
}

// EndBulkIndexes creates the deferred indexes other than the full-text
// ones, and returns the function that builds those. That is the larger
// part (a GIN index over every abstract), and it writes nothing but the
// index: on PostgreSQL it may
// run in its own session beside work that reads papers and writes other
// tables. Each part forgets its definitions in the transaction that
// builds them, so a crash in either leaves the rest for the next EndBulk.
func EndBulkIndexes(ctx context.Context, bdb *bun.DB) (func(context.Context) error, error) {
	err := endBulk(ctx, bdb, false)
	return func(ctx context.Context) error { return endBulk(ctx, bdb, true) }, err
}

// isFullText says whether a deferred object is part of the full-text
// search: PostgreSQL's GIN indexes, SQLite's triggers.
func isFullText(r bulkLoadRow) bool {
	return r.Kind == "trigger" || r.Name == "papers_search_doc" || strings.HasPrefix(r.Name, "papers_search_cited_")
}

func endBulk(ctx context.Context, bdb *bun.DB, fullText bool) error {
	if fullText && !IsPostgres(bdb) {
		// SQLite's full-text indexes are refilled first, in
		// transactions of their own (see refillSQLiteFullText); the
		// triggers and the end of the bulk load follow in one.
		rows, err := bulkRows(ctx, bdb, fullText)
		if err != nil || len(rows) == 0 {
			return err
		}
		if err := refillSQLiteFullText(ctx, bdb, rows); err != nil {
			return fmt.Errorf("end bulk load: %w", err)
		}
	}
	return bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		rows, err := bulkRows(ctx, tx, fullText)
		if err != nil || len(rows) == 0 {
			return err
		}
		var stmts []string
		if IsPostgres(tx) {
			// GIN and B-tree builds sort their entries in this memory.
			stmts = append(stmts, "SET LOCAL maintenance_work_mem = '512MB'")
		}
		names := make([]string, len(rows))
		for i, r := range rows {
			names[i] = r.Name
			stmts = append(stmts, r.Definition)
		}
		if fullText && IsPostgres(tx) {
			// A bulk-loaded archive has no statistics until autovacuum
			// reads it, and without them the planner reads every hep-th
			// paper to filter a rare word's few matches by category.
			stmts = append(stmts, "ANALYZE")
		}
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("end bulk load: %w", err)
			}
		}
		b := binding(tx)
		cond, args := in(b, "name", names)
		_, err = tx.NewDelete().Model((*bulkLoadRow)(nil)).Where(cond, args...).Exec(b.ctx(ctx))
		return err
	})
}

// bulkRows is the deferred objects of one part of a bulk load's end (the
// full-text ones, or the rest), triggers last: the full-text index is
// full before they fire.
func bulkRows(ctx context.Context, idb bun.IDB, fullText bool) ([]bulkLoadRow, error) {
	var all []bulkLoadRow
	if err := idb.NewSelect().Model(&all).Order("kind", "name").Scan(ctx); err != nil {
		return nil, err
	}
	slices.SortStableFunc(all, func(a, b bulkLoadRow) int {
		return boolInt(a.Kind == "trigger") - boolInt(b.Kind == "trigger")
	})
	var rows []bulkLoadRow
	for _, r := range all {
		if isFullText(r) == fullText {
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// ftsRefillChunk is how many ids of papers refillSQLiteFullText indexes
// in one transaction. A WAL reader looks up every page it does not hold
// in the WAL's index, at a cost that grows with the frames written since
// the last checkpoint, and a refill of a whole large archive in one
// transaction writes a WAL as large as its index. Committed a chunk at a
// time, the WAL is checkpointed after each and its index stays small
// (docs/performance.md, Imports). A variable only so that a test can make
// a small refill take several.
var ftsRefillChunk int64 = 250_000

// refillSQLiteFullText refills SQLite's full-text indexes at the end of a
// bulk load whose deferred full-text objects are rows. Each chunk of
// papers is a transaction, so an import that stops part way leaves an
// index partly filled and the bulk load open: the next end of the bulk
// load empties the index and refills it whole, to the same index.
func refillSQLiteFullText(ctx context.Context, bdb *bun.DB, rows []bulkLoadRow) error {
	var ids struct {
		Lo int64 `bun:"lo"`
		Hi int64 `bun:"hi"`
	}
	if err := bdb.NewRaw(`SELECT COALESCE(MIN(id), 0) AS lo, COALESCE(MAX(id), -1) AS hi FROM papers`).Scan(ctx, &ids); err != nil {
		return err
	}
	refills := []ftsRefill{{table: "papers_fts", columns: "title, abstract",
		values: "search_fold(title), search_fold(abstract)", where: "TRUE"}}
	if slices.ContainsFunc(rows, func(r bulkLoadRow) bool { return r.Name == "papers_fts_cited_insert" }) {
		refills = append(refills, ftsRefill{table: "papers_fts_cited", columns: "title, abstract, band",
			values: "search_fold(title), search_fold(abstract), " + citedBandCase("papers"),
			where:  "citation_count >= " + strconv.Itoa(citedBands[len(citedBands)-1])})
	}
	for _, r := range refills {
		steps := [][]string{r.begin()}
		for lo := ids.Lo; lo <= ids.Hi; lo += ftsRefillChunk {
			steps = append(steps, []string{r.insert(lo, lo+ftsRefillChunk)})
		}
		steps = append(steps, r.end())
		for _, stmts := range steps {
			err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				for _, s := range stmts {
					if _, err := tx.ExecContext(ctx, s); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// An ftsRefill is one SQLite full-text index to refill from papers: its
// columns, the values of a paper for them, and which papers it holds.
type ftsRefill struct {
	table, columns, values, where string
}

// begin empties the index and sets it to write few, large segments:
// fewer segments mean less merging than FTS5's default hash of 1 MiB,
// and no merges while the refill writes, since end merges every segment
// into one anyway and what automerge (FTS5's default, 4) merged along the
// way it would write once more.
func (r ftsRefill) begin() []string {
	return []string{
		fmt.Sprintf(`INSERT INTO %s (%s) VALUES ('delete-all')`, r.table, r.table),
		fmt.Sprintf(`INSERT INTO %s (%s, rank) VALUES ('hashsize', %d)`, r.table, r.table, ftsHashSize),
		fmt.Sprintf(`INSERT INTO %s (%s, rank) VALUES ('automerge', 0)`, r.table, r.table),
	}
}

// insert indexes the papers of ids lo to hi, hi not included.
func (r ftsRefill) insert(lo, hi int64) string {
	return fmt.Sprintf(`INSERT INTO %s (rowid, %s) SELECT id, %s FROM papers WHERE id >= %d AND id < %d AND %s`,
		r.table, r.columns, r.values, lo, hi, r.where)
}

// end restores FTS5's defaults and merges the index into one segment.
// The refill leaves one segment per hash's worth of text (dozens at 2.7
// million papers), most of them on the lowest level. The next import's
// statements each add a segment there (FTS5 flushes at every statement of
// a transaction), and once a level holds 16, FTS5 merges them all in that
// statement: the refill's large segments rewritten by the first
// increment's inserts, a large part of that increment's work. Merged into
// one now, the index takes later segments beside it in merges of their
// own size.
func (r ftsRefill) end() []string {
	return []string{
		fmt.Sprintf(`INSERT INTO %s (%s, rank) VALUES ('hashsize', 1048576)`, r.table, r.table),
		fmt.Sprintf(`INSERT INTO %s (%s, rank) VALUES ('automerge', 4)`, r.table, r.table),
		fmt.Sprintf(`INSERT INTO %s (%s) VALUES ('optimize')`, r.table, r.table),
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// VacuumPapers vacuums the papers table (PostgreSQL only), marking the
// pages a bulk load wrote all-visible, so that reads by an index that
// holds every column they need leave the table alone.
func VacuumPapers(ctx context.Context, idb bun.IDB) error {
	_, err := idb.ExecContext(ctx, "VACUUM papers")
	return err
}

// VacuumAnalyze tidies PostgreSQL's tables after an import: it vacuums
// and analyses each table whose dead rows exceed autovacuum's default
// threshold (50 plus a fifth of its live rows), whose rows inserted since
// its last vacuum exceed the insert threshold (1,000 plus a fifth) or a
// fifth of whose pages are not all-visible, and analyses each whose rows changed by more than its analyse threshold
// (50 plus a tenth) since its statistics were taken. An import's derived figures rewrite most rows
// of a bulk-loaded archive (every paper's citation count, every
// researcher's figures), and each index then points at a dead version too
// until VACUUM: the full-text index handed 14,934 rows to the heap for
// `theory` over the demo set, 6,952 of them live, and the planner worked
// from counts taken before. Autovacuum gets there in time where it runs
// (it may be off, or a minute late for the first requests); a day's
// increment into a large archive stays under every threshold and costs
// one read of the statistics. It does nothing on SQLite, whose rows are
// rewritten in place.
func VacuumAnalyze(ctx context.Context, idb bun.IDB) error {
	// vacuumDue is autovacuum's test with its default thresholds (dead
	// rows, or rows inserted since the last vacuum: 1,000 plus a fifth),
	// or a fifth of the table's pages not all-visible when its size was
	// last taken. Rows only inserted leave no dead ones, but until a
	// vacuum marks their pages all-visible an index-only scan reads the
	// table for each (a bulk load's authorships, read by researcher from
	// the researcher index); and the import's own inserts may not be in
	// the statistics yet (a connection sends its counts when idle, at
	// most once a second), while the size ANALYZE takes after a bulk load
	// has them.
	const vacuumDue = `(s.n_dead_tup > 50 + 0.2 * s.n_live_tup OR s.n_ins_since_vacuum > 1000 + 0.2 * s.n_live_tup
		OR c.relallvisible < 0.8 * c.relpages)`
	var tables []struct {
		Name   string `bun:"relname"`
		Vacuum bool   `bun:"vacuum"`
	}
	err := idb.NewRaw(`SELECT s.relname, `+vacuumDue+` AS vacuum FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
		WHERE s.schemaname = current_schema() AND (`+vacuumDue+` OR s.n_mod_since_analyze > 50 + 0.1 * s.n_live_tup)
		ORDER BY s.relname`).Scan(ctx, &tables)
	if err != nil {
		return err
	}
	for _, t := range tables {
		q := "ANALYZE ?"
		if t.Vacuum {
			q = "VACUUM (ANALYZE) ?"
		}
		if _, err := idb.ExecContext(ctx, q, bun.Ident(t.Name)); err != nil {
			return err
		}
	}
	// A GIN index takes new entries into a pending list, merged into the
	// index by VACUUM or once the list passes gin_pending_list_limit, and
	// every search reads its list whole: after an import's citation
	// counts moved papers between bands, the planner left the bands'
	// small indexes for the main one or a walk of the citation order, and
	// even a word of no match read the whole list. Each import therefore
	// merges the lists of papers' GIN indexes, which costs nothing when
	// they are empty.
	_, err = idb.ExecContext(ctx, `SELECT gin_clean_pending_list(i.indexrelid) FROM pg_index AS i
		JOIN pg_class AS c ON c.oid = i.indexrelid JOIN pg_am AS am ON am.oid = c.relam
		WHERE i.indrelid = 'papers'::regclass AND am.amname = 'gin'`)
	return err
}
