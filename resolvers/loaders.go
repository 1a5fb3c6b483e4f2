package resolvers

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/marshal"
	"github.com/papergraph/papergraph/network"
)

// missWait is how long a loader collects keys after a cache miss. The
// look-ahead (lookahead.go) fills loaders from the query's selection, so
// the usual resolver never misses and never waits; a miss comes from a
// shape the look-ahead does not know, and the misses of the elements of a
// list, which gqlgen marshals concurrently, meet in one batch.
var missWait = 200 * time.Microsecond // a variable for the tests of unknown shapes

// loader is a dataloader whose cache the look-ahead can also fill: fetch
// reads many keys in one statement and returns the rows it found. Its
// verbs are load and loadMany for resolvers (answered from the cache, or
// batched with the siblings that miss too), read for the look-ahead (the
// keys not cached, in one statement, now) and put for a row read
// elsewhere.
type loader[K comparable, V any] struct {
	dl    *dataloader.Loader[K, V]
	cache *dataloader.InMemoryCache[K, V]
	fetch func(context.Context, []K) (map[K]V, error)
}

func newLoader[K comparable, V any](fetch func(context.Context, []K) (map[K]V, error)) *loader[K, V] {
	l := &loader[K, V]{cache: dataloader.NewCache[K, V](), fetch: fetch}
	l.dl = dataloader.NewBatchedLoader(l.batch,
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
// the look-ahead has run, is answered from the cache directly: the
// dataloader's own Load allocates a channel, a thunk and a trace closure
// even for a hit.
func (l *loader[K, V]) load(ctx context.Context, k K) (V, error) {
	if t, ok := l.cache.Get(ctx, k); ok {
		return t()
	}
	return l.dl.Load(ctx, k)()
}

// loadMany returns the values of keys in their order, those not cached
// batched with the siblings that miss too.
func (l *loader[K, V]) loadMany(ctx context.Context, keys []K) ([]V, error) {
	vs, errs := l.dl.LoadMany(ctx, keys)()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return vs, nil
}

// read returns the values of keys in their order, reading those not yet
// cached in one statement and without waiting, and caching every one of
// them, those with no row as the zero value.
func (l *loader[K, V]) read(ctx context.Context, keys []K) ([]V, error) {
	var missing []K
	seen := make(map[K]bool, len(keys))
	for _, k := range keys {
		if _, ok := l.cache.Get(ctx, k); !ok && !seen[k] {
			seen[k] = true
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		rows, err := l.fetch(ctx, missing)
		if err != nil {
			return nil, err
		}
		for _, k := range missing {
			l.put(ctx, k, rows[k])
		}
	}
	out := make([]V, len(keys))
	for i, k := range keys {
		var err error
		if out[i], err = l.load(ctx, k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// put caches v, a row read by another statement, for k.
func (l *loader[K, V]) put(ctx context.Context, k K, v V) {
	l.dl.Prime(ctx, k, v)
}

// paperParent is the parent of a paper list: a row id, or a category
// code for db.CategoryPapers.
type paperParent struct {
	id   int64
	code string
}

// paperPageKey names a page of a paper list of one parent.
type paperPageKey struct {
	list   db.PaperList
	parent paperParent
	args   db.PageArgs
}

// paperTotalKey names a figure of a whole paper list of one parent: its
// length or its facets.
type paperTotalKey struct {
	list     db.PaperList
	parent   paperParent
	category string
}

func (k paperPageKey) total() paperTotalKey {
	return paperTotalKey{list: k.list, parent: k.parent, category: k.args.Category}
}

// paperListKey is the key of something of a paper list of one parent
// (a page or a figure): split takes it apart into its group (the list
// and its arguments, without the parent), its list and its parent.
type paperListKey[K any] interface {
	comparable
	split() (group K, list db.PaperList, parent paperParent)
}

func (k paperPageKey) split() (paperPageKey, db.PaperList, paperParent) {
	return paperPageKey{list: k.list, args: k.args}, k.list, k.parent
}

func (k paperTotalKey) split() (paperTotalKey, db.PaperList, paperParent) {
	return paperTotalKey{list: k.list, category: k.category}, k.list, k.parent
}

// paperListFetch makes the fetch of something of paper lists: one
// statement per group of keys, for all their parents, which byCode reads
// for category lists and byID for the others, as the db package keys
// them.
func paperListFetch[K paperListKey[K], V any](byID func(context.Context, K, []int64) (map[int64]V, error),
	byCode func(context.Context, K, []string) (map[string]V, error)) func(context.Context, []K) (map[K]V, error) {
	return groupByArgs(func(k K) K { g, _, _ := k.split(); return g },
		func(ctx context.Context, g K, parents []paperParent) (map[paperParent]V, error) {
			if _, list, _ := g.split(); list == db.CategoryPapers {
				return readByParentKey(parents, func(p paperParent) string { return p.code }, func(c string) paperParent { return paperParent{code: c} },
					func(codes []string) (map[string]V, error) { return byCode(ctx, g, codes) })
			}
			return readByParentKey(parents, func(p paperParent) int64 { return p.id }, func(id int64) paperParent { return paperParent{id: id} },
				func(ids []int64) (map[int64]V, error) { return byID(ctx, g, ids) })
		}, func(k K) paperParent { _, _, p := k.split(); return p })
}

// readByParentKey reads parents through read, which takes the keys of
// makes of them (an id or a category code), and keys its rows back to the
// parents with back.
func readByParentKey[P comparable, V any](parents []paperParent, of func(paperParent) P, back func(P) paperParent,
	read func([]P) (map[P]V, error)) (map[paperParent]V, error) {
	keys := make([]P, len(parents))
	for i, p := range parents {
		keys[i] = of(p)
	}
	rows, err := read(keys)
	out := make(map[paperParent]V, len(rows))
	for k, v := range rows {
		out[back(k)] = v
	}
	return out, err
}

// pageKey names a page of a list of one parent that has no other argument
// than the page's (co-authors, an institution's researchers).
type pageKey struct {
	parent int64
	args   db.PageArgs
}

// pageLoader reads the pages of a list with only page arguments.
func pageLoader[T any](idb bun.IDB, fetch func(context.Context, bun.IDB, []int64, db.PageArgs) (map[int64]db.Page[T], error)) *loader[pageKey, db.Page[T]] {
	return newLoader(groupByArgs(func(k pageKey) pageKey { return pageKey{args: k.args} },
		func(ctx context.Context, g pageKey, parents []int64) (map[int64]db.Page[T], error) {
			return fetch(ctx, idb, parents, g.args)
		}, func(k pageKey) int64 { return k.parent }))
}

// Loaders are the per-request loaders of every relation. They cache for
// the request's lifetime; never share them between requests.
type Loaders struct {
	db                          bun.IDB
	plan                        plan
	papers                      *loader[int64, *db.Paper]
	researchers                 *loader[int64, *db.Researcher]
	institutions                *loader[int64, *db.Institution]
	authorships                 *loader[bylineKey, []db.Authorship]
	bylines                     *loader[bylineKey, []db.Authorship]
	affiliations                *loader[bylineKey, []db.AffiliationRow]
	sameName                    *loader[countKey[int64], []*db.Researcher]
	paperPages                  *loader[paperPageKey, db.Page[*db.Paper]]
	paperTotals                 *loader[paperTotalKey, int]
	categoryFacets              *loader[paperTotalKey, []db.CategoryCount]
	yearFacets                  *loader[paperTotalKey, []db.YearCount]
	coauthorPages               *loader[pageKey, db.Page[*db.CoauthorRow]]
	coauthorTotals              *loader[int64, int]
	institutionResearcherPages  *loader[pageKey, db.Page[*db.InstitutionResearcherRow]]
	institutionResearcherTotals *loader[int64, int]
	topResearchers              *loader[countKey[string], []*db.ResearcherCount]
	collaborators               *loader[countKey[int64], []network.Weighted]
	following                   *loader[int64, *db.Following]
	related                     *loader[countKey[int64], []*db.Paper]
	similar                     *loader[countKey[int64], []*db.Researcher]

	// reads are the loaders of the batch reads of lists by parent id,
	// keyed by the read (see readLoader).
	readsMu sync.Mutex
	reads   map[uintptr]any

	rootsMu sync.Mutex
	roots   *rootLookups
}

// bylineKey names a window of a paper's byline.
type bylineKey struct {
	paper  int64
	window db.Window
}

// countKey names the first n items of a list of one parent.
type countKey[P comparable] struct {
	parent P
	n      int
}

// countLoader reads the first n items of lists of one kind: one statement
// per n, for all its parents.
func countLoader[P comparable, V any](idb bun.IDB, fetch func(context.Context, bun.IDB, []P, int) (map[P]V, error)) *loader[countKey[P], V] {
	return newLoader(groupByArgs(func(k countKey[P]) countKey[P] { return countKey[P]{n: k.n} },
		func(ctx context.Context, g countKey[P], parents []P) (map[P]V, error) {
			return fetch(ctx, idb, parents, g.n)
		}, func(k countKey[P]) P { return k.parent }))
}

// bylineLoader reads windows of bylines: one statement per window for all
// its papers.
func bylineLoader[V any](idb bun.IDB, fetch func(context.Context, bun.IDB, []int64, db.Window) (map[int64]V, error)) *loader[bylineKey, V] {
	return newLoader(groupByArgs(func(k bylineKey) bylineKey { return bylineKey{window: k.window} },
		func(ctx context.Context, g bylineKey, papers []int64) (map[int64]V, error) {
			return fetch(ctx, idb, papers, g.window)
		}, func(k bylineKey) int64 { return k.paper }))
}

// NewLoaders returns fresh loaders reading from idb.
func NewLoaders(idb bun.IDB) *Loaders {
	l := &Loaders{
		db:                          idb,
		papers:                      newLoader(withDB(idb, db.PapersByIDs)),
		researchers:                 newLoader(withDB(idb, db.ResearchersByIDs)),
		institutions:                newLoader(withDB(idb, db.InstitutionsByIDs)),
		authorships:                 bylineLoader(idb, db.AuthorshipsByPaperIDs),
		affiliations:                bylineLoader(idb, db.AffiliationsByPaperIDs),
		sameName:                    countLoader(idb, db.SameNameByResearcherIDs),
		following:                   newLoader(withDB(idb, db.FollowingByKeys)),
		coauthorTotals:              newLoader(withDB(idb, db.CoauthorTotals)),
		institutionResearcherPages:  pageLoader(idb, db.InstitutionResearcherPages),
		institutionResearcherTotals: newLoader(withDB(idb, db.InstitutionResearcherTotals)),
		topResearchers:              countLoader(idb, db.CategoryTopResearchers),
		collaborators:               countLoader(idb, network.Collaborators),
		reads:                       map[uintptr]any{},
	}
	l.bylines = bylineLoader(idb, l.readBylines)
	l.related = countLoader(idb, l.readRelated)
	l.similar = countLoader(idb, l.readSimilar)
	l.paperTotals = newLoader(paperListFetch(
		func(ctx context.Context, g paperTotalKey, ids []int64) (map[int64]int, error) {
			return db.PaperTotals(ctx, idb, g.list, ids, g.category)
		},
		func(ctx context.Context, g paperTotalKey, codes []string) (map[string]int, error) {
			return db.PaperTotals(ctx, idb, g.list, codes, g.category)
		}))
	l.paperPages = newLoader(cachingTotals(paperListFetch(
		func(ctx context.Context, g paperPageKey, ids []int64) (map[int64]db.Page[*db.Paper], error) {
			return db.PaperPages(ctx, idb, g.list, ids, g.args)
		},
		func(ctx context.Context, g paperPageKey, codes []string) (map[string]db.Page[*db.Paper], error) {
			return db.PaperPages(ctx, idb, g.list, codes, g.args)
		}), func(ctx context.Context, k paperPageKey, n int) { l.paperTotals.put(ctx, k.total(), n) },
		func(k paperPageKey) db.PageArgs { return k.args }))
	l.coauthorPages = newLoader(cachingTotals(pageLoader(idb, db.CoauthorPages).fetch,
		func(ctx context.Context, k pageKey, n int) { l.coauthorTotals.put(ctx, k.parent, n) },
		func(k pageKey) db.PageArgs { return k.args }))
	l.categoryFacets = facetsLoader(idb, db.CategoryFacets[int64], db.CategoryFacets[string])
	l.yearFacets = facetsLoader(idb, db.YearFacets[int64], db.YearFacets[string])
	return l
}

// facetsLoader reads facets of paper lists through byID and byCode, the
// facets function of the db package for each kind of parent.
func facetsLoader[V any](idb bun.IDB, byID func(context.Context, bun.IDB, db.PaperSet) (map[int64]V, error),
	byCode func(context.Context, bun.IDB, db.PaperSet) (map[string]V, error)) *loader[paperTotalKey, V] {
	return newLoader(paperListFetch(
		func(ctx context.Context, g paperTotalKey, ids []int64) (map[int64]V, error) {
			return byID(ctx, idb, db.ListSet(idb, g.list, ids, g.category))
		},
		func(ctx context.Context, g paperTotalKey, codes []string) (map[string]V, error) {
			return byCode(ctx, idb, db.ListSet(idb, g.list, codes, g.category))
		}))
}

// readBylines reads bylines, authorships with their researchers, for a
// level that asks for both: one statement fills the caches of both.
func (l *Loaders) readBylines(ctx context.Context, idb bun.IDB, papers []int64, w db.Window) (map[int64][]db.Authorship, error) {
	rows, rs, err := db.AuthorshipsWithResearchers(ctx, idb, papers, w)
	for id, r := range rs {
		l.researchers.put(ctx, id, r)
	}
	for _, p := range papers {
		l.authorships.put(ctx, bylineKey{paper: p, window: w}, rows[p])
	}
	return rows, err
}

// cachingTotals wraps the fetch of pages so that each page read without a
// cursor (db.Page.Counted) also caches its list's length through total,
// and a connection's totalCount then costs no statement of its own (the
// look-ahead reads pages before totals, see walker.walk); a parent absent
// from the rows has an empty list.
func cachingTotals[K comparable, T any](fetch func(context.Context, []K) (map[K]db.Page[T], error),
	total func(context.Context, K, int), args func(K) db.PageArgs) func(context.Context, []K) (map[K]db.Page[T], error) {
	return func(ctx context.Context, keys []K) (map[K]db.Page[T], error) {
		rows, err := fetch(ctx, keys)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if args(k).Counted() {
				total(ctx, k, rows[k].Total)
			}
		}
		return rows, nil
	}
}

// readLoader returns l's loader of read, a batch read of lists by parent
// id, made on first use. These loaders are keyed by the read itself, so a
// field declared @batched needs no loader of its own, and the fields of
// one read share its statements.
func readLoader[V any](l *Loaders, read func(context.Context, bun.IDB, []int64) (map[int64]V, error)) *loader[int64, V] {
	key := reflect.ValueOf(read).Pointer()
	l.readsMu.Lock()
	defer l.readsMu.Unlock()
	if ld, ok := l.reads[key]; ok {
		return ld.(*loader[int64, V])
	}
	ld := newLoader(withDB(l.db, read))
	l.reads[key] = ld
	return ld
}

// withDB makes a loader's fetch of a batch read from idb.
func withDB[V any](idb bun.IDB, fn func(context.Context, bun.IDB, []int64) (map[int64]V, error)) func(context.Context, []int64) (map[int64]V, error) {
	return func(ctx context.Context, ids []int64) (map[int64]V, error) { return fn(ctx, idb, ids) }
}

// groupByArgs makes the fetch of keys that carry arguments besides the
// parent: one statement per distinct set of arguments (group), for all its
// parents.
func groupByArgs[K, P comparable, V any](group func(K) K, fetch func(context.Context, K, []P) (map[P]V, error), parent func(K) P) func(context.Context, []K) (map[K]V, error) {
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

// WithLoaders returns a context carrying l, which also tells graph/marshal
// which lists it may marshal in line (Loaders.InLine).
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return marshal.WithPlanner(context.WithValue(ctx, loadersKey{}, l), l)
}

func loadersFrom(ctx context.Context) *Loaders {
	l, _ := ctx.Value(loadersKey{}).(*Loaders)
	return l
}
