package resolvers

import (
	"context"
	"reflect"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// batchedField is a list field that schema.graphqls declares
//
//	field: [T!]! @batched(read: "TsByParentIDs")
//
// Its rows, a list a parent, are read by the db read for the ids of many
// parents (papers, researchers or institutions) in one statement. go
// generate writes a batchedField for each such field, and its look-ahead
// step, into batched.generated.go; the field's resolver is one call of
// batchedList.
type batchedField[E any] struct {
	read func(context.Context, bun.IDB, []int64) (map[int64][]E, error)
	// byValue: the read's rows are values, and the objects of the level
	// below are pointers to them.
	byValue bool
	// most is the field's size in the schema, the most rows its
	// resolver returns.
	most int
}

func newBatchedField[E any](read func(context.Context, bun.IDB, []int64) (map[int64][]E, error), most int) *batchedField[E] {
	return &batchedField[E]{read: read, byValue: reflect.TypeFor[E]().Kind() != reflect.Pointer, most: most}
}

// loader is the request's loader of the field's read; fields with one
// read share it, and so its statements.
func (f *batchedField[E]) loader(l *Loaders) *loader[int64, []E] {
	return readLoader(l, f.read)
}

// load returns the rows of parent id.
func (f *batchedField[E]) load(ctx context.Context, id int64) ([]E, error) {
	return f.loader(loaders(ctx)).load(ctx, id)
}

// step reads the field for all the parents of a level; the objects of
// the level below, of GraphQL type next ("" for a list of scalars), are
// their rows.
func (f *batchedField[E]) step(next string) step {
	return step{next: next, read: func(ctx context.Context, l *Loaders, parents []any, _ map[string]any) ([]any, error) {
		ids := make([]int64, 0, len(parents))
		seen := make(map[int64]bool, len(parents))
		for _, p := range parents {
			if id, ok := parentID(p); ok && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return nil, nil
		}
		lists, err := f.loader(l).read(ctx, ids)
		if err != nil || next == "" {
			return nil, err
		}
		var out []any
		for _, rows := range lists {
			for i := range rows {
				if f.byValue {
					out = append(out, &rows[i])
				} else {
					out = append(out, rows[i])
				}
			}
		}
		return out, nil
	}}
}

// parentID is the id of an object of a level that a batched field's read
// takes.
func parentID(p any) (int64, bool) {
	switch p := p.(type) {
	case *db.Paper:
		return p.ID, true
	case *db.Researcher:
		return p.ID, true
	case *db.Institution:
		return p.ID, true
	}
	return 0, false
}

// batchedList is the resolver of a batched field: the rows of parent id,
// at most the field's size, each made the field's GraphQL object by wrap.
func batchedList[E, W any](ctx context.Context, f *batchedField[E], id int64, wrap func(E) W) ([]W, error) {
	rows, err := f.load(ctx, id)
	rows = firstN(rows, f.most)
	out := make([]W, len(rows))
	for i, r := range rows {
		out[i] = wrap(r)
	}
	return out, err
}

// addressOf is the wrap of a field whose GraphQL object is its db row.
func addressOf[T any](x T) *T { return &x }
