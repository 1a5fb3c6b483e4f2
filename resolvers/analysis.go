package resolvers

import (
	"context"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
)

// analyses is the request's loader of papers' analyses.
func analyses(l *Loaders) *loader[int64, *db.PaperAnalysis] {
	return readLoader(l, db.AnalysesByPaperIDs)
}

// analysisSteps are the steps of the fields of the paper analysis: one
// statement reads the analyses of all the papers of a level, and their
// fields are at hand in the rows.
func analysisSteps() map[string]step {
	return map[string]step{
		"Paper.analysis": follow(analyses, noArgs(keyOfEach(paperID)), "", nil),
	}
}

// paperAnalysis is the analysis of paper id, nil when it has none.
func paperAnalysis(ctx context.Context, id int64) (*model.PaperAnalysis, error) {
	a, err := analyses(loaders(ctx)).load(ctx, id)
	if err != nil || a == nil {
		return nil, err
	}
	return &model.PaperAnalysis{PaperAnalysis: a}, nil
}
