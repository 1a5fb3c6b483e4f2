package db

import (
	_ "embed"
	"encoding/json"
	"strings"
	"sync"

	"github.com/uptrace/bun"
)

// taxonomyJSON is arXiv's category taxonomy (codes, names, archives,
// groups, aliases), from arXiv/arxiv-base arxiv/taxonomy/definitions.py.
//
//go:embed taxonomy.json
var taxonomyJSON []byte

// taxonomy is what CanonicalCategory reads of taxonomyJSON. The migration
// 0002_taxonomy holds a copy of its categories: one the archive should
// know from the start needs a migration that adds it.
type taxonomy struct {
	ArchivesSubsumed map[string]string   `json:"archives_subsumed"`
	Categories       map[string]struct{} `json:"categories"`
	CategoryAliases  map[string]string   `json:"category_aliases"`
}

var loadTaxonomy = sync.OnceValue(func() *taxonomy {
	var t taxonomy
	if err := json.Unmarshal(taxonomyJSON, &t); err != nil {
		panic("db: embedded taxonomy.json: " + err.Error())
	}
	return &t
})

// Category is one arXiv category.
type Category struct {
	bun.BaseModel `bun:"table:categories"`

	Code       string `bun:"code,pk"`
	Name       string `bun:"name,notnull"`
	Archive    string `bun:"archive,notnull"`
	GroupName  string `bun:"group_name,notnull"`
	Active     bool   `bun:"active,notnull"`
	InTaxonomy bool   `bun:"in_taxonomy,notnull"`
	// PaperCount is the number of papers filed under the category: the
	// writer keeps it as it files and unfiles papers (migration 0015),
	// so that a category's totalCount reads no index range.
	PaperCount int64 `bun:"paper_count,notnull"`
}

// CanonicalCategory maps a category code as found in data to the code the
// archive files it under: defunct archives become the category that
// subsumed them (alg-geom → math.AG), aliases their canonical code
// (math.MP → math-ph). ok is false for strings that are not arXiv category
// codes at all, such as MSC ("68T45, 62H30") or ACM ("I.5.3") classes.
// known says whether the taxonomy lists the code.
func CanonicalCategory(code string) (canonical string, known, ok bool) {
	code = strings.TrimSpace(code)
	if !isCategoryCode(code) {
		return "", false, false
	}
	t := loadTaxonomy()
	if to, found := t.ArchivesSubsumed[code]; found {
		code = to
	}
	if to, found := t.CategoryAliases[code]; found {
		code = to
	}
	_, known = t.Categories[code]
	return code, known, true
}

// UnknownCategory describes a code met in data that the taxonomy lacks; it
// is stored flagged so that papers keep it.
func UnknownCategory(code string) Category {
	archive, _, _ := strings.Cut(code, ".")
	return Category{Code: code, Name: code, Archive: archive, GroupName: "Unknown", InTaxonomy: false}
}

// isCategoryCode matches "hep-th", "math.AG", "cond-mat.str-el", "q-bio.NC":
// an archive of lowercase letters and dashes, then optionally a dot and a
// subject class of letters and dashes.
func isCategoryCode(s string) bool {
	archive, class, hasClass := strings.Cut(s, ".")
	if !isWord(archive, false) {
		return false
	}
	return !hasClass || isWord(class, true)
}

func isWord(s string, upper bool) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r == '-':
		case upper && r >= 'A' && r <= 'Z':
		default:
			return false
		}
	}
	return true
}
