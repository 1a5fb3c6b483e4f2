package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// PaperAnalysis is a paper's analysis: what a language model, or a person,
// read off its title and abstract (table paper_analyses, one row a paper
// at most).
type PaperAnalysis struct {
	bun.BaseModel `bun:"table:paper_analyses"`

	PaperID       int64  `bun:"paper_id,pk"`
	Summary       string `bun:"summary,notnull"`
	Novelty       string `bun:"novelty,notnull"`
	PaperType     string `bun:"paper_type,notnull"`
	ResearchField string `bun:"research_field,notnull"`
	// SignificanceScore runs from 0 (routine) to 10 (field-changing).
	SignificanceScore int      `bun:"significance_score,notnull"`
	Keywords          []string `bun:"keywords,notnull"`
	// Model and PromptVersion name where the analysis came from: the
	// model that wrote it (or "hand-written fixture") and the version of
	// the prompt it was asked with.
	Model         string `bun:"model,notnull"`
	PromptVersion string `bun:"prompt_version,notnull"`
	// AbstractHash is AbstractHash of the abstract the analysis read.
	AbstractHash string    `bun:"abstract_hash,notnull"`
	AnalysedAt   time.Time `bun:"analysed_at,notnull"`
}

// MaxKeywords is the most keywords an analysis keeps.
const MaxKeywords = 10

// PaperTypes are the kinds of paper an analysis names, as paper_type
// stores them.
var PaperTypes = []string{"theory", "experiment", "observation", "computation", "method", "review", "resource", "position", "other"}

// AbstractHash is the hash of a paper's title and abstract that an
// analysis records: the analysis is current while the paper's hash is the
// same. Whitespace runs count as one space, so a re-wrapped abstract is
// the same abstract.
func AbstractHash(title, abstract string) string {
	h := sha256.Sum256([]byte(strings.Join(strings.Fields(title), " ") + "\n" + strings.Join(strings.Fields(abstract), " ")))
	return hex.EncodeToString(h[:16])
}

// AnalysesByPaperIDs reads the analyses of papers; a paper without one is
// absent.
func AnalysesByPaperIDs(ctx context.Context, idb bun.IDB, ids []int64) (map[int64]*PaperAnalysis, error) {
	var rows []*PaperAnalysis
	b := binding(idb)
	cond, args := in(b, "paper_id", ids)
	if err := idb.NewSelect().Model(&rows).Where(cond, args...).Scan(b.ctx(ctx)); err != nil {
		return nil, err
	}
	return keyBy(rows, func(a *PaperAnalysis) int64 { return a.PaperID }), nil
}

// SaveAnalyses writes analyses, replacing a paper's earlier one.
func SaveAnalyses(ctx context.Context, idb bun.IDB, rows []*PaperAnalysis) error {
	if len(rows) == 0 {
		return nil
	}
	for _, r := range rows {
		if r.Keywords == nil {
			r.Keywords = []string{}
		}
	}
	_, err := idb.NewInsert().Model(&rows).On("CONFLICT (paper_id) DO UPDATE").
		Set("summary = EXCLUDED.summary, novelty = EXCLUDED.novelty, paper_type = EXCLUDED.paper_type").
		Set("research_field = EXCLUDED.research_field, significance_score = EXCLUDED.significance_score").
		Set("keywords = EXCLUDED.keywords, model = EXCLUDED.model, prompt_version = EXCLUDED.prompt_version").
		Set("abstract_hash = EXCLUDED.abstract_hash, analysed_at = EXCLUDED.analysed_at").
		Exec(ctx)
	return err
}

// AnalysisCandidate is a paper papergraph analyse may analyse: its text,
// and the abstract hash of its current analysis ("" for none).
type AnalysisCandidate struct {
	ID           int64     `bun:"id"`
	ArxivID      string    `bun:"arxiv_id"`
	Title        string    `bun:"title"`
	Abstract     string    `bun:"abstract"`
	Published    time.Time `bun:"published,nullzero"`
	AbstractHash string    `bun:"abstract_hash"`
}

// AnalysisCandidates reads, in id order after id after, up to limit papers
// with an abstract that were published at or after since (any date when
// zero), with their analysis's abstract hash. The caller skips those whose
// hash is current; reading them here keeps the statement an index range.
func AnalysisCandidates(ctx context.Context, idb bun.IDB, after int64, since time.Time, limit int) ([]AnalysisCandidate, error) {
	var rows []AnalysisCandidate
	q := idb.NewSelect().TableExpr("papers AS p").
		Join("LEFT JOIN paper_analyses AS a ON a.paper_id = p.id").
		ColumnExpr("p.id, p.arxiv_id, p.title, p.abstract, p.published, COALESCE(a.abstract_hash, '') AS abstract_hash").
		Where("p.id > ?", after).Where("p.abstract IS NOT NULL").OrderExpr("p.id").Limit(int64(limit))
	if !since.IsZero() {
		q.Where("p.published >= ?", since)
	}
	err := q.Scan(ctx, &rows)
	return rows, err
}
