package resolvers

import (
	"github.com/papergraph/papergraph/ask"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/network"
)

// TestSchemaSizesAreTheResolvers holds the sizes schema.graphqls states
// with @listSize and @listBound to the constants the resolvers cut their
// lists with: for each list, its size when no argument is given and the
// most it returns.
func TestSchemaSizesAreTheResolvers(t *testing.T) {
	schema := NewSchema(nil).Schema()
	page := [2]int64{defaultPage, MaxPage}
	fixed := func(n int64) [2]int64 { return [2]int64{n, n} }
	want := map[string][2]int64{
		"Query.nodes":                {MaxIDs, MaxIDs},
		"Query.papers":               {MaxIDs, MaxIDs},
		"Query.searchPapers":         page,
		"Query.searchResearchers":    page,
		"Query.searchInstitutions":   page,
		"Query.suggest":              {10, MaxSuggestions},
		"Query.collaborationPath":    {network.DefaultPathDepth + 1, network.MaxPathDepth + 1},
		"CollaborationStep.papers":   fixed(maxStepPapers),
		"PaperFacets.categories":     fixed(model.MaxFacets),
		"PaperFacets.years":          fixed(model.MaxFacets),
		"Paper.authors":              {DefaultAuthorsPage, MaxAuthorsPage},
		"Paper.references":           page,
		"Paper.citations":            page,
		"Paper.citationNetwork":      {int64(network.DefaultOptions.MaxNodes), network.MaxNodesCap},
		"Authorship.affiliations":    fixed(maxAffiliations),
		"Authorship.institutions":    fixed(maxAffiliations),
		"Category.topResearchers":    {10, MaxTopResearchers},
		"Category.papers":            page,
		"Researcher.authorPositions": fixed(4),
		"Researcher.fields":          {DefaultFields, MaxFields},
		"Researcher.sameName":        {DefaultSameName, MaxSameName},
		"Researcher.papers":          page,
		"Researcher.coauthors":       page,
		"Researcher.network":         {int64(network.DefaultOptions.MaxNodes), network.MaxNodesCap},
		"Institution.types":          fixed(model.MaxTypes),
		"Institution.researchers":    page,
		"Institution.papers":         page,
		"Institution.collaborators":  {10, 100},
		"Institution.network":        {int64(network.DefaultOptions.MaxNodes), network.MaxNodesCap},
		"Viewer.feed":                page,
		"Following.researchers":      fixed(db.MaxFollows),
		"Following.categories":       fixed(db.MaxFollows),
		"Paper.related":              {DefaultRelated, MaxRelated},
		"Researcher.similar":         {DefaultSimilar, MaxSimilar},
		"Query.ask":                  {ask.DefaultPassages, ask.MaxPassages},
		"Subscription.askStream":     {ask.DefaultPassages, ask.MaxPassages},
		"AskAnswer.citations":        fixed(ask.MaxPassages),
		"AskAnswer.removedCitations": fixed(ask.MaxPassages),
		"PaperAnalysis.keywords":     fixed(db.MaxKeywords),
		"Query.topics":               {defaultTopicsPage, maxTopicsPage},
		"Topic.papers":               page,
		"Topic.researchers":          {defaultTopicList, db.MaxTopicResearchers},
		"Topic.children":             fixed(maxTopicChildren),
		"Researcher.topics":          {defaultTopicList, db.MaxResearcherTopics},
	}
	for key, w := range want {
		f := fieldDef(schema, key)
		if f == nil {
			t.Errorf("%s: no such field", key)
			continue
		}
		assumed := intDirectiveArg(f, "listSize", "assumedSize")
		most := intDirectiveArg(f, "listBound", "max")
		if most == 0 {
			most = assumed
		}
		if got := [2]int64{assumed, most}; got != w {
			t.Errorf("%s: schema sizes %v (assumedSize, max), resolvers %v", key, got, w)
		}
	}
	edges := intDirectiveArg(fieldDef(schema, "ResearcherNetwork.edges"), "listBound", "perItem")
	if edges != network.EdgesPerNode {
		t.Errorf("ResearcherNetwork.edges: perItem %d, the network keeps %d edges a node", edges, network.EdgesPerNode)
	}
	for name, def := range schema.Types {
		for _, f := range def.Fields {
			_, listed := want[name+"."+f.Name]
			// A @batched field's resolver is cut to the size its
			// schema states by generated code.
			batched := f.Directives.ForName("batched") != nil && f.Directives.ForName("listSize").Arguments.ForName("slicingArguments") == nil
			if f.Directives.ForName("listSize") != nil && !listed && !batched {
				t.Errorf("%s.%s has a @listSize this test does not hold to the resolvers", name, f.Name)
			}
		}
	}
}

func fieldDef(schema *ast.Schema, key string) *ast.FieldDefinition {
	for name, def := range schema.Types {
		for _, f := range def.Fields {
			if name+"."+f.Name == key {
				return f
			}
		}
	}
	return nil
}

func intDirectiveArg(f *ast.FieldDefinition, directive, arg string) int64 {
	if d := f.Directives.ForName(directive); d != nil {
		if a := d.Arguments.ForName(arg); a != nil {
			if v, err := a.Value.Value(nil); err == nil {
				n, _ := v.(int64)
				return n
			}
		}
	}
	return 0
}
