package db

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// The statements of ingest.Derive and of the writer's derive queues (see
// ingest.Derive): derive_queue, the researchers to recompute;
// derive_added, the papers to add to their authors; derive_cited, the
// researchers whose figures citations moved; derive_papers, the papers
// whose citation counts may have moved.

// deriveQueueRow is one entry of the derive queue.
type deriveQueueRow struct {
	bun.BaseModel `bun:"table:derive_queue"`
	ResearcherID  int64 `bun:"researcher_id,pk"`
}

// QueueResearchers puts researchers on the derive queue.
func QueueResearchers(ctx context.Context, idb bun.IDB, ids []int64) error {
	return queueIDs(ctx, idb, ids, func(id int64) deriveQueueRow { return deriveQueueRow{ResearcherID: id} })
}

// queueIDs inserts a queue's row for each distinct id (made by row),
// leaving the ids already queued as they are.
func queueIDs[R any](ctx context.Context, idb bun.IDB, ids []int64, row func(id int64) R) error {
	if len(ids) == 0 {
		return nil
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	rows := make([]R, len(ids))
	for i, id := range ids {
		rows[i] = row(id)
	}
	_, err := idb.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx)
	return err
}

// QueueAuthorsOf puts the researchers of the given papers on the derive
// queue.
func QueueAuthorsOf(ctx context.Context, idb bun.IDB, paperIDs []int64) error {
	if len(paperIDs) == 0 {
		return nil
	}
	b := binding(idb)
	cond, args := in(b, "paper_id", paperIDs)
	_, err := idb.NewRaw(`INSERT INTO derive_queue (researcher_id)
		SELECT DISTINCT researcher_id FROM authorships WHERE `+cond+` AND researcher_id IS NOT NULL
		ON CONFLICT DO NOTHING`, args...).Exec(b.ctx(ctx))
	return err
}

// DeriveBatch returns the researchers of the derive batch.
func DeriveBatch(ctx context.Context, idb bun.IDB) ([]int64, error) {
	var ids []int64
	err := idb.NewSelect().Table("derive_batch").Column("researcher_id").Scan(ctx, &ids)
	return ids, err
}

// A DeriveQueue is one of derive's two queues of researchers.
type DeriveQueue int

const (
	// Recompute is derive_queue: researchers whose papers changed, whose
	// figures, fields, co-authors and name links derive recomputes.
	Recompute DeriveQueue = iota
	// FiguresOnly is derive_cited less derive_queue: researchers of
	// papers whose citation counts moved, whose h-index and most cited
	// paper derive recomputes.
	FiguresOnly
)

// deriveQueues are the queues' researchers, as a SELECT for an id past ?.
var deriveQueues = map[DeriveQueue]string{
	Recompute: `SELECT researcher_id FROM derive_queue WHERE researcher_id > ?`,
	FiguresOnly: `SELECT c.researcher_id FROM derive_cited c WHERE c.researcher_id > ?
		AND NOT EXISTS (SELECT 1 FROM derive_queue q WHERE q.researcher_id = c.researcher_id)`,
}

// FillDeriveBatch makes the derive batch the first n researchers of queue
// after the id after and returns how many it holds and the last id.
func FillDeriveBatch(ctx context.Context, idb bun.IDB, queue DeriveQueue, after int64, n int) (int, int64, error) {
	if err := execAll(ctx, idb, `DELETE FROM derive_batch`); err != nil {
		return 0, 0, err
	}
	if _, err := idb.NewRaw(`INSERT INTO derive_batch (researcher_id) `+deriveQueues[queue]+`
		ORDER BY researcher_id LIMIT ?`, after, n).Exec(ctx); err != nil {
		return 0, 0, err
	}
	if IsPostgres(idb) {
		// The batch's statistics are taken afresh for every batch: taken
		// while it was empty (by the analysis that ends a bulk load or an
		// import, after the queue was cleared) they say it has no rows
		// whatever its pages hold, and PostgreSQL planned "DELETE FROM
		// coauthors WHERE researcher_id IN (the batch)" as a scan of the
		// batch for every co-author pair, a cost of batch size times
		// pairs that no import finishes.
		if err := execAll(ctx, idb, `ANALYZE derive_batch`); err != nil {
			return 0, 0, err
		}
	}
	var got struct {
		N    int   `bun:"n"`
		Last int64 `bun:"last"`
	}
	err := idb.NewRaw(`SELECT COUNT(*) AS n, COALESCE(MAX(researcher_id), 0) AS last FROM derive_batch`).Scan(ctx, &got)
	return got.N, got.Last, err
}

// ClearDeriveQueue empties the derive queues.
func ClearDeriveQueue(ctx context.Context, idb bun.IDB) error {
	return execAll(ctx, idb, `DELETE FROM derive_queue`, `DELETE FROM derive_cited`, `DELETE FROM derive_added`, `DELETE FROM derive_batch`)
}

// DeriveSortMemory gives the grouped rebuilds of a derive step room to
// sort millions of rows after a large import: PostgreSQL's default 4 MB
// of sort memory would send them to disk. It lasts until the end of tx.
func DeriveSortMemory(ctx context.Context, tx bun.Tx) error {
	if !IsPostgres(tx) {
		return nil
	}
	return execAll(ctx, tx, "SET LOCAL work_mem = '256MB'")
}

func execAll(ctx context.Context, idb bun.IDB, stmts ...string) error {
	for _, s := range stmts {
		if _, err := idb.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// resolveChunk is how many citing papers' references, and how many
// queued papers' counts, ResolveReferences handles in one statement (a
// variable for its test).
var resolveChunk int64 = 100_000

// QueuePapers puts papers on the derive queue of papers, whose citation
// counts derive checks.
func QueuePapers(ctx context.Context, idb bun.IDB, ids []int64) error {
	return queueIDs(ctx, idb, ids, func(id int64) derivePaperRow { return derivePaperRow{PaperID: id} })
}

// derivePaperRow is one entry of the derive queue of papers.
type derivePaperRow struct {
	bun.BaseModel `bun:"table:derive_papers"`
	PaperID       int64 `bun:"paper_id,pk"`
}

// ResolveReferences turns references whose target is now in the archive
// into citation edges, whatever order the papers arrived in (the writer
// resolves those whose target was there already, see AddReferences),
// updates the
// citation counts of the papers on the derive queue of papers (see
// QueuePapers) and of those the new edges point to, puts the authors
// of papers whose count moved on derive_cited (see FiguresOnly) and
// empties the queue of papers. References are
// only ever added and resolved, never removed, so a paper's count can
// change only when it is written or cited anew: the statements read the
// unresolved references and the queued papers, not the archive.
//
// The unresolved references are resolved resolveChunk citing papers at a
// time, and the queued papers' counts updated resolveChunk papers at a
// time, so that no statement's temporary tables (in memory on SQLite, see
// open) hold the whole archive.
func ResolveReferences(ctx context.Context, idb bun.IDB) error {
	err := idRanges(ctx, idb, `SELECT MIN(citing_id) FROM paper_references WHERE cited_id IS NULL AND citing_id >= ?`,
		func(from, to int64) error {
			if _, err := idb.ExecContext(ctx, `INSERT INTO derive_papers (paper_id)
				SELECT DISTINCT p.id FROM paper_references r JOIN papers p ON p.arxiv_id = r.target
				WHERE r.cited_id IS NULL AND r.citing_id >= ? AND r.citing_id < ?
				ON CONFLICT DO NOTHING`, from, to); err != nil {
				return err
			}
			_, err := idb.ExecContext(ctx, `UPDATE paper_references
				SET cited_id = (SELECT p.id FROM papers p WHERE p.arxiv_id = paper_references.target)
				WHERE cited_id IS NULL AND citing_id >= ? AND citing_id < ?
				AND EXISTS (SELECT 1 FROM papers p WHERE p.arxiv_id = paper_references.target)`, from, to)
			return err
		})
	if err != nil {
		return err
	}
	// The papers' counts likewise, resolveChunk queued papers at a time:
	// rewriting most papers' rows in one statement (the first citation
	// import of an archive queues nearly all of them) makes the
	// statement's memory grow with the archive. Both counts of a paper are written
	// by one UPDATE: on PostgreSQL every changed row is written whole
	// again, and a new citation_count (which is indexed, so the update
	// cannot be made in place) with an entry in each of the papers'
	// indexes, the full-text ones included.
	err = idRanges(ctx, idb, `SELECT MIN(paper_id) FROM derive_papers WHERE paper_id >= ?`, func(from, to int64) error {
		queuedPapers := fmt.Sprintf(`(SELECT paper_id FROM derive_papers WHERE paper_id >= %d AND paper_id < %d)`, from, to)
		// fresh is each queued paper's counts as they are and as they
		// will be; a paper no stored reference cites keeps its archive
		// count.
		fresh := `(SELECT f.id, f.archive_was, f.total_was, f.archive,
			   CASE WHEN f.cited_by > f.archive THEN f.cited_by ELSE f.archive END AS total
			 FROM (SELECT p.id, p.archive_citation_count AS archive_was, p.citation_count AS total_was,
			     COALESCE(p.cited_by_count, 0) AS cited_by, COALESCE(c.n, p.archive_citation_count) AS archive
			   FROM papers p LEFT JOIN (SELECT r.cited_id, COUNT(*) AS n FROM paper_references r
			     WHERE r.cited_id IN ` + queuedPapers + ` GROUP BY r.cited_id) c ON c.cited_id = p.id
			   WHERE p.id IN ` + queuedPapers + `) f)`
		return execAll(ctx, idb,
			// A paper's new count moves its authors' h-index and most
			// cited paper, and nothing else of theirs (see FiguresOnly).
			`INSERT INTO derive_cited (researcher_id)
			 SELECT DISTINCT a.researcher_id FROM authorships a
			 WHERE a.researcher_id IS NOT NULL AND a.paper_id IN (SELECT n.id FROM `+fresh+` n
			   WHERE n.total <> n.total_was)
			 ON CONFLICT DO NOTHING`,
			`UPDATE papers SET archive_citation_count = n.archive, citation_count = n.total
			 FROM `+fresh+` n
			 WHERE n.id = papers.id AND (n.archive <> n.archive_was OR n.total <> n.total_was)`,
		)
	})
	if err != nil {
		return err
	}
	return execAll(ctx, idb, `DELETE FROM derive_papers`)
}

// idRanges calls fn with ranges [from, from+resolveChunk) of ids, each
// starting at the lowest id left that first (one ? for the lower bound,
// returning MIN of the ids at or past it, NULL when none) gives, so that
// the gaps between ids (an increment's new papers and revised old ones)
// cost no empty statements.
func idRanges(ctx context.Context, idb bun.IDB, first string, fn func(from, to int64) error) error {
	var bound int64 = math.MinInt64
	for {
		var from sql.NullInt64
		if err := idb.QueryRowContext(ctx, first, bound).Scan(&from); err != nil {
			return err
		}
		if !from.Valid {
			return nil
		}
		bound = from.Int64 + resolveChunk
		if err := fn(from.Int64, bound); err != nil {
			return err
		}
	}
}

// NameCandidate is a researcher that may share a name with another
// profile.
type NameCandidate struct {
	ID        int64
	Name      string
	FamilyKey string
	HasExtID  bool `bun:"has_ext_id"`
	Queued    bool
}

// NameCandidates reads the researchers of the families (family name
// keys) that have a researcher on the derive queue and more than one
// profile, by family and id. The families are those of the queue, read
// through the family index; which of them have one profile only is seen
// here in the rows, not by counting every family of the archive (a GROUP
// BY over all researchers, on every import). With added, the authors of
// the papers on derive_added count as queued too: their co-authors
// changed, their names and links did not.
func NameCandidates(ctx context.Context, idb bun.IDB, added bool) ([]NameCandidate, error) {
	touched := `SELECT researcher_id FROM derive_queue`
	if added {
		// CROSS JOIN keeps SQLite reading the few added papers' authors
		// by paper: joined the other way it walks every authorship of
		// the archive by researcher to find them, which was most of an
		// increment's work on a large archive.
		touched += ` UNION SELECT a.researcher_id FROM derive_added d CROSS JOIN authorships a
			WHERE a.paper_id = d.paper_id AND a.researcher_id IS NOT NULL`
	}
	return nameCandidates(ctx, idb, func(_ *bound, col string) (string, []any) { return col + " IN (" + touched + ")", nil })
}

// FamilyCandidates is NameCandidates for the families of the given
// researchers, who count as queued.
func FamilyCandidates(ctx context.Context, idb bun.IDB, ids []int64) ([]NameCandidate, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return nameCandidates(ctx, idb, func(b *bound, col string) (string, []any) { return in(b, col, ids) })
}

// nameCandidates reads the families of the researchers touched lists, as
// NameCandidates says: touched is the condition that col is one of them,
// with its arguments, bound in b.
func nameCandidates(ctx context.Context, idb bun.IDB, touched func(b *bound, col string) (string, []any)) ([]NameCandidate, error) {
	var ms []NameCandidate
	b := binding(idb)
	queued, args := touched(b, "id")
	family, familyArgs := touched(b, "r.id")
	err := idb.NewSelect().
		ColumnExpr("id, name, family_key").
		ColumnExpr("(orcid IS NOT NULL OR openalex_id IS NOT NULL OR s2_id IS NOT NULL) AS has_ext_id").
		ColumnExpr(queued+" AS queued", args...).
		Table("researchers").
		Where(`family_key IN (SELECT r.family_key FROM researchers r WHERE `+family+`)`, familyArgs...).
		Order("family_key", "id").
		Scan(b.ctx(ctx), &ms)
	if err != nil {
		return nil, err
	}
	// Keep the families of more than one profile: rows come by family.
	out := ms[:0]
	for i := 0; i < len(ms); {
		j := i + 1
		for j < len(ms) && ms[j].FamilyKey == ms[i].FamilyKey {
			j++
		}
		if j-i > 1 {
			out = append(out, ms[i:j]...)
		}
		i = j
	}
	return out, nil
}

// CoauthorSets returns each given researcher's co-authors, from the
// authorships themselves (the coauthors table may be stale during a
// derive). It reads the researchers' papers from the researcher index and
// then the authors of each of those papers once: joined in one statement,
// a paper of 2,832 authors was read again for every one of them asked
// for, and papers of over 100 authors made 96 % of the rows that the
// initials profiles' sets took at 750,000 synthetic papers.
func CoauthorSets(ctx context.Context, idb bun.IDB, ids []int64) (map[int64]map[int64]bool, error) {
	papers, authors, err := papersAndAuthors(ctx, idb, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]map[int64]bool, len(papers))
	for r, ps := range papers {
		co := map[int64]bool{}
		for _, p := range ps {
			for _, a := range authors[p] {
				co[a] = true
			}
		}
		delete(co, r)
		if len(co) > 0 {
			out[r] = co
		}
	}
	return out, nil
}

// papersAndAuthors returns the papers of the given researchers (as
// PapersOf) and the researchers on each of those papers, reading each
// paper once.
func papersAndAuthors(ctx context.Context, idb bun.IDB, ids []int64) (papers, authors map[int64][]int64, err error) {
	if papers, err = PapersOf(ctx, idb, ids); err != nil {
		return nil, nil, err
	}
	var all []int64
	for _, ps := range papers {
		all = append(all, ps...)
	}
	slices.Sort(all)
	authors, err = inChunks(ctx, idb, slices.Compact(all), func(b *bound, keys []int64) (string, []any) {
		cond, args := in(b, "paper_id", keys)
		return `SELECT paper_id, researcher_id FROM authorships WHERE ` + cond + ` AND researcher_id IS NOT NULL`, args
	})
	return papers, authors, err
}

// PapersOf returns the papers of each given researcher that has any,
// from the researcher index alone (a paper comes twice where a merge left
// a researcher twice on it).
func PapersOf(ctx context.Context, idb bun.IDB, ids []int64) (map[int64][]int64, error) {
	return inChunks(ctx, idb, ids, func(b *bound, keys []int64) (string, []any) {
		cond, args := in(b, "researcher_id", keys)
		return `SELECT researcher_id, paper_id FROM authorships WHERE ` + cond, args
	})
}

// inChunks runs the statement of query, of (key, value) rows for the
// keys it is given (bound in b), for keys inChunk at a time, and returns
// each key's values in the order read.
func inChunks(ctx context.Context, idb bun.IDB, keys []int64, query func(b *bound, keys []int64) (string, []any)) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	for len(keys) > 0 {
		n := min(len(keys), inChunk)
		b := binding(idb)
		q, args := query(b, keys[:n])
		err := scan(b.ctx(ctx), idb, func(rows *sql.Rows) error {
			var k, v int64
			if err := rows.Scan(&k, &v); err != nil {
				return err
			}
			out[k] = append(out[k], v)
			return nil
		}, q, args...)
		if err != nil {
			return nil, err
		}
		keys = keys[n:]
	}
	return out, nil
}

// inChunk is the most keys one statement of inChunks names.
const inChunk = 10_000

// ResearchersOnPapersOf returns the researchers on the papers of the
// given researchers, those included, reading each paper's authors once
// (see CoauthorSets).
func ResearchersOnPapersOf(ctx context.Context, idb bun.IDB, ids []int64) ([]int64, error) {
	_, authors, err := papersAndAuthors(ctx, idb, ids)
	if err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	var out []int64
	for _, as := range authors {
		for _, a := range as {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out, nil
}

// scan runs a query and calls row for each row it returns; row reads the
// current row with rows.Scan. It streams what would be costly to hold as
// models: the derive reads millions of rows after a large import.
func scan(ctx context.Context, idb bun.IDB, row func(*sql.Rows) error, query string, args ...any) error {
	rows, err := idb.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// MoveAuthorships moves the authorships of researcher from to researcher
// to. The caller queues whom the move changes: to and everyone on the
// papers that move.
func MoveAuthorships(ctx context.Context, idb bun.IDB, from, to int64) error {
	_, err := idb.NewUpdate().Table("authorships").Set("researcher_id = ?", to).Where("researcher_id = ?", from).Exec(ctx)
	return err
}

// queued is the set of researchers one transaction of derive recomputes:
// the derive batch, a part of the queue.
const queued = `(SELECT researcher_id FROM derive_batch)`

// ClearQueuedDerived deletes the co-authors, fields and same-name links
// of the queued researchers, and the queued researchers left with no
// paper and no external identity.
func ClearQueuedDerived(ctx context.Context, idb bun.IDB) error {
	return execAll(ctx, idb,
		`DELETE FROM coauthors WHERE researcher_id IN `+queued,
		`DELETE FROM researcher_categories WHERE researcher_id IN `+queued,
		`DELETE FROM same_name WHERE researcher_id IN `+queued+` OR other_id IN `+queued,
		`DELETE FROM researchers WHERE id IN `+queued+` AND orcid IS NULL AND openalex_id IS NULL AND s2_id IS NULL
		   AND NOT EXISTS (SELECT 1 FROM authorships a WHERE a.researcher_id = researchers.id)`,
	)
}

// QueuedAuthorship is one authorship of a queued researcher with what the
// figures need of its paper; Published is zero when unknown.
type QueuedAuthorship struct {
	ResearcherID, PaperID, Position, AuthorCount, Citations int64
	AuthorsComplete                                         bool
	Published                                               time.Time
}

// EachQueuedAuthorship calls fn with every authorship of the queued
// researchers, by researcher, then by paper (in the order of the
// authorships_researcher index: date, paper) and position, so that a
// researcher's rows of one paper come together and need no sort.
func EachQueuedAuthorship(ctx context.Context, idb bun.IDB, fn func(QueuedAuthorship) error) error {
	return scan(ctx, idb, func(rows *sql.Rows) error {
		var a QueuedAuthorship
		var published sql.NullTime
		if err := rows.Scan(&a.ResearcherID, &a.PaperID, &a.Position, &a.AuthorCount, &a.AuthorsComplete, &a.Citations, &published); err != nil {
			return err
		}
		a.Published = published.Time
		return fn(a)
	}, `SELECT a.researcher_id, a.paper_id, a.position, p.author_count, p.authors_complete,
		  p.citation_count, p.published
		FROM authorships a JOIN papers p ON p.id = a.paper_id
		WHERE a.researcher_id IN `+queued+`
		ORDER BY a.researcher_id, a.published, a.paper_id, a.position`)
}

// QueuedWithoutPapers returns the queued researchers with no authorship.
func QueuedWithoutPapers(ctx context.Context, idb bun.IDB) ([]int64, error) {
	var ids []int64
	err := idb.NewSelect().TableExpr("derive_batch AS q").Column("q.researcher_id").
		Where("NOT EXISTS (SELECT 1 FROM authorships a WHERE a.researcher_id = q.researcher_id)").
		Scan(ctx, &ids)
	return ids, err
}

// SetFigures writes researchers' derived figures, one value of each
// column per id; a row whose figures are unchanged is not written.
func SetFigures(ctx context.Context, tx bun.Tx, ids []int64, papers, known, sole, first, middle, last, h []int64, top []*int64) error {
	_, err := UpdateColumns(ctx, tx, "researchers", "id", ids,
		[]string{"paper_count", "position_known_count", "sole_count", "first_count", "middle_count", "last_count",
			"archive_h_index", "most_cited_paper_id"},
		papers, known, sole, first, middle, last, h, top)
	return err
}

// EachQueuedCategory calls fn with every category of every paper of the
// queued researchers, by researcher, paper (as EachQueuedAuthorship),
// author position and category position. cat is valid only during the
// call.
func EachQueuedCategory(ctx context.Context, idb bun.IDB, fn func(researcher, paper, position int64, cat []byte) error) error {
	// In the order of the authorships_researcher index; only each
	// paper's categories are sorted, by their primary key.
	return scan(ctx, idb, func(rows *sql.Rows) error {
		var rid, p, position int64
		var cat sql.RawBytes
		if err := rows.Scan(&rid, &p, &position, &cat); err != nil {
			return err
		}
		return fn(rid, p, position, cat)
	}, `SELECT a.researcher_id, a.paper_id, a.position, c.category
		FROM authorships a JOIN paper_categories c ON c.paper_id = a.paper_id
		WHERE a.researcher_id IN `+queued+`
		ORDER BY a.researcher_id, a.published, a.paper_id, a.position, c.position`)
}

// InsertResearcherCategories writes researchers' fields, one row per
// researcher and category.
func InsertResearcherCategories(ctx context.Context, tx bun.Tx, researchers []int64, categories []string, papers []int64) error {
	return InsertColumns(ctx, tx, "researcher_categories", []string{"researcher_id", "category", "paper_count"}, researchers, categories, papers)
}

// EachQueuedCoauthorship calls fn with every author of every paper a
// queued researcher is on, in paper order (the authorships' primary key),
// papers of more than MaxCoauthorPaperAuthors authors left out.
func EachQueuedCoauthorship(ctx context.Context, idb bun.IDB, fn func(paper, researcher int64) error) error {
	return scan(ctx, idb, func(rows *sql.Rows) error {
		var paper, researcher int64
		if err := rows.Scan(&paper, &researcher); err != nil {
			return err
		}
		return fn(paper, researcher)
	}, `SELECT a.paper_id, a.researcher_id FROM authorships a
		JOIN papers p ON p.id = a.paper_id
		WHERE a.researcher_id IS NOT NULL AND p.author_count <= ?
		  AND a.paper_id IN (SELECT x.paper_id FROM authorships x JOIN derive_batch q ON q.researcher_id = x.researcher_id)
		ORDER BY a.paper_id, a.position`, MaxCoauthorPaperAuthors)
}

// InsertCoauthors writes co-author rows: researcher, co-author and the
// papers they share.
func InsertCoauthors(ctx context.Context, tx bun.Tx, researchers, coauthors, papers []int64) error {
	return InsertColumns(ctx, tx, "coauthors", []string{"researcher_id", "coauthor_id", "paper_count"}, researchers, coauthors, papers)
}

// SetCoauthorCounts writes researchers' co-author counts (their rows in
// coauthors), one count per id; a row whose count is unchanged is not
// written.
func SetCoauthorCounts(ctx context.Context, tx bun.Tx, ids, counts []int64) error {
	_, err := UpdateColumns(ctx, tx, "researchers", "id", ids, []string{"coauthor_count"}, counts)
	return err
}

// RecountCoauthors counts again the rows in coauthors of the given
// researchers into their coauthor_count, a few thousand per statement.
func RecountCoauthors(ctx context.Context, idb bun.IDB, ids []int64) error {
	for chunk := range slices.Chunk(ids, 5000) {
		if _, err := idb.NewRaw(`UPDATE researchers
			SET coauthor_count = (SELECT COUNT(*) FROM coauthors c WHERE c.researcher_id = researchers.id)
			WHERE id IN (?)`, bun.List(chunk)).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// InsertSameName writes same-name links, a few thousand per statement.
func InsertSameName(ctx context.Context, idb bun.IDB, rows []SameName) error {
	for chunk := range slices.Chunk(rows, 5000) {
		if _, err := idb.NewInsert().Model(&chunk).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// MatchAffiliationsByROR links the unmatched affiliations that carry a
// ROR id to the institution of that id.
func MatchAffiliationsByROR(ctx context.Context, idb bun.IDB) error {
	return execAll(ctx, idb,
		`UPDATE affiliations SET institution_id = (SELECT i.id FROM institutions i WHERE i.ror_id = affiliations.ror_id)
		 WHERE institution_id IS NULL AND ror_id IS NOT NULL
		   AND EXISTS (SELECT 1 FROM institutions i WHERE i.ror_id = affiliations.ror_id)`)
}

// UnmatchedAffiliations returns the distinct raw strings of affiliations
// with neither an institution nor a ROR id.
func UnmatchedAffiliations(ctx context.Context, idb bun.IDB) ([]string, error) {
	var raws []string
	err := idb.NewSelect().Table("affiliations").Distinct().Column("raw").
		Where("institution_id IS NULL AND ror_id IS NULL").Scan(ctx, &raws)
	return raws, err
}

// MatchAffiliations links the unmatched affiliations (those with no ROR
// id) of each raw string raws[i] to institution ids[i], a few thousand
// strings per statement: affiliations has no index on raw, so that each
// statement reads the table once.
func MatchAffiliations(ctx context.Context, tx bun.Tx, raws []string, ids []int64) error {
	cols, n, err := columnsOf("affiliations", []string{"raw", "institution_id"}, []any{raws, ids})
	if err != nil || n == 0 {
		return err
	}
	if IsPostgres(tx) {
		_, err = execUnnest(ctx, tx, `UPDATE affiliations AS a SET institution_id = f.id
			FROM unnest(`+unnestArgs(cols)+`) AS f(raw, id)
			WHERE a.raw = f.raw AND a.institution_id IS NULL AND a.ror_id IS NULL`, n, cols)
		return err
	}
	_, err = execValues(ctx, tx, n, cols, func(values string) string {
		return `UPDATE affiliations SET institution_id = f.column2 FROM (` + values + `) AS f
			WHERE affiliations.raw = f.column1 AND affiliations.institution_id IS NULL AND affiliations.ror_id IS NULL`
	})
	return err
}

// MatchableName is a name of an active institution, with what decides
// whether it may match an affiliation.
type MatchableName struct {
	InstitutionID int64
	Name          string
	Kind          string
	NameKey       string
	Country       string
	Types         string
}

// MatchableNames reads the names of the active institutions (those with
// no status count as active).
func MatchableNames(ctx context.Context, idb bun.IDB) ([]MatchableName, error) {
	var rows []MatchableName
	err := idb.NewSelect().ColumnExpr("n.institution_id, n.name, n.kind, n.name_key, COALESCE(i.country, '') AS country, COALESCE(i.types, '') AS types").
		TableExpr("institution_names AS n").Join("JOIN institutions AS i ON i.id = n.institution_id").
		Where("i.status IS NULL OR i.status = 'active'").
		Scan(ctx, &rows)
	return rows, err
}

// deriveAddedRow is one entry of derive_added, the new papers whose
// authors derive adds the papers to (see AddedAuthorship).
type deriveAddedRow struct {
	bun.BaseModel `bun:"table:derive_added"`
	PaperID       int64 `bun:"paper_id,pk"`
}

// QueueAddedPapers puts new papers on derive_added: their authors who
// are not on derive_queue have the papers added to their fields and
// co-authors, and to their figures unless they are on derive_cited,
// rather than all of those recomputed.
func QueueAddedPapers(ctx context.Context, idb bun.IDB, ids []int64) error {
	return queueIDs(ctx, idb, ids, func(id int64) deriveAddedRow { return deriveAddedRow{PaperID: id} })
}

// AddedRange returns the lowest paper id on derive_added and the end of
// the range of n ids from it (exclusive); ok is false when it is empty.
func AddedRange(ctx context.Context, idb bun.IDB, n int64) (from, to int64, ok bool, err error) {
	var min sql.NullInt64
	if err := idb.QueryRowContext(ctx, `SELECT MIN(paper_id) FROM derive_added`).Scan(&min); err != nil || !min.Valid {
		return 0, 0, false, err
	}
	return min.Int64, min.Int64 + n, true, nil
}

// DropAdded takes the papers of ids [from, to) off derive_added.
func DropAdded(ctx context.Context, idb bun.IDB, from, to int64) error {
	_, err := idb.ExecContext(ctx, `DELETE FROM derive_added WHERE paper_id >= ? AND paper_id < ?`, from, to)
	return err
}

// AddedAuthorship is one authorship of a paper on derive_added, with what
// the figures need of the paper; Queued says the researcher is on
// derive_queue (recomputed whole), Cited that they are on derive_cited
// (their figures recomputed).
type AddedAuthorship struct {
	PaperID, ResearcherID, Position, AuthorCount, Citations int64
	AuthorsComplete, Queued, Cited                          bool
}

// AddedAuthorships reads the authorships of the papers on derive_added
// with ids in [from, to), by paper and position.
func AddedAuthorships(ctx context.Context, idb bun.IDB, from, to int64) ([]AddedAuthorship, error) {
	var out []AddedAuthorship
	err := scan(ctx, idb, func(rows *sql.Rows) error {
		var a AddedAuthorship
		if err := rows.Scan(&a.PaperID, &a.ResearcherID, &a.Position, &a.AuthorCount, &a.AuthorsComplete, &a.Citations,
			&a.Queued, &a.Cited); err != nil {
			return err
		}
		out = append(out, a)
		return nil
	}, `SELECT a.paper_id, a.researcher_id, a.position, p.author_count, p.authors_complete, p.citation_count,
		  EXISTS (SELECT 1 FROM derive_queue q WHERE q.researcher_id = a.researcher_id),
		  EXISTS (SELECT 1 FROM derive_cited c WHERE c.researcher_id = a.researcher_id)
		FROM authorships a JOIN papers p ON p.id = a.paper_id
		WHERE a.researcher_id IS NOT NULL AND a.paper_id IN (SELECT paper_id FROM derive_added WHERE paper_id >= ? AND paper_id < ?)
		ORDER BY a.paper_id, a.position`, from, to)
	return out, err
}

// Figures are a researcher's derived counts as stored.
type Figures struct {
	ID                                          int64
	Papers, Known, Sole, First, Middle, Last, H int64
	Top                                         *int64
}

// FiguresOf reads the stored figures of the given researchers.
func FiguresOf(ctx context.Context, idb bun.IDB, ids []int64) ([]Figures, error) {
	var out []Figures
	for chunk := range slices.Chunk(ids, 5000) {
		b := binding(idb)
		cond, args := in(b, "id", chunk)
		err := scan(b.ctx(ctx), idb, func(rows *sql.Rows) error {
			var f Figures
			var top sql.NullInt64
			if err := rows.Scan(&f.ID, &f.Papers, &f.Known, &f.Sole, &f.First, &f.Middle, &f.Last, &f.H, &top); err != nil {
				return err
			}
			if top.Valid {
				f.Top = &top.Int64
			}
			out = append(out, f)
			return nil
		}, `SELECT id, paper_count, position_known_count, sole_count, first_count, middle_count, last_count,
			  archive_h_index, most_cited_paper_id
			FROM researchers WHERE `+cond, args...)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// QueueCited puts researchers on derive_cited (see FiguresOnly).
func QueueCited(ctx context.Context, idb bun.IDB, ids []int64) error {
	return queueIDs(ctx, idb, ids, func(id int64) deriveCitedRow { return deriveCitedRow{ResearcherID: id} })
}

// deriveCitedRow is one entry of derive_cited.
type deriveCitedRow struct {
	bun.BaseModel `bun:"table:derive_cited"`
	ResearcherID  int64 `bun:"researcher_id,pk"`
}

// AddCoauthors adds shared papers to co-author rows, making the rows not
// there yet.
func AddCoauthors(ctx context.Context, tx bun.Tx, researchers, coauthors, papers []int64) error {
	return AddColumns(ctx, tx, "coauthors", 2, []string{"researcher_id", "coauthor_id", "paper_count"}, researchers, coauthors, papers)
}

// AddResearcherCategories adds papers to researchers' fields, making the
// rows not there yet.
func AddResearcherCategories(ctx context.Context, tx bun.Tx, researchers []int64, categories []string, papers []int64) error {
	return AddColumns(ctx, tx, "researcher_categories", 2, []string{"researcher_id", "category", "paper_count"}, researchers, categories, papers)
}
