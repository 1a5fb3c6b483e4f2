package db_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

var update = flag.Bool("update", false, "rewrite testdata/schema.*.txt from a fresh migration")

// schemaQueries dump what a migration leaves behind on each database: the
// tables, their columns, indexes, triggers, constraints and functions, the
// seeded categories and the names bun_migrations records. Each row is one
// line.
var schemaQueries = map[string][]string{
	"sqlite": {
		`SELECT type || '|' || name || '|' || tbl_name || '|' || COALESCE(sql, '') FROM sqlite_master
		 WHERE name NOT LIKE 'bun_migration%'`,
		`SELECT 'column|' || m.name || '|' || c.cid || '|' || c.name || '|' || c.type || '|' || c."notnull" || '|' ||
		   COALESCE(c.dflt_value, '') || '|' || c.pk
		 FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' AND m.name NOT LIKE 'bun_migration%'`,
		// SQLite keeps a boolean as whatever type it was given.
		`SELECT 'category-types|' || typeof(active) || '|' || typeof(in_taxonomy) || '|' || COUNT(*) FROM categories GROUP BY typeof(active), typeof(in_taxonomy)`,
	},
	"postgres": {
		`SELECT 'column|' || table_name || '|' || ordinal_position || '|' || column_name || '|' || data_type || '|' ||
		   is_nullable || '|' || COALESCE(column_default, '') || '|' || is_identity
		 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name NOT LIKE 'bun_migration%'`,
		`SELECT 'index|' || indexname || '|' || indexdef FROM pg_indexes
		 WHERE schemaname = current_schema() AND tablename NOT LIKE 'bun_migration%'`,
		`SELECT 'constraint|' || c.conname || '|' || c.conrelid::regclass || '|' || pg_get_constraintdef(c.oid)
		 FROM pg_constraint c WHERE c.connamespace = current_schema()::regnamespace AND c.conrelid::regclass::text NOT LIKE 'bun_migration%'`,
		`SELECT 'trigger|' || tgname || '|' || pg_get_triggerdef(t.oid) FROM pg_trigger t
		 JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace`,
		`SELECT 'function|' || p.proname || '|' || pg_get_functiondef(p.oid) FROM pg_proc p
		 WHERE p.pronamespace = current_schema()::regnamespace`,
	},
}

// seedQueries dump the rows migrations write, alike on both databases.
var seedQueries = []string{
	`SELECT 'category|' || code || '|' || name || '|' || archive || '|' || group_name || '|' ||
	   CASE WHEN active THEN 'true' ELSE 'false' END || '|' || CASE WHEN in_taxonomy THEN 'true' ELSE 'false' END
	 FROM categories`,
	`SELECT 'migration|' || name FROM bun_migrations`,
}

// A fresh migration must build the schema that the first release of each
// migration built: testdata/schema.*.txt were written by migrations that
// were Go functions, before they were frozen into SQL files, and a
// database they migrated must read as current (the same names recorded).
// The test migrates new databases itself, where dbtest.Each would copy
// PostgreSQL's migrated template.
func TestMigrationsBuildTheRecordedSchema(t *testing.T) {
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) { recordedSchema(t, kind) })
	}
}

func recordedSchema(t *testing.T, kind string) {
	bdb := dbtest.Open(t, dbtest.New(t, kind))
	got := dumpSchema(t, bdb, kind)
	golden := filepath.Join("testdata", "schema."+kind+".txt")
	if *update {
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Fatalf("schema line %d:\n got %q\nwant %q", i+1, g, w)
		}
	}
	if n, err := db.Pending(context.Background(), bdb); err != nil || n != 0 {
		t.Errorf("Pending = %d, %v after Migrate, want 0", n, err)
	}
}

// dumpSchema returns the schema of bdb as sorted lines; a line of a
// multi-line definition ends in \n, escaped, so each object is one line.
func dumpSchema(t *testing.T, bdb *bun.DB, kind string) []string {
	t.Helper()
	var lines []string
	for _, q := range append(schemaQueries[kind], seedQueries...) {
		var rows []string
		if err := bdb.NewRaw(q).Scan(context.Background(), &rows); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		for _, r := range rows {
			lines = append(lines, strings.ReplaceAll(r, "\n", `\n`))
		}
	}
	slices.Sort(lines)
	return lines
}
