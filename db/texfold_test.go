package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// texTexts are TeX spellings and the words both indexes hold for them.
var texTexts = []struct{ in, words string }{
	{`Kucha\v{r} and Isham`, "kuchar and isham"},
	{`Kucha\v r`, "kuchar"},
	{`G{\"o}del's theorem`, "godel s theorem"},
	{`G\"odel`, "godel"},
	{`Erd\H{o}s--R\'enyi`, "erdos renyi"},
	{`na\"{\i}ve na\"\i ve`, "naive naive"},
	{`{\o}rsted \O{} Stra\ss e`, "orsted o strasse"},
	{`\AA ngstr\"om`, "angstrom"},
	{`Pe\~na \c{C}elik \L{}ukasiewicz`, "pena celik lukasiewicz"},
	{`\emph{duality} in \textbf{\"Ubersicht}`, "duality in ubersicht"},
	{`$\sigma$-model $\mathcal{N}=2$ \left( x \right)`, "sigma model n 2 x"},
	{`\bar x \int \over \alpha'`, "bar x int over alpha"},
	{`plain text, no markup`, "plain text no markup"},
}

// TestTexFold checks the words Go folds TeX spellings to, and on
// PostgreSQL that search_words (tex_fold of migration 0024) folds them
// alike.
func TestTexFold(t *testing.T) {
	for _, tt := range texTexts {
		if got := db.SearchWords(tt.in); got != tt.words {
			t.Errorf("%q: words %q, want %q", tt.in, got, tt.words)
		}
	}
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		if !db.IsPostgres(bdb) {
			t.Skip("SQLite's index folds with Go's search_fold")
		}
		for _, tt := range texTexts {
			var got string
			if err := bdb.NewRaw(`SELECT trim(search_words(?))`, tt.in).Scan(context.Background(), &got); err != nil {
				t.Fatal(err)
			}
			if got != tt.words {
				t.Errorf("%q: PostgreSQL's words %q, want %q", tt.in, got, tt.words)
			}
		}
	})
}

// TestTexFoldSearch: a paper spelling a name in TeX is found by the
// name written plainly, and by the TeX spelling, on both databases.
func TestTexFoldSearch(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		rows := []*db.Paper{
			{ArxivID: "gr-qc/9301001", Title: `Canonical quantisation and the problem of time`,
				Abstract: `Following Kucha\v{r} and Isham we discuss \emph{internal} time in G{\"o}del universes.`},
			{ArxivID: "gr-qc/9301002", Title: "Kuchar without Isham", Abstract: "An unrelated plain abstract."},
			{ArxivID: "gr-qc/9301003", Title: "Isham alone", Abstract: "Nothing of the other name."},
		}
		if err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := db.InsertPapers(ctx, tx, rows)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for query, want := range map[string]string{
			"Kuchar Isham":          "gr-qc/9301002 gr-qc/9301001",
			`Kucha\v{r} +godel`:     "gr-qc/9301001",
			`"internal time" Godel`: "gr-qc/9301001",
			"emph":                  "",
		} {
			q, err := db.ParseSearchQuery(query)
			if err != nil {
				t.Fatalf("%q: %v", query, err)
			}
			pg, err := db.SearchPapers(ctx, bdb, db.PaperSearch{Query: q}, db.PageArgs{First: 10, Order: db.Newest})
			if err != nil {
				t.Fatalf("%q: %v", query, err)
			}
			var got []string
			for _, p := range pg.Items {
				got = append(got, p.ArxivID)
			}
			if strings.Join(got, " ") != want {
				t.Errorf("%q: found %q, want %q", query, got, want)
			}
		}
	})
}

// TestTexFoldReindex: migration 0024 indexes again the papers indexed
// before it, with their TeX spelled raw: after it a plain query finds
// them on both databases.
func TestTexFoldReindex(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		rows := []*db.Paper{{ArxivID: "gr-qc/9302001", Title: `Time and Kucha\v{r}`, Abstract: `G{\"o}del universes`}}
		if err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := db.InsertPapers(ctx, tx, rows)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// The paper as the index held it before 0024: TeX split at its
		// punctuation, "kucha v r" and "g o del".
		file, old := "sqlite/0024_tex_fold.tx.up.sql", []string{
			`DELETE FROM papers_fts WHERE rowid IN (SELECT id FROM papers WHERE arxiv_id = 'gr-qc/9302001')`,
			`INSERT INTO papers_fts (rowid, title, abstract) SELECT id, 'Time and Kucha v r', 'G o del universes' FROM papers WHERE arxiv_id = 'gr-qc/9302001'`,
		}
		if db.IsPostgres(bdb) {
			file, old = "postgres/0024_tex_fold.tx.up.sql", []string{`UPDATE papers SET
				search_doc = setweight(to_tsvector('simple', 'time and kucha v r'), 'A') || setweight(to_tsvector('simple', 'g o del universes'), 'B'),
				title_doc = setweight(to_tsvector('simple', 'time and kucha v r'), 'A')`}
		}
		found := func() int {
			n, _, err := db.SearchCount(ctx, bdb, db.PaperSearch{Query: mustQuery(t, "kuchar godel")})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, stmt := range old {
			if _, err := bdb.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		if n := found(); n != 0 {
			t.Fatalf("the index as before 0024 matches %d papers, want 0", n)
		}
		stmts, err := db.MigrationStatements(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range stmts {
			if strings.Contains(stmt, "CREATE FUNCTION") {
				continue // made by the migration already
			}
			if _, err := bdb.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		if n := found(); n != 1 {
			t.Errorf("after 0024 %d papers match, want 1", n)
		}
	})
}

func mustQuery(t *testing.T, s string) db.SearchQuery {
	t.Helper()
	q, err := db.ParseSearchQuery(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
