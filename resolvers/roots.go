package resolvers

import (
	"context"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
)

// rootLookups batches the root fields that look objects up by reference
// (paper, papers, researcher, institution, node, nodes, category) across
// one operation. gqlgen resolves root fields concurrently, one goroutine each,
// so no loader sees them together without waiting on a timer. Instead the
// first of them to run reads the operation's root selection, parses the
// references of all of them (every alias), reads them with one statement
// per kind of reference and walks the selections below them together with
// the look-ahead; the others wait for it on a sync.Once and find their
// objects read and everything below them primed. One alias or a hundred
// (the most a document may hold) cost the same statements when they ask
// the same selection; a single root costs what it did before, and waits on
// nothing. Roots that ask different selections are walked apart (see
// rootLevels).
type rootLookups struct {
	op   *graphql.OperationContext
	once sync.Once
	err  error

	mu           sync.Mutex
	papers       map[paperRef]*db.Paper             // by arXiv id or DOI
	researchers  map[researcherRef]*db.Researcher   // by external id
	institutions map[institutionRef]*db.Institution // by ROR id or name
	categories   map[string]*db.Category            // by code
	// walked are the root fields whose selections the look-ahead walked.
	walked map[*ast.Field]bool
}

// lookups returns the root lookups of ctx's operation, reading them when
// the first root field asks.
func (r *Resolver) lookups(ctx context.Context) (*rootLookups, *Loaders, error) {
	l := loaders(ctx)
	var op *graphql.OperationContext
	if graphql.HasOperationContext(ctx) {
		op = graphql.GetOperationContext(ctx)
	}
	l.rootsMu.Lock()
	if l.roots == nil || l.roots.op != op {
		l.roots = &rootLookups{op: op, papers: map[paperRef]*db.Paper{}, researchers: map[researcherRef]*db.Researcher{},
			institutions: map[institutionRef]*db.Institution{}, categories: map[string]*db.Category{}, walked: map[*ast.Field]bool{}}
	}
	rl := l.roots
	l.rootsMu.Unlock()
	if op != nil && op.Operation != nil {
		rl.once.Do(func() { rl.err = rl.readAll(ctx, r.db, l) })
	}
	return rl, l, rl.err
}

// readAll reads the references of every root lookup of the operation and
// walks below them. A root whose arguments do not parse is left to its
// resolver, which reports them.
func (rl *rootLookups) readAll(ctx context.Context, idb bun.IDB, l *Loaders) error {
	var prefs []paperRef
	var rrefs []researcherRef
	var irefs []institutionRef
	var codes []string
	var roots []rootSpan
	var starts []*ast.Field
	for _, f := range graphql.CollectFields(rl.op, rl.op.Operation.SelectionSet, []string{"Query"}) {
		args := f.ArgumentMap(rl.op.Variables)
		span := rootSpan{sel: f.Selections, p: [2]int{len(prefs), len(prefs)}, r: [2]int{len(rrefs), len(rrefs)},
			i: [2]int{len(irefs), len(irefs)}, c: [2]int{len(codes), len(codes)}}
		switch f.Name {
		case "paper", "papers":
			refs, err := parsePaperRefs(idArgs(args))
			if err != nil {
				continue
			}
			prefs = append(prefs, refs...)
		case "researcher":
			s, _ := args["id"].(string)
			ref, err := parseResearcherRef("id", s)
			if err != nil {
				continue
			}
			rrefs = append(rrefs, ref)
		case "institution":
			s, _ := args["id"].(string)
			ref, err := parseInstitutionRef("id", s)
			if err != nil {
				continue
			}
			irefs = append(irefs, ref)
		case "category":
			s, _ := args["code"].(string)
			if checkText("code", s, codeText) != nil {
				continue
			}
			codes = append(codes, s)
		case "node", "nodes":
			keys, err := parseNodeIDs(idArgs(args))
			if err != nil {
				continue
			}
			p, r, i := nodeRefs(keys)
			prefs, rrefs, irefs = append(prefs, p...), append(rrefs, r...), append(irefs, i...)
		default:
			continue
		}
		span.p[1], span.r[1], span.i[1], span.c[1] = len(prefs), len(rrefs), len(irefs), len(codes)
		roots = append(roots, span)
		rl.walked[f.Field] = true
		starts = append(starts, f.Field)
	}
	ps, err := rl.findPapers(ctx, idb, l, prefs)
	if err != nil {
		return err
	}
	rs, err := rl.findResearchers(ctx, idb, l, rrefs)
	if err != nil {
		return err
	}
	is, err := rl.findInstitutions(ctx, idb, l, irefs)
	if err != nil {
		return err
	}
	cs, err := rl.findCategories(ctx, idb, codes)
	if err != nil {
		return err
	}
	// A walk that fails primes nothing: the fields below read through
	// their loaders and report their own errors, so one root's failure
	// does not fail the others.
	_ = rl.walkBelow(ctx, l, rootLevels(roots, ps, rs, is, cs), starts)
	return nil
}

// rootSpan is one root lookup: its selection, and the ranges of the
// references it added of each kind.
type rootSpan struct {
	sel        ast.SelectionSet
	p, r, i, c [2]int
}

// rootLevels groups the objects the roots found by kind and by
// selection: roots that ask the same selection (aliases of one lookup,
// the usual case) are walked together, so that their count does not
// multiply the statements, and each other selection is walked below only
// the objects of the roots that ask it, so that one root's deep selection
// is not read below every other root's objects.
func rootLevels(roots []rootSpan, ps []*db.Paper, rs []*db.Researcher, is []*db.Institution, cs []*db.Category) []rootLevel {
	var levels []rootLevel
	at := map[[2]string]int{}
	add := func(typ string, sel ast.SelectionSet, objs []any) {
		if len(objs) == 0 {
			return
		}
		k := [2]string{typ, selectionKey(sel)}
		if i, ok := at[k]; ok {
			levels[i].objs = append(levels[i].objs, objs...)
			return
		}
		at[k] = len(levels)
		levels = append(levels, rootLevel{typ: typ, objs: objs, sel: sel})
	}
	for _, s := range roots {
		add("Paper", s.sel, anys(distinct(ps[s.p[0]:s.p[1]], func(x *db.Paper) int64 { return x.ID })))
		add("Researcher", s.sel, anys(distinct(rs[s.r[0]:s.r[1]], func(x *db.Researcher) int64 { return x.ID })))
		add("Institution", s.sel, anys(distinct(is[s.i[0]:s.i[1]], func(x *db.Institution) int64 { return x.ID })))
		add("Category", s.sel, anys(nonNil(cs[s.c[0]:s.c[1]])))
	}
	return levels
}

// selectionKey spells a selection set as written (aliases, names,
// arguments, fragments by name), so that equal selections have equal keys.
func selectionKey(sel ast.SelectionSet) string {
	var b strings.Builder
	var spell func(ast.SelectionSet)
	spell = func(sel ast.SelectionSet) {
		b.WriteByte('{')
		for _, s := range sel {
			switch s := s.(type) {
			case *ast.Field:
				b.WriteString(s.Alias + ":" + s.Name + "(")
				for _, a := range s.Arguments {
					b.WriteString(a.Name + ":" + a.Value.String() + ",")
				}
				b.WriteByte(')')
				spell(s.SelectionSet)
			case *ast.InlineFragment:
				b.WriteString("...on " + s.TypeCondition)
				spell(s.SelectionSet)
			case *ast.FragmentSpread:
				b.WriteString("..." + s.Name + " ")
			}
		}
		b.WriteByte('}')
	}
	spell(sel)
	return b.String()
}

// rootLevel is what the roots of one kind and one selection found.
type rootLevel struct {
	typ  string
	objs []any
	sel  ast.SelectionSet
}

// walkBelow walks the look-ahead below the objects the roots found, the
// values of the root fields starts, and records in the plan what it
// reached once all of it succeeded and left no field unread.
func (rl *rootLookups) walkBelow(ctx context.Context, l *Loaders, levels []rootLevel, starts []*ast.Field) error {
	if !lookAheadOn {
		return nil
	}
	w := &walker{l: l, op: rl.op}
	for _, level := range levels {
		if err := w.walk(ctx, level.typ, level.objs, level.sel); err != nil {
			return err
		}
	}
	if !w.unknown {
		l.plan.record(starts, w.reached)
	}
	return nil
}

// idArgs is the list of ids of a lookup by "id" or by "ids", with the
// argument's name.
func idArgs(args map[string]any) (string, []string) {
	if s, ok := args["id"].(string); ok {
		return "id", []string{s}
	}
	vs, _ := args["ids"].([]any)
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i], _ = v.(string)
	}
	return "ids", ids
}

// walkedBelow reports whether the look-ahead walked the selection of the
// current root field.
func (rl *rootLookups) walkedBelow(ctx context.Context) bool {
	fc := graphql.GetFieldContext(ctx)
	return fc != nil && rl.walked[fc.Field.Field]
}

// findByRef is what the find methods share: of refs, those with an id
// are read through l (the ones not cached, in one statement), the others
// are looked up in seen, where those not seen yet are first read with
// lookup and remembered, and their objects put in l. It returns the
// objects in the order of refs, nil for none.
func findByRef[R comparable, V any](ctx context.Context, mu *sync.Mutex, seen map[R]*V, l *loader[int64, *V], refs []R,
	idOf func(R) int64, objID func(*V) int64, lookup func(missing []R) (map[R]*V, error)) ([]*V, error) {
	mu.Lock()
	defer mu.Unlock()
	var ids []int64
	var missing []R
	for _, ref := range refs {
		if id := idOf(ref); id != 0 {
			ids = append(ids, id)
		} else if _, ok := seen[ref]; !ok {
			seen[ref] = nil
			missing = append(missing, ref)
		}
	}
	if len(missing) > 0 {
		found, err := lookup(missing)
		if err != nil {
			return nil, forget(seen, missing, err)
		}
		for _, ref := range missing {
			x := found[ref]
			seen[ref] = x
			if x != nil {
				l.put(ctx, objID(x), x)
			}
		}
	}
	byID, err := l.read(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*V, len(refs))
	for i, ref := range refs {
		if idOf(ref) != 0 {
			out[i], byID = byID[0], byID[1:]
		} else {
			out[i] = seen[ref]
		}
	}
	return out, nil
}

// findPapers returns the papers refs name, in order, nil for none. It
// reads those not read yet: one statement for arXiv ids and DOIs, one for
// ids.
func (rl *rootLookups) findPapers(ctx context.Context, idb bun.IDB, l *Loaders, refs []paperRef) ([]*db.Paper, error) {
	return findByRef(ctx, &rl.mu, rl.papers, l.papers, refs, func(r paperRef) int64 { return r.id }, func(p *db.Paper) int64 { return p.ID },
		func(missing []paperRef) (map[paperRef]*db.Paper, error) {
			var arxivIDs, dois []string
			for _, ref := range missing {
				if ref.arxivID != "" {
					arxivIDs = append(arxivIDs, ref.arxivID)
				} else {
					dois = append(dois, ref.doi)
				}
			}
			byArxiv, byDOI, err := db.PapersByRefs(ctx, idb, arxivIDs, dois)
			found := make(map[paperRef]*db.Paper, len(missing))
			for _, ref := range missing {
				if ref.arxivID != "" {
					found[ref] = byArxiv[ref.arxivID]
				} else {
					found[ref] = byDOI[ref.doi]
				}
			}
			return found, err
		})
}

// researcherColumns are the external id columns, in the order their
// statements run.
var researcherColumns = []db.ResearcherIDColumn{db.ByORCID, db.ByOpenAlex, db.ByS2}

// findResearchers returns the researchers refs name, in order, nil for
// none. It reads those not read yet: one statement for ids, one per kind
// of external id.
func (rl *rootLookups) findResearchers(ctx context.Context, idb bun.IDB, l *Loaders, refs []researcherRef) ([]*db.Researcher, error) {
	return findByRef(ctx, &rl.mu, rl.researchers, l.researchers, refs, func(r researcherRef) int64 { return r.id },
		func(x *db.Researcher) int64 { return x.ID },
		func(missing []researcherRef) (map[researcherRef]*db.Researcher, error) {
			values := map[db.ResearcherIDColumn][]string{}
			for _, ref := range missing {
				values[ref.column] = append(values[ref.column], ref.value)
			}
			found := make(map[researcherRef]*db.Researcher, len(missing))
			for _, col := range researcherColumns {
				if len(values[col]) == 0 {
					continue
				}
				byValue, err := db.ResearchersByExternalIDs(ctx, idb, col, values[col])
				if err != nil {
					return nil, err
				}
				for _, v := range values[col] {
					found[researcherRef{column: col, value: v}] = byValue[v]
				}
			}
			return found, nil
		})
}

// findInstitutions returns the institutions refs name, in order, nil for
// none. It reads those not read yet: one statement for ids, one for ROR
// ids and names.
func (rl *rootLookups) findInstitutions(ctx context.Context, idb bun.IDB, l *Loaders, refs []institutionRef) ([]*db.Institution, error) {
	return findByRef(ctx, &rl.mu, rl.institutions, l.institutions, refs, func(r institutionRef) int64 { return r.id },
		func(x *db.Institution) int64 { return x.ID },
		func(missing []institutionRef) (map[institutionRef]*db.Institution, error) {
			byName := make([]db.InstitutionRef, len(missing))
			for i, ref := range missing {
				byName[i] = ref.InstitutionRef
			}
			byRef, err := db.InstitutionsByRefs(ctx, idb, byName)
			found := make(map[institutionRef]*db.Institution, len(missing))
			for _, ref := range missing {
				found[ref] = byRef[ref.InstitutionRef]
			}
			return found, err
		})
}

// findCategories returns the categories codes name, in order, nil for
// none, reading those not read yet with one statement.
func (rl *rootLookups) findCategories(ctx context.Context, idb bun.IDB, codes []string) ([]*db.Category, error) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	var missing []string
	for _, c := range codes {
		if _, ok := rl.categories[c]; !ok {
			rl.categories[c] = nil
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		found, err := db.CategoriesByCodes(ctx, idb, missing)
		if err != nil {
			return nil, forget(rl.categories, missing, err)
		}
		for _, c := range missing {
			rl.categories[c] = found[c]
		}
	}
	out := make([]*db.Category, len(codes))
	for i, c := range codes {
		out[i] = rl.categories[c]
	}
	return out, nil
}

// forget drops the entries of keys that failed to read, so that a later
// lookup does not take them for unknown, and returns err.
func forget[K comparable, V any](m map[K]V, keys []K, err error) error {
	for _, k := range keys {
		delete(m, k)
	}
	return err
}

// nodeKey is a global id taken apart.
type nodeKey struct {
	kind string
	id   int64
}

// parseNodeIDs reads the global ids of the argument arg, at most MaxIDs.
func parseNodeIDs(arg string, ids []string) ([]nodeKey, error) {
	if len(ids) > MaxIDs {
		return nil, badInput(arg, "at most %d ids, got %d", MaxIDs, len(ids))
	}
	keys := make([]nodeKey, len(ids))
	for i, s := range ids {
		if err := checkText(arg, s, idText); err != nil {
			return nil, err
		}
		kind, id, ok := model.ParseGlobalID(s)
		if !ok {
			return nil, badInput(arg, "not a global id: %s", QuoteInput(s))
		}
		keys[i] = nodeKey{kind: kind, id: id}
	}
	return keys, nil
}

// nodeRefs are the references of keys, by kind.
func nodeRefs(keys []nodeKey) (ps []paperRef, rs []researcherRef, is []institutionRef) {
	for _, k := range keys {
		switch k.kind {
		case model.KindPaper:
			ps = append(ps, paperRef{id: k.id})
		case model.KindResearcher:
			rs = append(rs, researcherRef{id: k.id})
		case model.KindInstitution:
			is = append(is, institutionRef{id: k.id})
		}
	}
	return ps, rs, is
}

// distinct is xs without nils and repeats, in order.
func distinct[T any](xs []*T, id func(*T) int64) []*T {
	out := make([]*T, 0, len(xs))
	seen := make(map[int64]bool, len(xs))
	for _, x := range xs {
		if x != nil && !seen[id(x)] {
			seen[id(x)] = true
			out = append(out, x)
		}
	}
	return out
}
