package db

import (
	"context"
	"fmt"
	"sort"

	"github.com/uptrace/bun"
)

// ListSize is how long the lists of one kind are in the archive.
type ListSize struct {
	bun.BaseModel `bun:"table:list_sizes"`
	// Name is the kind of list, as schema.graphqls's @listBound(typical:)
	// names it.
	Name string `bun:"name,pk"`
	// P99 is the length 99 % of the lists measured stay within, Longest
	// the longest of them, and Lists how many were measured.
	P99     int64 `bun:"p99,notnull"`
	Longest int64 `bun:"longest,notnull"`
	Lists   int64 `bun:"lists,notnull"`
}

// listKinds are the kinds of list MeasureListSizes measures: for each, the
// table whose rows each hold one list, and the length of the list of a row
// k.
var listKinds = []struct{ name, table, length string }{
	{"authorsPerPaper", "papers", "k.author_count"},
	{"categoriesPerPaper", "papers", "(SELECT COUNT(*) FROM paper_categories x WHERE x.paper_id = k.id)"},
	{"referencesPerPaper", "papers", "(SELECT COUNT(*) FROM paper_references x WHERE x.citing_id = k.id AND x.cited_id IS NOT NULL)"},
	{"citationsPerPaper", "papers", "k.archive_citation_count"},
	{"papersPerResearcher", "researchers", "k.paper_count"},
	{"fieldsPerResearcher", "researchers", "(SELECT COUNT(*) FROM researcher_categories x WHERE x.researcher_id = k.id)"},
	{"coauthorsPerResearcher", "researchers", "(SELECT COUNT(*) FROM coauthors x WHERE x.researcher_id = k.id)"},
	{"sameNamePerResearcher", "researchers", "(SELECT COUNT(*) FROM same_name x WHERE x.researcher_id = k.id)"},
}

// ListKinds returns the names of the kinds of list MeasureListSizes
// measures.
func ListKinds() []string {
	names := make([]string, len(listKinds))
	for i, k := range listKinds {
		names[i] = k.name
	}
	return names
}

// listSample is about how many lists of a kind MeasureListSizes measures:
// a sample spread over the ids, so that the cost of a measure does not
// grow with the archive (each list of a sample is read by index).
const listSample = 20_000

// MeasureListSizes measures the lists of every kind in ListKinds, over a
// sample of at most about listSample rows of each table spread evenly
// over its ids; a kind with no rows is left out.
func MeasureListSizes(ctx context.Context, idb bun.IDB) ([]ListSize, error) {
	var out []ListSize
	for _, k := range listKinds {
		var top int64
		if err := idb.NewRaw("SELECT COALESCE(MAX(id), 0) FROM "+k.table).Scan(ctx, &top); err != nil {
			return nil, fmt.Errorf("list sizes: %s: %w", k.name, err)
		}
		var lengths []struct{ N, Lists int64 }
		err := idb.NewRaw("SELECT n, COUNT(*) AS lists FROM (SELECT "+k.length+" AS n FROM "+k.table+" k WHERE k.id % ? = 0) s GROUP BY n",
			max(1, top/listSample)).Scan(ctx, &lengths)
		if err != nil {
			return nil, fmt.Errorf("list sizes: %s: %w", k.name, err)
		}
		if s, ok := percentile(lengths, 99); ok {
			s.Name = k.name
			out = append(out, s)
		}
	}
	return out, nil
}

// percentile is the p-th percentile of lengths, given as how many lists
// have each length: the least length that p % of the lists stay within,
// and at least 1, so that no estimate takes a kind of list to be empty.
func percentile(lengths []struct{ N, Lists int64 }, p int64) (ListSize, bool) {
	sort.Slice(lengths, func(i, j int) bool { return lengths[i].N < lengths[j].N })
	var s ListSize
	for _, l := range lengths {
		s.Lists += l.Lists
	}
	if s.Lists == 0 {
		return s, false
	}
	var seen int64
	for _, l := range lengths {
		if seen*100 < s.Lists*p {
			s.P99 = max(l.N, 1)
		}
		seen += l.Lists
		s.Longest = l.N
	}
	return s, true
}

// SetListSizes replaces the archive's list sizes with sizes.
func SetListSizes(ctx context.Context, idb bun.IDB, sizes []ListSize) error {
	if _, err := idb.NewDelete().Model((*ListSize)(nil)).Where("TRUE").Exec(ctx); err != nil {
		return err
	}
	if len(sizes) == 0 {
		return nil
	}
	_, err := idb.NewInsert().Model(&sizes).Exec(ctx)
	return err
}

// ReadListSizes returns the 99th percentile of each kind of list, by
// name.
func ReadListSizes(ctx context.Context, idb bun.IDB) (map[string]int64, error) {
	var sizes []ListSize
	if err := idb.NewSelect().Model(&sizes).Scan(ctx); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(sizes))
	for _, s := range sizes {
		out[s.Name] = s.P99
	}
	return out, nil
}
