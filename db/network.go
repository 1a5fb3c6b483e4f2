package db

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
)

// The statements of package network, which walks the graphs around a
// researcher, an institution or a paper; network keeps the walk.

// Neighbour is a node tied to others, with the weight of its ties.
type Neighbour struct {
	ID     int64
	Weight int
}

// NetworkEdge is one tie between two nodes of a network. Weight is the
// number of shared papers; a citation edge runs from the citing paper
// (Source) to the cited one (Target) and weighs 1.
type NetworkEdge struct {
	Source, Target int64
	Weight         int
}

// NodeLabel is what a network shows of a node: a researcher's or
// institution's name, or a paper's arXiv id (its DOI when it has none),
// and its paper count (for a paper, the papers in the archive citing it).
type NodeLabel struct {
	ID         int64
	Label      string
	PaperCount int
}

// largePaper is the SQL test for papers that make no ties: those whose
// byline is too long to say anything about who works with whom (see
// MaxCoauthorPaperAuthors, which the coauthors table obeys too).
var largePaper = fmt.Sprintf("p.author_count > %d", MaxCoauthorPaperAuthors)

// NetworkKind is what tells one network from another: the statements
// that walk out from a frontier, list the edges among the nodes and
// label them. Each method sends one statement, whose lists of nodes are
// bound in b.
type NetworkKind struct {
	expand func(b *bound, frontier, seen []int64, minWeight, limit int) (string, []any)
	edges  func(b *bound, nodes []int64, minWeight int) (string, []any)
	labels func(b *bound, nodes []int64) (string, []any)
}

// notIn is the condition that col is none of keys, with its arguments (see
// in).
func notIn(b *bound, col string, keys []int64) (string, []any) {
	cond, args := in(b, col, keys)
	return "NOT (" + cond + ")", args
}

// Expand lists the nodes outside seen tied to frontier by ties of at
// least minWeight, each with the summed weight of its ties to frontier,
// strongest first, at most limit.
func (k NetworkKind) Expand(ctx context.Context, idb bun.IDB, frontier, seen []int64, minWeight, limit int) ([]Neighbour, error) {
	b := binding(idb)
	q, args := k.expand(b, frontier, seen, minWeight, limit)
	var found []Neighbour
	err := idb.NewRaw(q, args...).Scan(b.ctx(ctx), &found)
	return found, err
}

// Labels reads the label and paper count of each of the nodes that
// exist.
func (k NetworkKind) Labels(ctx context.Context, idb bun.IDB, nodes []int64) ([]NodeLabel, error) {
	var labels []NodeLabel
	b := binding(idb)
	q, args := k.labels(b, nodes)
	err := idb.NewRaw(q, args...).Scan(b.ctx(ctx), &labels)
	return labels, err
}

// Edges reads into edges the edges of at least minWeight among nodes,
// each once: the strongest limit of them, in any order. (Scanning into
// the caller's slice saves the graph an allocation.)
func (k NetworkKind) Edges(ctx context.Context, idb bun.IDB, nodes []int64, minWeight, limit int, edges *[]NetworkEdge) error {
	b := binding(idb)
	q, args := k.edges(b, nodes, minWeight)
	q = "SELECT source, target, weight FROM (" + q + ") AS e ORDER BY weight DESC, source, target LIMIT ?"
	return idb.NewRaw(q, append(args, limit)...).Scan(b.ctx(ctx), edges)
}

// CoauthorNetwork walks the coauthors table, whose weights are shared
// papers.
var CoauthorNetwork = NetworkKind{
	expand: func(b *bound, frontier, seen []int64, minWeight, limit int) (string, []any) {
		from, args := in(b, "researcher_id", frontier)
		unseen, a := notIn(b, "coauthor_id", seen)
		return `SELECT coauthor_id AS id, CAST(SUM(paper_count) AS BIGINT) AS weight
			FROM coauthors
			WHERE ` + from + ` AND ` + unseen + ` AND paper_count >= ?
			GROUP BY coauthor_id
			ORDER BY weight DESC, id
			LIMIT ?`, append(append(args, a...), minWeight, limit)
	},
	edges: func(b *bound, nodes []int64, minWeight int) (string, []any) {
		source, args := in(b, "researcher_id", nodes)
		target, a := in(b, "coauthor_id", nodes)
		return `SELECT researcher_id AS source, coauthor_id AS target, paper_count AS weight
			FROM coauthors
			WHERE ` + source + ` AND ` + target + ` AND researcher_id < coauthor_id AND paper_count >= ?`, append(append(args, a...), minWeight)
	},
	labels: func(b *bound, nodes []int64) (string, []any) {
		cond, args := in(b, "id", nodes)
		return `SELECT id, name AS label, paper_count FROM researchers WHERE ` + cond, args
	},
}

// institutionPairs is the statement that weighs the ties of the
// institutions in list (bound in bd) to others: the papers with authors
// at both, pairs weaker than the last argument left out. cond adds
// conditions on the other institution, b, whose arguments come before
// that one; the statement's arguments are returned without it.
func institutionPairs(bd *bound, list []int64, cond string, condArgs []any) (string, []any) {
	from, args := in(bd, "a.institution_id", list)
	return `SELECT a.institution_id AS source, b.institution_id AS target, COUNT(DISTINCT a.paper_id) AS weight
		FROM affiliations a
		JOIN affiliations b ON b.paper_id = a.paper_id AND b.institution_id <> a.institution_id
		JOIN papers p ON p.id = a.paper_id
		WHERE ` + from + ` AND NOT ` + largePaper + cond + `
		GROUP BY a.institution_id, b.institution_id
		HAVING COUNT(DISTINCT a.paper_id) >= ?`, append(args, condArgs...)
}

// CoaffiliationNetwork walks affiliations: two institutions are tied by
// the papers with authors at both.
var CoaffiliationNetwork = NetworkKind{
	expand: func(b *bound, frontier, seen []int64, minWeight, limit int) (string, []any) {
		unseen, a := notIn(b, "b.institution_id", seen)
		pairs, args := institutionPairs(b, frontier, " AND "+unseen, a)
		return `SELECT target AS id, CAST(SUM(weight) AS BIGINT) AS weight
			FROM (` + pairs + `) AS w
			GROUP BY target
			ORDER BY weight DESC, id
			LIMIT ?`, append(args, minWeight, limit)
	},
	edges: func(b *bound, nodes []int64, minWeight int) (string, []any) {
		target, a := in(b, "b.institution_id", nodes)
		pairs, args := institutionPairs(b, nodes, " AND "+target+" AND a.institution_id < b.institution_id", a)
		return pairs, append(args, minWeight)
	},
	labels: func(b *bound, nodes []int64) (string, []any) {
		cond, args := in(b, "i.id", nodes)
		return `SELECT i.id, i.name AS label,
			(SELECT COUNT(DISTINCT f.paper_id) FROM affiliations f WHERE f.institution_id = i.id) AS paper_count
		FROM institutions i WHERE ` + cond, args
	},
}

// CitationNetwork walks citations in both directions; every link weighs
// 1, so a paper's tie to a layer is the number of its papers it cites or
// is cited by.
var CitationNetwork = NetworkKind{
	expand: func(b *bound, frontier, seen []int64, _, limit int) (string, []any) {
		citing, args := in(b, "citing_id", frontier)
		cited, a := in(b, "cited_id", frontier)
		args = append(args, a...)
		unseen, a := notIn(b, "id", seen)
		return `SELECT id, COUNT(DISTINCT via) AS weight
			FROM (
				SELECT cited_id AS id, citing_id AS via FROM paper_references WHERE ` + citing + ` AND cited_id IS NOT NULL
				UNION ALL
				SELECT citing_id, cited_id FROM paper_references WHERE ` + cited + `
			) AS n
			WHERE ` + unseen + `
			GROUP BY id
			ORDER BY weight DESC, id
			LIMIT ?`, append(append(args, a...), limit)
	},
	edges: func(b *bound, nodes []int64, _ int) (string, []any) {
		citing, args := in(b, "citing_id", nodes)
		cited, a := in(b, "cited_id", nodes)
		return `SELECT DISTINCT citing_id AS source, cited_id AS target, 1 AS weight
			FROM paper_references
			WHERE ` + citing + ` AND ` + cited + ` AND citing_id <> cited_id`, append(args, a...)
	},
	labels: func(b *bound, nodes []int64) (string, []any) {
		cond, args := in(b, "id", nodes)
		return `SELECT id, COALESCE(arxiv_id, doi, '') AS label, archive_citation_count AS paper_count
		FROM papers WHERE ` + cond, args
	},
}

// CollaboratorsByInstitutionIDs reads, for each institution, at most
// first institutions it shares papers with, most shared papers first
// (then by id), each weighed by those papers, in one statement.
func CollaboratorsByInstitutionIDs(ctx context.Context, idb bun.IDB, ids []int64, first int) (map[int64][]Neighbour, error) {
	var rows []NetworkEdge
	b := binding(idb)
	pairs, args := institutionPairs(b, ids, "", nil)
	err := idb.NewRaw(`SELECT source, target, weight FROM (
			SELECT source, target, weight, ROW_NUMBER() OVER (PARTITION BY source ORDER BY weight DESC, target) AS n
			FROM (`+pairs+`) AS w
		) AS r
		WHERE n <= ?
		ORDER BY source, n`, append(args, 1, first)...).Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	return groupBy(rows, func(r *NetworkEdge) int64 { return r.Source },
		func(r *NetworkEdge) Neighbour { return Neighbour{ID: r.Target, Weight: r.Weight} }), nil
}

// CoauthorTie is a researcher and one of their co-authors.
type CoauthorTie struct{ ResearcherID, CoauthorID int64 }

// CoauthorTies reads the co-authors of the given researchers, by
// co-author, each co-author's strongest tie first: at most most ties.
func CoauthorTies(ctx context.Context, idb bun.IDB, ids []int64, most int) ([]CoauthorTie, error) {
	var rows []CoauthorTie
	b := binding(idb)
	cond, args := in(b, "researcher_id", ids)
	err := idb.NewRaw(`SELECT researcher_id, coauthor_id FROM coauthors WHERE `+cond+`
		ORDER BY coauthor_id, paper_count DESC, researcher_id LIMIT ?`, append(args, most)...).Scan(b.ctx(ctx), &rows)
	return rows, err
}

// PathEnds are the two ends of a collaboration path as PathEndsOf reads
// them: their co-author counts (0 for one that does not exist) and
// whether they are co-authors.
type PathEnds struct {
	FromCount int64 `bun:"from_count"`
	ToCount   int64 `bun:"to_count"`
	Tied      bool  `bun:"tied"`
}

// PathEndsOf reads the co-author counts of from and to and whether they
// are tied, in one statement of three probes of primary keys.
func PathEndsOf(ctx context.Context, idb bun.IDB, from, to int64) (PathEnds, error) {
	var e PathEnds
	err := idb.NewRaw(`SELECT
		COALESCE((SELECT coauthor_count FROM researchers WHERE id = ?), 0) AS from_count,
		COALESCE((SELECT coauthor_count FROM researchers WHERE id = ?), 0) AS to_count,
		EXISTS (SELECT 1 FROM coauthors WHERE researcher_id = ? AND coauthor_id = ?) AS tied`,
		from, to, from, to).Scan(ctx, &e)
	return e, err
}

// TieRead is how CoauthorTieAcross reads the ties between two lists of
// researchers: all three give the same rows, at different costs.
type TieRead int

const (
	// ProbePairs probes each pair of the two lists in the primary key:
	// a descent of the index a pair, whatever the researchers' co-author
	// counts, which a prolific researcher has by the hundred and more as
	// the archive grows.
	ProbePairs TieRead = iota
	// ReadFrom reads the ties of from, filtered by to: a row a co-author
	// of from.
	ReadFrom
	// ReadTo reads the ties of to, filtered by from.
	ReadTo
)

// TieAcross is what CoauthorTieAcross reads: the tie found, if any, or
// else the summed co-author count of the researchers it was asked to
// count.
type TieAcross struct {
	Tie   CoauthorTie
	Found bool
	Ties  int64
}

// CoauthorTieAcross reads the tie from one of from to one of to whose
// end in to has the lowest id, the tie of most shared papers (then of the
// lowest id in from) to that end; when there is none, it reads the summed
// co-author count (researchers.coauthor_count) of count instead, which
// then costs a look-up of each. One statement, which reads the ties as
// how says. "+ 0" keeps the filtering list from the primary key, which
// would probe every pair of the two lists.
func CoauthorTieAcross(ctx context.Context, idb bun.IDB, from, to []int64, how TieRead, count []int64) (TieAcross, error) {
	probe := " + 0"
	if how == ProbePairs {
		probe = ""
	}
	cols, order := "c.researcher_id AS researcher_id, c.coauthor_id AS coauthor_id", "c.coauthor_id, c.paper_count DESC, c.researcher_id"
	if how == ReadTo {
		cols, order = "c.coauthor_id AS researcher_id, c.researcher_id AS coauthor_id", "c.researcher_id, c.paper_count DESC, c.coauthor_id"
		from, to = to, from
	}
	b := binding(idb)
	counted, args := in(b, "r.id", count)
	source, a := in(b, "c.researcher_id", from)
	args = append(args, a...)
	target, a := in(b, "c.coauthor_id"+probe, to)
	args = append(args, a...)
	// The count's subquery stands in a CASE branch taken only when no
	// tie was found, which both databases evaluate only then.
	q := `SELECT m.researcher_id, m.coauthor_id, CASE WHEN m.researcher_id IS NULL THEN
			(SELECT COALESCE(SUM(r.coauthor_count), 0) FROM researchers AS r WHERE ` + counted + `) ELSE 0 END AS ties
		FROM (SELECT 1 AS one) AS o LEFT JOIN (
			SELECT ` + cols + ` FROM coauthors AS c WHERE ` + source + ` AND ` + target + ` ORDER BY ` + order + ` LIMIT 1
		) AS m ON 1 = 1`
	var row struct {
		ResearcherID, CoauthorID *int64
		Ties                     int64
	}
	err := idb.NewRaw(q, args...).Scan(b.ctx(ctx), &row)
	if err != nil || row.ResearcherID == nil {
		return TieAcross{Ties: row.Ties}, err
	}
	return TieAcross{Tie: CoauthorTie{*row.ResearcherID, *row.CoauthorID}, Found: true}, nil
}

// SharedPaper is a paper two researchers, A < B, are both on.
type SharedPaper struct{ A, B, PaperID int64 }

// SharedPapers reads the papers that each consecutive pair of path, a
// list of researchers, shares, by paper, those of more than
// MaxCoauthorPaperAuthors authors left out, in one statement.
//
// On SQLite each pair reads the papers of the one of fewer papers (by
// researchers.paper_count, which only chooses the side: either gives the
// same rows) and probes the other's index for each at its date and id, so
// that a pair costs the shorter list, not both, and the papers table is
// read for the shared papers alone. PostgreSQL merges the lists of all
// of path's researchers, read in order from the same index, which costs
// it fewer pages than a probe per paper; it also returns the papers of
// pairs that are not consecutive, which the caller leaves out.
func SharedPapers(ctx context.Context, idb bun.IDB, path []int64) ([]SharedPaper, error) {
	var rows []SharedPaper
	if len(path) < 2 {
		return nil, nil
	}
	if IsPostgres(idb) {
		b := binding(idb)
		x, args := in(b, "x.researcher_id", path)
		y, a := in(b, "y.researcher_id", path)
		err := idb.NewRaw(`SELECT DISTINCT x.researcher_id AS a, y.researcher_id AS b, x.paper_id
			FROM authorships x
			JOIN authorships y ON y.paper_id = x.paper_id
			JOIN papers p ON p.id = x.paper_id
			WHERE `+x+` AND `+y+` AND x.researcher_id < y.researcher_id AND NOT `+largePaper+`
			ORDER BY x.paper_id`, append(args, a...)...).Scan(b.ctx(ctx), &rows)
		return rows, err
	}
	pairs := make([]string, len(path)-1)
	args := make([]any, 0, 2*len(pairs))
	for i := range pairs {
		pairs[i] = "(?, ?)"
		args = append(args, min(path[i], path[i+1]), max(path[i], path[i+1]))
	}
	err := idb.NewRaw(`WITH q (a, b) AS (VALUES `+strings.Join(pairs, ", ")+`)
		SELECT DISTINCT q.a, q.b, x.paper_id
		FROM q
		CROSS JOIN authorships x ON x.researcher_id = CASE
			WHEN (SELECT paper_count FROM researchers WHERE id = q.a) <= (SELECT paper_count FROM researchers WHERE id = q.b) THEN q.a ELSE q.b END
		CROSS JOIN authorships y ON y.researcher_id = q.a + q.b - x.researcher_id AND y.published IS x.published AND y.paper_id = x.paper_id
		CROSS JOIN papers p ON p.id = x.paper_id
		WHERE q.a <> q.b AND NOT `+largePaper+`
		ORDER BY x.paper_id`, args...).Scan(ctx, &rows)
	return rows, err
}
