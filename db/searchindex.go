package db

import (
	"context"
	"database/sql/driver"
	"strings"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"modernc.org/sqlite"
)

// The full-text index over papers' titles and abstracts.
//
// SQLite: papers_fts is a contentless FTS5 table (it stores the index, not
// the text) that triggers on papers keep in step. They index the text as
// search_fold leaves it, the Go searchFold registered with the driver,
// which folds the letters unicode61 cannot (ł, ø) as PostgreSQL's
// search_fold does; the tokenizer then folds case and other diacritics
// ("Balázs" is "balazs"). Query words are folded the same way. Ranking is
// bm25 with the title weighted above the abstract.
//
// PostgreSQL: a GIN index over the expression papers_search_doc(title,
// abstract): the 'simple' configuration (no stemming, no stop words, like
// unicode61) over text folded by search_fold, an IMMUTABLE translate()
// of accented Latin letters. The unaccent extension would fold more, but
// it is not installed everywhere and its function is not IMMUTABLE, so an
// index cannot use it directly. Go folds query words with the same table
// (searchFold). Ranking is ts_rank, title words weighted A, abstract B.

// foldFrom and foldTo are search_fold's translate() table: lowercase
// accented letters and their base letters, then the combining marks,
// which translate() drops (they have no counterpart in foldTo). The
// migration wrote them into the database: changing them needs a new
// migration that replaces the function and rebuilds the index.
var (
	foldFrom = "àáâãäåāăąçćĉċčďđèéêëēĕėęěĝğġģĥħìíîïĩīĭįıĵķĺļľŀłñńņňòóôõöøōŏőŕŗřśŝşšșţťŧțùúûüũūŭůűųŵýÿŷźżž" + combiningMarks
	foldTo   = "aaaaaaaaacccccddeeeeeeeeegggghhiiiiiiiiijklllllnnnnooooooooorrrsssssttttuuuuuuuuuuwyyyzzz"
)

// combiningMarks are U+0300 to U+036F, the marks of decomposed accents.
var combiningMarks = func() string {
	var b strings.Builder
	for r := rune(0x300); r <= 0x36f; r++ {
		b.WriteRune(r)
	}
	return b.String()
}()

// folds maps each rune of foldFrom to its base letter, or to -1 (dropped).
var folds = func() map[rune]rune {
	to := []rune(foldTo)
	m := map[rune]rune{}
	for i, r := range []rune(foldFrom) {
		if i < len(to) {
			m[r] = to[i]
		} else {
			m[r] = -1
		}
	}
	return m
}()

// searchFold is search_fold in Go: lowercase, then the fold table.
func searchFold(s string) string {
	return strings.Map(func(r rune) rune {
		if f, ok := folds[r]; ok {
			return f
		}
		return r
	}, strings.ToLower(s))
}

// indexFold is search_fold for the SQLite index: the unicode61 tokenizer
// folds the case of ASCII letters itself, so plain ASCII text (most titles
// and abstracts) goes to it as it is, and only other text is folded here.
// That spares a bulk import a copy of every text.
func indexFold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return searchFold(s)
		}
	}
	return s
}

// sqliteSearch creates the FTS5 table, its triggers, and indexes the
// papers already stored. prefix='2 3' keeps prefix indexes that make
// short prefix queries (typeahead) cheap; contentless_delete lets the
// triggers remove a paper by rowid alone.
var sqliteSearch = []string{
	`CREATE VIRTUAL TABLE papers_fts USING fts5(title, abstract, content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 2', prefix='2 3')`,
	`CREATE TRIGGER papers_fts_insert AFTER INSERT ON papers BEGIN
		INSERT INTO papers_fts (rowid, title, abstract) VALUES (new.id, search_fold(new.title), search_fold(new.abstract));
	END`,
	`CREATE TRIGGER papers_fts_delete AFTER DELETE ON papers BEGIN
		DELETE FROM papers_fts WHERE rowid = old.id;
	END`,
	// Imports upsert every column; only a changed text touches the index.
	`CREATE TRIGGER papers_fts_update AFTER UPDATE OF title, abstract ON papers
	WHEN old.title IS NOT new.title OR old.abstract IS NOT new.abstract BEGIN
		DELETE FROM papers_fts WHERE rowid = old.id;
		INSERT INTO papers_fts (rowid, title, abstract) VALUES (new.id, search_fold(new.title), search_fold(new.abstract));
	END`,
	`INSERT INTO papers_fts (rowid, title, abstract) SELECT id, search_fold(title), search_fold(abstract) FROM papers`,
}

// The SQLite driver gets search_fold at start-up: every connection opened
// afterwards has it, and the FTS triggers above call it.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("search_fold", 1,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case string:
				return indexFold(v), nil
			case []byte:
				return indexFold(string(v)), nil
			}
			return "", nil // NULL text indexes as nothing
		})
}

// postgresSearch creates the fold function, the document function and its
// index, and the byte-order indexes behind name prefix searches (see
// prefixMatch).
var postgresSearch = []string{
	// translate() looks every character up in the table, which costs an
	// import more than building the index; most titles and abstracts are
	// plain ASCII (as many bytes as characters), and those skip it.
	`CREATE FUNCTION search_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT CASE WHEN octet_length(t) = length(t) THEN lower(t)
			ELSE translate(lower(t), '` + foldFrom + `', '` + foldTo + `') END $$`,
	`CREATE FUNCTION papers_search_doc(title text, abstract text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT setweight(to_tsvector('simple', search_fold(title)), 'A') ||
			setweight(to_tsvector('simple', search_fold(coalesce(abstract, ''))), 'B') $$`,
	`CREATE INDEX papers_search ON papers USING GIN (papers_search_doc(title, abstract))`,
	`CREATE INDEX researchers_name_key_c ON researchers (name_key COLLATE "C")`,
	`CREATE INDEX researchers_family_key_c ON researchers (family_key COLLATE "C")`,
	`CREATE INDEX institution_names_key_c ON institution_names (name_key COLLATE "C")`,
}

// createSearch is the 0003_search migration.
func createSearch(ctx context.Context, tx bun.Tx) error {
	stmts := sqliteSearch
	if IsPostgres(tx) {
		stmts = postgresSearch
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
