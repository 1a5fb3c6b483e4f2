package resolvers

import (
	"github.com/papergraph/papergraph/cost"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/network"
)

// The most items of the lists that take no page arguments. Their
// resolvers cut the lists to these, so that the cost calculator's bounds
// hold for every answer.
const (
	// MaxAuthorsPage is the most byline entries one `authors` returns,
	// and DefaultAuthorsPage how many when `first` is not given.
	MaxAuthorsPage     = 100
	DefaultAuthorsPage = 100
	// MaxSameName is the most profiles `sameName` returns.
	MaxSameName     = 100
	DefaultSameName = 20
	// MaxFields is the most categories `Researcher.fields` returns.
	MaxFields     = 200
	DefaultFields = 50

	maxPaperCategories        = 50
	maxAffiliations           = 20
	maxResearcherInstitutions = 100
	maxPaperInstitutions      = 100
	maxInstitutionNames       = 100
	maxStepPapers             = 20
)

// Request weights beyond the default of one per list: a full-text search,
// facets over a whole result and a network walk each read far more rows
// than a page read by key.
const (
	searchWeight  = 10
	facetsWeight  = 10
	networkWeight = 20
	pathWeight    = 50
)

// Bounds is the cost table of the schema: for every list field, how many
// items it returns at most (cost.Check, run by the server at start and by
// a test, keeps it complete).
var Bounds = func() cost.Table {
	page := cost.Bound{Args: []string{"first", "last"}, Default: defaultPage, Max: MaxPage, Page: true}
	search := page
	search.Weight = searchWeight
	byName := page
	byName.Weight = searchWeight / 2
	inherit := cost.Bound{Inherit: true}
	net := cost.Bound{Args: []string{"maxNodes"}, Default: int64(network.DefaultOptions.MaxNodes), Max: network.MaxNodesCap, Page: true, Weight: networkWeight}
	edges := cost.Bound{Inherit: true, Factor: network.EdgesPerNode}
	fixed := func(n int64) cost.Bound { return cost.Bound{Default: n, Max: n} }
	first := func(def, most int64) cost.Bound { return cost.Bound{Args: []string{"first"}, Default: def, Max: most} }
	ids := cost.Bound{Args: []string{"ids"}, Length: true, Max: MaxIDs}
	t := cost.Table{
		"Query.nodes":              ids,
		"Query.papers":             ids,
		"Query.searchPapers":       search,
		"Query.searchResearchers":  byName,
		"Query.searchInstitutions": byName,
		"Query.suggest":            {Args: []string{"first"}, Default: 10, Max: MaxSuggestions, Weight: searchWeight / 2},
		"Query.collaborationPath":  {Args: []string{"maxDepth"}, Default: network.DefaultPathDepth, Max: network.MaxPathDepth + 1, Plus: 1, Page: true, Weight: pathWeight},
		"CollaborationPath.steps":  inherit,
		"CollaborationStep.papers": fixed(maxStepPapers),

		"PaperConnection.facets": {Weight: facetsWeight},
		"PaperFacets.categories": fixed(model.MaxFacets),
		"PaperFacets.years":      fixed(model.MaxFacets),

		"Paper.authors":         first(DefaultAuthorsPage, MaxAuthorsPage),
		"Paper.categories":      fixed(maxPaperCategories),
		"Paper.institutions":    fixed(maxPaperInstitutions),
		"Paper.references":      page,
		"Paper.citations":       page,
		"Paper.citationNetwork": net,
		"CitationNetwork.nodes": inherit,
		"CitationNetwork.edges": edges,

		"Authorship.affiliations": fixed(maxAffiliations),
		"Authorship.institutions": fixed(maxAffiliations),

		"Category.topResearchers": first(10, MaxTopResearchers),
		"Category.papers":         page,

		"Researcher.authorPositions": fixed(4),
		"Researcher.fields":          first(DefaultFields, MaxFields),
		"Researcher.sameName":        first(DefaultSameName, MaxSameName),
		"Researcher.papers":          page,
		"Researcher.coauthors":       page,
		"Researcher.institutions":    fixed(maxResearcherInstitutions),
		"Researcher.network":         net,
		"ResearcherNetwork.nodes":    inherit,
		"ResearcherNetwork.edges":    edges,

		"Institution.types":         fixed(model.MaxTypes),
		"Institution.names":         fixed(maxInstitutionNames),
		"Institution.aliases":       fixed(maxInstitutionNames),
		"Institution.acronyms":      fixed(maxInstitutionNames),
		"Institution.researchers":   page,
		"Institution.papers":        page,
		"Institution.collaborators": first(10, 100),
		"Institution.network":       net,
		"InstitutionNetwork.nodes":  inherit,
		"InstitutionNetwork.edges":  edges,

		"Viewer.feed":           {Args: []string{"first"}, Default: defaultPage, Max: MaxPage, Page: true},
		"Following.researchers": fixed(db.MaxFollows),
		"Following.categories":  fixed(db.MaxFollows),
	}
	for _, conn := range []string{"PaperConnection", "ResearcherConnection", "InstitutionConnection", "CoauthorConnection", "InstitutionResearcherConnection"} {
		t[conn+".edges"] = inherit
		t[conn+".nodes"] = inherit
	}
	return t
}()
