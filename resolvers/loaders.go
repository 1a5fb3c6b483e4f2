package resolvers

import (
	"context"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/network"
)

// missWait is how long a loader collects keys after a cache miss. The
// prefetcher fills loaders from the query's look-ahead, so the usual
// resolver never misses; a miss comes from a shape the prefetcher does not
// walk, and a short wait still batches its siblings.
const missWait = 200 * time.Microsecond

// loader is a dataloader whose cache the prefetcher can also fill: fetch
// reads many keys in one statement and returns the rows it found.
type loader[K comparable, V any] struct {
	*dataloader.Loader[K, V]
	cache *dataloader.InMemoryCache[K, V]
	fetch func(context.Context, []K) (map[K]V, error)
}

func newLoader[K comparable, V any](fetch func(context.Context, []K) (map[K]V, error)) *loader[K, V] {
	l := &loader[K, V]{cache: dataloader.NewCache[K, V](), fetch: fetch}
	l.Loader = dataloader.NewBatchedLoader(l.batch,
		dataloader.WithCache[K, V](l.cache), dataloader.WithWait[K, V](missWait))
	return l
}

// batch answers keys in their order; a key with no row gets the zero value
// (nil, empty), which resolvers show as null or as an empty list.
func (l *loader[K, V]) batch(ctx context.Context, keys []K) []*dataloader.Result[V] {
	rows, err := l.fetch(ctx, keys)
	out := make([]*dataloader.Result[V], len(keys))
	for i, k := range keys {
		if err != nil {
			out[i] = &dataloader.Result[V]{Error: err}
		} else {
			out[i] = &dataloader.Result[V]{Data: rows[k]}
		}
	}
	return out
}

// load returns the value of one key. A cached key, the common case once
// the prefetcher has run, is answered from the cache directly: the
// dataloader's own Load allocates a channel, a thunk and a trace closure
// even for a hit.
func (l *loader[K, V]) load(ctx context.Context, k K) (V, error) {
	if t, ok := l.cache.Get(ctx, k); ok {
		return t()
	}
	return l.Load(ctx, k)()
}

// prime reads the keys not yet cached, in one statement and without
// waiting, and caches every one of them, those with no row as the zero
// value.
func (l *loader[K, V]) prime(ctx context.Context, keys []K) error {
	var missing []K
	seen := make(map[K]bool, len(keys))
	for _, k := range keys {
		if _, ok := l.cache.Get(ctx, k); !ok && !seen[k] {
			seen[k] = true
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	rows, err := l.fetch(ctx, missing)
	if err != nil {
		return err
	}
	for _, k := range missing {
		l.Prime(ctx, k, rows[k])
	}
	return nil
}

// paperPageKey names a page of a paper list of one parent.
type paperPageKey[P db.PaperParent] struct {
	list   db.PaperList
	parent P
	args   db.PageArgs
}

// paperTotalKey names the length of a paper list of one parent.
type paperTotalKey[P db.PaperParent] struct {
	list     db.PaperList
	parent   P
	category string
}

// pageKey names a page of a list of one parent that has no other argument
// than the page's (co-authors, an institution's researchers).
type pageKey struct {
	parent int64
	args   db.PageArgs
}

// paperLoaders read the pages and totals of paper lists whose parents are
// keyed by P.
type paperLoaders[P db.PaperParent] struct {
	pages          *loader[paperPageKey[P], db.Page[*db.Paper]]
	totals         *loader[paperTotalKey[P], int]
	categoryFacets *loader[paperTotalKey[P], []db.CategoryCount]
	yearFacets     *loader[paperTotalKey[P], []db.YearCount]
}

func newPaperLoaders[P db.PaperParent](idb bun.IDB) paperLoaders[P] {
	return paperLoaders[P]{
		pages: newLoader(grouped(func(k paperPageKey[P]) paperPageKey[P] { return paperPageKey[P]{list: k.list, args: k.args} },
			func(ctx context.Context, g paperPageKey[P], parents []P) (map[P]db.Page[*db.Paper], error) {
				return db.PaperPages(ctx, idb, g.list, parents, g.args)
			}, func(k paperPageKey[P]) P { return k.parent })),
		totals: newLoader(listGrouped(func(ctx context.Context, g paperTotalKey[P], parents []P) (map[P]int, error) {
			return db.PaperTotals(ctx, idb, g.list, parents, g.category)
		})),
		categoryFacets: newLoader(listGrouped(func(ctx context.Context, g paperTotalKey[P], parents []P) (map[P][]db.CategoryCount, error) {
			return db.CategoryFacets[P](ctx, idb, db.ListSet(g.list, parents, g.category))
		})),
		yearFacets: newLoader(listGrouped(func(ctx context.Context, g paperTotalKey[P], parents []P) (map[P][]db.YearCount, error) {
			return db.YearFacets[P](ctx, idb, db.ListSet(g.list, parents, g.category))
		})),
	}
}

// listGrouped makes the fetch of a figure over whole paper lists: one
// statement per list and category, for all their parents.
func listGrouped[P db.PaperParent, V any](fetch func(context.Context, paperTotalKey[P], []P) (map[P]V, error)) func(context.Context, []paperTotalKey[P]) (map[paperTotalKey[P]]V, error) {
	return grouped(func(k paperTotalKey[P]) paperTotalKey[P] { return paperTotalKey[P]{list: k.list, category: k.category} },
		fetch, func(k paperTotalKey[P]) P { return k.parent })
}

// pageLoader reads the pages of a list with only page arguments.
func pageLoader[T any](idb bun.IDB, fetch func(context.Context, bun.IDB, []int64, db.PageArgs) (map[int64]db.Page[T], error)) *loader[pageKey, db.Page[T]] {
	return newLoader(grouped(func(k pageKey) pageKey { return pageKey{args: k.args} },
		func(ctx context.Context, g pageKey, parents []int64) (map[int64]db.Page[T], error) {
			return fetch(ctx, idb, parents, g.args)
		}, func(k pageKey) int64 { return k.parent }))
}

// Loaders are the per-request loaders of every relation. They cache for
// the request's lifetime; never share them between requests.
type Loaders struct {
	papers                      *loader[int64, *db.Paper]
	researchers                 *loader[int64, *db.Researcher]
	institutions                *loader[int64, *db.Institution]
	authorships                 *loader[bylineKey, []db.Authorship]
	categories                  *loader[int64, []db.Category]
	affiliations                *loader[bylineKey, []db.AffiliationRow]
	fields                      *loader[int64, []db.ResearcherFieldRow]
	sameName                    *loader[countKey, []*db.Researcher]
	researcherInstitutions      *loader[int64, []*db.Institution]
	institutionNames            *loader[int64, []db.InstitutionName]
	paperLists                  paperLoaders[int64]
	categoryPaperLists          paperLoaders[string]
	coauthorPages               *loader[pageKey, db.Page[*db.CoauthorRow]]
	coauthorTotals              *loader[int64, int]
	institutionResearcherPages  *loader[pageKey, db.Page[*db.InstitutionResearcherRow]]
	institutionResearcherTotals *loader[int64, int]
	topResearchers              *loader[topKey, []*db.ResearcherCount]
	collaborators               *loader[collaboratorKey, []network.Weighted]

	rootsMu sync.Mutex
	roots   *rootLookups
}

// bylineKey names a window of a paper's byline.
type bylineKey struct {
	paper  int64
	window db.Window
}

// countKey names the first n items of a list of one parent.
type countKey struct {
	parent int64
	n      int
}

// bylineLoader reads windows of bylines: one statement per window for all
// its papers.
func bylineLoader[V any](idb bun.IDB, fetch func(context.Context, bun.IDB, []int64, db.Window) (map[int64]V, error)) *loader[bylineKey, V] {
	return newLoader(grouped(func(k bylineKey) bylineKey { return bylineKey{window: k.window} },
		func(ctx context.Context, g bylineKey, papers []int64) (map[int64]V, error) {
			return fetch(ctx, idb, papers, g.window)
		}, func(k bylineKey) int64 { return k.paper }))
}

// topKey names the top n researchers of a category.
type topKey struct {
	code string
	n    int
}

// NewLoaders returns fresh loaders reading from idb.
func NewLoaders(idb bun.IDB) *Loaders {
	return &Loaders{
		papers:       newLoader(bind(idb, db.PapersByIDs)),
		researchers:  newLoader(bind(idb, db.ResearchersByIDs)),
		institutions: newLoader(bind(idb, db.InstitutionsByIDs)),
		authorships:  bylineLoader(idb, db.AuthorshipsByPaperIDs),
		categories:   newLoader(bind(idb, db.CategoriesByPaperIDs)),
		affiliations: bylineLoader(idb, db.AffiliationsByPaperIDs),
		fields:       newLoader(bind(idb, db.ResearcherCategoriesByResearcherIDs)),
		sameName: newLoader(grouped(func(k countKey) countKey { return countKey{n: k.n} },
			func(ctx context.Context, g countKey, ids []int64) (map[int64][]*db.Researcher, error) {
				return db.SameNameByResearcherIDs(ctx, idb, ids, g.n)
			}, func(k countKey) int64 { return k.parent })),
		researcherInstitutions:      newLoader(bind(idb, db.InstitutionsByResearcherIDs)),
		institutionNames:            newLoader(bind(idb, db.InstitutionNamesByInstitutionIDs)),
		paperLists:                  newPaperLoaders[int64](idb),
		categoryPaperLists:          newPaperLoaders[string](idb),
		coauthorPages:               pageLoader(idb, db.CoauthorPages),
		coauthorTotals:              newLoader(bind(idb, db.CoauthorTotals)),
		institutionResearcherPages:  pageLoader(idb, db.InstitutionResearcherPages),
		institutionResearcherTotals: newLoader(bind(idb, db.InstitutionResearcherTotals)),
		topResearchers: newLoader(grouped(func(k topKey) topKey { return topKey{n: k.n} },
			func(ctx context.Context, g topKey, codes []string) (map[string][]*db.ResearcherCount, error) {
				return db.CategoryTopResearchers(ctx, idb, codes, g.n)
			}, func(k topKey) string { return k.code })),
		collaborators: newLoader(grouped(func(k collaboratorKey) collaboratorKey { return collaboratorKey{n: k.n} },
			func(ctx context.Context, g collaboratorKey, ids []int64) (map[int64][]network.Weighted, error) {
				return network.Collaborators(ctx, idb, ids, g.n)
			}, func(k collaboratorKey) int64 { return k.institution })),
	}
}

// bind makes a loader's fetch of a batch read.
func bind[V any](idb bun.IDB, fn func(context.Context, bun.IDB, []int64) (map[int64]V, error)) func(context.Context, []int64) (map[int64]V, error) {
	return func(ctx context.Context, ids []int64) (map[int64]V, error) { return fn(ctx, idb, ids) }
}

// grouped makes the fetch of keys that carry arguments besides the parent:
// one statement per distinct set of arguments (group), for all its parents.
func grouped[K, P comparable, V any](group func(K) K, fetch func(context.Context, K, []P) (map[P]V, error), parent func(K) P) func(context.Context, []K) (map[K]V, error) {
	return func(ctx context.Context, keys []K) (map[K]V, error) {
		parents := map[K][]P{}
		var order []K
		for _, k := range keys {
			g := group(k)
			if _, ok := parents[g]; !ok {
				order = append(order, g)
			}
			parents[g] = append(parents[g], parent(k))
		}
		out := make(map[K]V, len(keys))
		for _, g := range order {
			rows, err := fetch(ctx, g, parents[g])
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				if group(k) == g {
					if v, ok := rows[parent(k)]; ok {
						out[k] = v
					}
				}
			}
		}
		return out, nil
	}
}

type loadersKey struct{}

// WithLoaders returns a context carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

func loadersFrom(ctx context.Context) *Loaders {
	l, _ := ctx.Value(loadersKey{}).(*Loaders)
	return l
}
