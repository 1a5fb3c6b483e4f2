package resolvers

// The most items of the lists that take no page arguments. Their
// resolvers cut the lists to these; schema.graphqls states the same sizes
// with @listSize and @listBound, for the cost calculator and for clients
// (TestSchemaSizesAreTheResolvers holds the two together). A @batched
// field's size is generated from the schema (batched.generated.go).
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

	maxAffiliations = 20
	maxStepPapers   = 20
)
