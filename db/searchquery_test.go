package db

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseSearchQuery(t *testing.T) {
	tests := []struct {
		in, fts5, tsquery string
	}{
		{"quantum gravity", `"quantum" "gravity"`, `'quantum' & 'gravity'`},
		{`"black hole" entropy`, `"black hole" "entropy"`, `'black' <-> 'hole' & 'entropy'`},
		{"chromo*", `"chromo"*`, `'chromo':*`},
		{"Balázs", `"balazs"`, `'balazs'`},
		{"ÜBER-Øbro; it's", `"uber" "obro" "it" "s"`, `'uber' & 'obro' & 'it' & 's'`},
		{`x OR y AND NOT z`, `"x" "or" "y" "and" "not" "z"`, `'x' & 'or' & 'y' & 'and' & 'not' & 'z'`},
		{`'; DROP TABLE papers; --`, `"drop" "table" "papers"`, `'drop' & 'table' & 'papers'`},
		{"string/fivebrane", `"string" "fivebrane"`, `'string' & 'fivebrane'`},
		{"hep-th/9407087 v1.5", `"hep" "th" "9407087" "v1" "5"`, `'hep' & 'th' & '9407087' & 'v1' & '5'`},
		{"x² Γ-matrices", `"x" "γ" "matrices"`, `'x' & 'γ' & 'matrices'`},
	}
	for _, tt := range tests {
		q, err := ParseSearchQuery(tt.in)
		if err != nil {
			t.Errorf("ParseSearchQuery(%q): %v", tt.in, err)
			continue
		}
		if got := q.fts5(); got != tt.fts5 {
			t.Errorf("ParseSearchQuery(%q).fts5() = %s, want %s", tt.in, got, tt.fts5)
		}
		if got := q.tsquery(""); got != tt.tsquery {
			t.Errorf("ParseSearchQuery(%q).tsquery() = %s, want %s", tt.in, got, tt.tsquery)
		}
	}
}

func TestTSQueryWeight(t *testing.T) {
	q, err := ParseSearchQuery(`"black hole" entro*`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := q.tsquery("A"), `'black':A <-> 'hole':A & 'entro':*A`; got != want {
		t.Errorf("tsquery(A) = %s, want %s", got, want)
	}
}

func TestPrefixQuery(t *testing.T) {
	tests := []struct{ in, fts5 string }{
		{"quantum gra", `"quantum" "gra"*`},
		{"quantum g", `"quantum"`},
		{"g", ``},
		{"wi", `"wi"*`},
	}
	for _, tt := range tests {
		if got := PrefixQuery(tt.in).fts5(); got != tt.fts5 {
			t.Errorf("PrefixQuery(%q).fts5() = %s, want %s", tt.in, got, tt.fts5)
		}
	}
}

func TestParseSearchQueryRejects(t *testing.T) {
	for _, in := range []string{"", "  ;; ", `"unbalanced`, "*", "a * b", `"phrase"*`, "\u0301", "a*", "quantum g*", "b c d e f g h j k l m n o p q r s", strings.Repeat("of the ", 17)} {
		if _, err := ParseSearchQuery(in); !errors.Is(err, ErrSearchQuery) {
			t.Errorf("ParseSearchQuery(%q): got %v, want ErrSearchQuery", in, err)
		}
	}
}

func TestFoldTable(t *testing.T) {
	letters := []rune(foldFrom)[:len([]rune(foldFrom))-len([]rune(combiningMarks))]
	if got, want := len([]rune(foldTo)), len(letters); got != want {
		t.Fatalf("foldTo has %d letters, want %d", got, want)
	}
	if got, want := searchFold("Bala\u0301zs ŁÓDŹ"), "balazs lodz"; got != want {
		t.Errorf("searchFold: got %q, want %q", got, want)
	}
}

// Go folds query words with the table PostgreSQL's search_fold was
// created with; the two must not drift apart.
func TestFoldTableMatchesMigration(t *testing.T) {
	text, err := migrationFiles.ReadFile("migrations/postgres/0003_search.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`translate\(lower\(t\), '([^']*)', '([^']*)'\)`).FindSubmatch(text)
	if m == nil {
		t.Fatal("no translate() call in 0003_search")
	}
	if got := string(m[1]); got != foldFrom {
		t.Errorf("the migration folds from %q, want foldFrom %q", got, foldFrom)
	}
	if got := string(m[2]); got != foldTo {
		t.Errorf("the migration folds to %q, want foldTo %q", got, foldTo)
	}
}

// TestCitedBandsMatchMigration checks that migrations 0019 and 0031 index the
// bands of citations SearchCandidates reads: a partial GIN index per band
// on PostgreSQL, a band token per band on SQLite, each from citedBands.
func TestCitedBandsMatchMigration(t *testing.T) {
	// Migration 0019 made the bands down to 2, 0031 the band of 1 and
	// SQLite's triggers again.
	pg, err := migrationFiles.ReadFile("migrations/postgres/0019_cited_bands.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	pg1, err := migrationFiles.ReadFile("migrations/postgres/0031_cited_once.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	pg = append(pg, pg1...)
	var want []string
	for i, b := range citedBands {
		pred := fmt.Sprintf("citation_count >= %d", b)
		if i > 0 {
			pred += fmt.Sprintf(" AND citation_count < %d", citedBands[i-1])
		}
		want = append(want, fmt.Sprintf("CREATE INDEX papers_search_cited_%d ON papers USING GIN (search_doc) WHERE %s;", b, pred))
	}
	if got := regexp.MustCompile(`CREATE INDEX papers_search_cited_[^;]*;`).FindAllString(string(pg), -1); !slices.Equal(got, want) {
		t.Errorf("PostgreSQL's band indexes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sq, err := migrationFiles.ReadFile("migrations/sqlite/0031_cited_once.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"new", "old", "papers"} {
		if c := citedBandCase(row); !strings.Contains(string(sq), c) {
			t.Errorf("SQLite's migration has no band of %s as\n%s", row, c)
		}
	}
	if n := strings.Count(string(sq), "CASE"); n != 5 {
		t.Errorf("SQLite's migration has %d CASE expressions, want 5 (insert, the update's old, new and insert, fill)", n)
	}
	if !strings.Contains(string(sq), "citation_count >= "+strconv.Itoa(citedBands[len(citedBands)-1])) {
		t.Error("SQLite's migration does not keep the papers of the lowest band")
	}
}

// TestTexRulesMatchMigration: PostgreSQL's tex_fold (migration 0024)
// applies texRules, in their order, as Go does.
func TestTexRulesMatchMigration(t *testing.T) {
	text, err := migrationFiles.ReadFile("migrations/postgres/0024_tex_fold.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\$f\$ SELECT CASE WHEN strpos\(t, '\\'\) = 0 THEN t ELSE\s*((?:regexp_replace\()*)t,(.*) END \$f\$`).FindSubmatch(text)
	if m == nil {
		t.Fatal("no tex_fold in 0024_tex_fold")
	}
	if got := strings.Count(string(m[1]), "regexp_replace("); got != len(texRules) {
		t.Errorf("tex_fold applies %d rules, want %d", got, len(texRules))
	}
	want := make([]string, len(texRules))
	for i, r := range texRules {
		want[i] = fmt.Sprintf("\n\t\t\t\t'%s', '%s', 'g')", strings.ReplaceAll(r.pattern, "'", "''"), strings.ReplaceAll(r.replacement, "$1", `\1`))
	}
	if got := string(m[2]); got != strings.Join(want, ",") {
		t.Errorf("tex_fold's rules:\n%s\nwant texRules:\n%s", got, strings.Join(want, ","))
	}
}
