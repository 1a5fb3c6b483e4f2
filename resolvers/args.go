package resolvers

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
)

// MaxPage is the most items one page of a connection holds.
const MaxPage = 100

// defaultPage is the page size when neither first nor last is given.
const defaultPage = 20

// MaxIDs is the most ids `nodes` and `papers` take at once.
const MaxIDs = 1000

// pageArgs checks a connection's arguments. The look-ahead and the
// resolvers both call it, so that they name a page by the same key.
func pageArgs(list listKind, first, last *int, after, before, category *string, order db.PaperOrder) (db.PageArgs, error) {
	a := db.PageArgs{Order: order}
	switch {
	case first != nil && last != nil:
		return a, badInput("last", "cannot be combined with first")
	case first != nil:
		if *first < 0 || *first > MaxPage {
			return a, badInput("first", "must be between 0 and %d, got %d", MaxPage, *first)
		}
		a.First = *first
	case last != nil:
		if *last < 0 || *last > MaxPage {
			return a, badInput("last", "must be between 0 and %d, got %d", MaxPage, *last)
		}
		a.Last = *last
	default:
		a.First = defaultPage
	}
	var err error
	if after != nil {
		if a.After, err = decodeCursor("after", *after, list.tag(a.Order)); err != nil {
			return a, err
		}
	}
	if before != nil {
		if a.Before, err = decodeCursor("before", *before, list.tag(a.Order)); err != nil {
			return a, err
		}
	}
	if category != nil {
		if err := checkText("category", *category, codeText); err != nil {
			return a, err
		}
		a.Category = *category
	}
	return a, nil
}

var paperOrders = map[model.PaperSort]db.PaperOrder{
	model.PaperSortNewest:    db.Newest,
	model.PaperSortOldest:    db.Oldest,
	model.PaperSortMostCited: db.MostCited,
}

// paperOrder is the order sort names, Newest when nil.
func paperOrder(sort *model.PaperSort) db.PaperOrder {
	if sort == nil {
		return db.Newest
	}
	return paperOrders[*sort]
}

// rawPageArgs is pageArgs over a field's arguments as the look-ahead sees
// them (literals and variables, defaults applied).
func rawPageArgs(list listKind, args map[string]any) (db.PageArgs, error) {
	var first, last *int
	var after, before, category *string
	var sort *model.PaperSort
	for name, v := range args {
		if v == nil {
			continue
		}
		switch name {
		case "first", "last":
			n, err := graphql.UnmarshalInt(v)
			if err != nil {
				return db.PageArgs{}, badInput(name, "%v", err)
			}
			if name == "first" {
				first = &n
			} else {
				last = &n
			}
		case "after", "before", "category":
			s, err := graphql.UnmarshalString(v)
			if err != nil {
				return db.PageArgs{}, badInput(name, "%v", err)
			}
			switch name {
			case "after":
				after = &s
			case "before":
				before = &s
			default:
				category = &s
			}
		case "sort":
			var s model.PaperSort
			if err := s.UnmarshalGQL(v); err != nil {
				return db.PageArgs{}, badInput(name, "%v", err)
			}
			sort = &s
		}
	}
	return pageArgs(list, first, last, after, before, category, paperOrder(sort))
}

// listKind is the kind of list a connection pages through; a cursor names
// the kind (and for papers the order) of its list, so that a cursor of one
// list is refused by another instead of silently giving a wrong page.
type listKind uint8

const (
	paperCursors listKind = iota
	coauthorCursors
	institutionResearcherCursors
)

var paperCursorTags = [...]string{
	db.Newest: "papers-newest", db.Oldest: "papers-oldest", db.MostCited: "papers-most-cited", db.Relevance: "papers-relevance",
}

// tag is the name cursors of the list carry; o matters for paper lists
// only.
func (k listKind) tag(o db.PaperOrder) string {
	switch k {
	case coauthorCursors:
		return "coauthors"
	case institutionResearcherCursors:
		return "institution-researchers"
	}
	return paperCursorTags[o]
}

// Cursors are "<tag>:<key>:<id>" in unpadded URL-safe base64, followed
// by ":<name>" in lists ordered by name: the tag is that of the list (see
// listKind.tag and the search tags), key the sort key (empty for NULL; the
// paper count in lists by name), id the row's, name the name key, which
// may hold colons. encodeCursor and decodeCursor are the codec; the
// functions below them fit it to the db package's two cursor types.
func encodeCursor(tag string, c db.Cursor) string {
	return encodeCursorFields(tag, c.Key, c.Null, c.ID, nil)
}

func encodeNameCursor(tag string, c db.NameCursor) string {
	return encodeCursorFields(tag, int64(c.Count), false, c.ID, &c.Key)
}

func decodeCursor(arg, s, tag string) (db.Cursor, error) {
	key, null, id, _, err := decodeCursorFields(arg, s, tag, false)
	if err != nil {
		return db.Cursor{}, err
	}
	return db.Cursor{Set: true, Key: key, Null: null, ID: id}, nil
}

func decodeNameCursor(arg, s, tag string) (db.NameCursor, error) {
	count, _, id, name, err := decodeCursorFields(arg, s, tag, true)
	if err != nil {
		return db.NameCursor{}, err
	}
	return db.NameCursor{Set: true, Count: int(count), ID: id, Key: name}, nil
}

func encodeCursorFields(tag string, key int64, null bool, id int64, name *string) string {
	b := make([]byte, 0, 64)
	b = append(b, tag...)
	b = append(b, ':')
	if !null {
		b = strconv.AppendInt(b, key, 10)
	}
	b = append(b, ':')
	b = strconv.AppendInt(b, id, 10)
	if name != nil {
		b = append(b, ':')
		b = append(b, *name...)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursorFields reads a cursor of the list tag names, with a name
// when named; arg names the argument in the error.
func decodeCursorFields(arg, s, tag string, named bool) (key int64, null bool, id int64, name string, err error) {
	if err := checkText(arg, s, idText); err != nil {
		return 0, false, 0, "", err
	}
	bad := badInput(arg, "not a cursor of this list: %s", QuoteInput(s))
	// Strict: one spelling per cursor, none with stray bits in its last
	// character.
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return 0, false, 0, "", bad
	}
	want := 3
	if named {
		want = 4
	}
	parts := strings.SplitN(string(b), ":", want)
	if len(parts) != want || parts[0] != tag || (named && parts[1] == "") {
		return 0, false, 0, "", bad
	}
	if null = parts[1] == ""; !null {
		if key, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
			return 0, false, 0, "", bad
		}
	}
	if id, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
		return 0, false, 0, "", bad
	}
	if named {
		name = parts[3]
	}
	return key, null, id, name, nil
}

// authorWindow checks the arguments of Paper.authors.
func authorWindow(first, after *int) (db.Window, error) {
	n, err := countArg("first", first, DefaultAuthorsPage, MaxAuthorsPage)
	if err != nil {
		return db.Window{}, err
	}
	w := db.Window{First: n}
	if after != nil {
		if *after < 0 {
			return w, badInput("after", "must be a byline position, 0 or more, got %d", *after)
		}
		w.After = *after
	}
	return w, nil
}

// countArg checks an argument that says how many items a list returns:
// def when it is not given, 0 to most when it is.
func countArg(name string, v *int, def, most int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v < 0 || *v > most {
		return 0, badInput(name, "must be between 0 and %d, got %d", most, *v)
	}
	return *v, nil
}

// intArgs are the integer arguments names of a field as the look-ahead
// sees them, nil where one is absent, null or not an integer (the field's
// resolver then reports it).
func intArgs(args map[string]any, names ...string) []*int {
	out := make([]*int, len(names))
	for i, name := range names {
		if v := args[name]; v != nil {
			if n, err := graphql.UnmarshalInt(v); err == nil {
				out[i] = &n
			}
		}
	}
	return out
}

// firstN is xs cut to at most n items.
func firstN[T any](xs []T, n int) []T {
	return xs[:min(len(xs), n)]
}
