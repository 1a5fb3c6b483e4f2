package resolvers

import (
	"encoding/base64"
	"fmt"
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

// pageArgs checks a connection's arguments. The prefetcher and the
// resolvers both call it, so that they name a page by the same key.
func pageArgs(first, last *int, after, before, category *string, sort *model.PaperSort) (db.PageArgs, error) {
	var a db.PageArgs
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
	if sort != nil {
		a.Order = paperOrders[*sort]
	}
	var err error
	if after != nil {
		if a.After, err = parseCursor(*after, a.Order); err != nil {
			return a, badInput("after", "%v", err)
		}
	}
	if before != nil {
		if a.Before, err = parseCursor(*before, a.Order); err != nil {
			return a, badInput("before", "%v", err)
		}
	}
	if category != nil {
		a.Category = *category
	}
	return a, nil
}

var paperOrders = map[model.PaperSort]db.PaperOrder{
	model.PaperSortNewest:    db.Newest,
	model.PaperSortOldest:    db.Oldest,
	model.PaperSortMostCited: db.MostCited,
}

// rawPageArgs is pageArgs over a field's arguments as the look-ahead sees
// them (literals and variables, defaults applied).
func rawPageArgs(args map[string]any) (db.PageArgs, error) {
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
	return pageArgs(first, last, after, before, category, sort)
}

// Cursors are "<order>:<key>:<id>" in unpadded URL-safe base64, the key
// empty for NULL. The order is part of the cursor so that a cursor of one
// order is refused by another instead of silently giving a wrong page.
func cursorString(c db.Cursor, o db.PaperOrder) string {
	b := strconv.AppendInt(nil, int64(o), 10)
	b = append(b, ':')
	if !c.Null {
		b = strconv.AppendInt(b, c.Key, 10)
	}
	b = append(b, ':')
	b = strconv.AppendInt(b, c.ID, 10)
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseCursor(s string, o db.PaperOrder) (db.Cursor, error) {
	bad := fmt.Errorf("not a cursor of this list: %q", s)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return db.Cursor{}, bad
	}
	parts := strings.Split(string(b), ":")
	if len(parts) != 3 || parts[0] != strconv.Itoa(int(o)) {
		return db.Cursor{}, bad
	}
	c := db.Cursor{Set: true, Null: parts[1] == ""}
	if !c.Null {
		if c.Key, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
			return db.Cursor{}, bad
		}
	}
	if c.ID, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
		return db.Cursor{}, bad
	}
	return c, nil
}
