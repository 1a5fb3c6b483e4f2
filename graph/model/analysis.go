package model

import (
	"strings"

	"github.com/papergraph/papergraph/db"
)

// PaperAnalysis is a paper's analysis as GraphQL shows it.
type PaperAnalysis struct{ *db.PaperAnalysis }

// Type is the paper type; a stored type GraphQL does not know (the writers
// accept only db.PaperTypes) shows as OTHER.
func (a PaperAnalysis) Type() PaperType {
	t := PaperType(strings.ToUpper(a.PaperAnalysis.PaperType))
	if !t.IsValid() {
		return PaperTypeOther
	}
	return t
}

// Source is where the analysis came from.
func (a PaperAnalysis) Source() *AnalysisSource {
	return &AnalysisSource{Model: a.Model, PromptVersion: a.PromptVersion}
}

// KeywordList is the analysis's keywords, at most db.MaxKeywords: the
// writers accept no more, and the schema prices the list at that.
func (a PaperAnalysis) KeywordList() []string {
	return a.Keywords[:min(len(a.Keywords), db.MaxKeywords)]
}
