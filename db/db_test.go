package db_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

func TestMigrateSeedsTaxonomyAndIsIdempotent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx, bdb); err != nil {
			t.Fatalf("second Migrate: %v", err)
		}
		if err := db.Ping(ctx, bdb); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		var cats []db.Category
		if err := bdb.NewSelect().Model(&cats).Where("code IN (?)", bun.List([]string{"hep-th", "math.AG", "cs.LG"})).Order("code").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		want := []db.Category{
			{Code: "cs.LG", Name: "Machine Learning", Archive: "cs", GroupName: "Computer Science", Active: true, InTaxonomy: true},
			{Code: "hep-th", Name: "High Energy Physics - Theory", Archive: "hep-th", GroupName: "Physics", Active: true, InTaxonomy: true},
			{Code: "math.AG", Name: "Algebraic Geometry", Archive: "math", GroupName: "Mathematics", Active: true, InTaxonomy: true},
		}
		if len(cats) != len(want) {
			t.Fatalf("got %d categories, want %d", len(cats), len(want))
		}
		for i := range want {
			if cats[i] != want[i] {
				t.Errorf("category %d = %+v, want %+v", i, cats[i], want[i])
			}
		}
		n, err := bdb.NewSelect().Model((*db.Category)(nil)).Count(ctx)
		if err != nil || n != 185 {
			t.Errorf("categories: got %d (%v), want 185", n, err)
		}
	})
}

func TestCanonicalCategory(t *testing.T) {
	tests := []struct {
		in, want  string
		known, ok bool
	}{
		{"hep-th", "hep-th", true, true},
		{"alg-geom", "math.AG", true, true},
		{"math.MP", "math-ph", true, true},
		{"cond-mat.str-el", "cond-mat.str-el", true, true},
		{"cs.XX", "cs.XX", false, true},
		{"68T45, 62H30", "", false, false},
		{"I.5.3; I.2.10", "", false, false},
		{"", "", false, false},
	}
	for _, tt := range tests {
		got, known, ok := db.CanonicalCategory(tt.in)
		if got != tt.want || known != tt.known || ok != tt.ok {
			t.Errorf("CanonicalCategory(%q) = %q, %v, %v; want %q, %v, %v", tt.in, got, known, ok, tt.want, tt.known, tt.ok)
		}
	}
}

// TestUnrecordedMigrationRunsAgain: Pending counts a migration that is not
// recorded, Ping reports it, and Migrate runs it again.
func TestUnrecordedMigrationRunsAgain(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx := context.Background()
		if n, err := db.Pending(ctx, bdb); err != nil || n != 0 {
			t.Fatalf("Pending after Migrate = %d, %v; want 0", n, err)
		}
		// Drop the record of the last migration and part of its effect,
		// as if it had not finished.
		if _, err := bdb.NewDelete().Table("bun_migrations").Where("name = ?", "0002_taxonomy").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := db.Pending(ctx, bdb); err != nil || n != 1 {
			t.Fatalf("Pending = %d, %v; want 1", n, err)
		}
		if err := db.Ping(ctx, bdb); err == nil {
			t.Error("Ping with a migration pending: want an error")
		}
		if _, err := bdb.NewDelete().Table("categories").Where("code = ?", "hep-th").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx, bdb); err != nil {
			t.Fatal(err)
		}
		n, err := bdb.NewSelect().Table("categories").Where("code = ?", "hep-th").Count(ctx)
		if err != nil || n != 1 {
			t.Errorf("hep-th after the rerun: %d rows (%v), want 1", n, err)
		}
		if err := db.Ping(ctx, bdb); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}

// A file path is opened as it is written, whatever URI syntax it holds: a
// # once cut it short (a fragment) and opened another file.
func TestOpenPathWithURISyntax(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs#2 100%")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a#b%41.db")
	bdb, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if _, err := bdb.ExecContext(t.Context(), "CREATE TABLE probe (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 || entries[0].Name() != "a#b%41.db" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files in %s: %q, want a#b%%41.db (and its journal)", dir, names)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "runs")); err == nil {
		t.Error("a file named runs was made beside the directory: the path was cut at #")
	}
}

// SQLite readers read the file through a memory map, and a reader that
// has read pages through it still sees what the writer commits later:
// the map is of the database file, and pages newer than it come from the
// write-ahead log.
func TestReadersMapTheFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "papergraph.db")
	writer, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if err := db.Migrate(ctx, writer); err != nil {
		t.Fatal(err)
	}
	reader, err := db.OpenReader(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var mapped int64
	if err := reader.QueryRowContext(ctx, "PRAGMA mmap_size").Scan(&mapped); err != nil || mapped < 1<<30 {
		t.Errorf("a reader's mmap_size = %d, %v; want at least 1 GiB", mapped, err)
	}
	papers := func() int {
		t.Helper()
		n, err := reader.NewSelect().Model((*db.Paper)(nil)).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	for i := range 3 {
		if got := papers(); got != i*500 {
			t.Fatalf("the reader counts %d papers, want %d", got, i*500)
		}
		rows := make([]db.Paper, 500)
		for j := range rows {
			rows[j] = db.Paper{ArxivID: fmt.Sprintf("2401.%05d", i*500+j), Title: strings.Repeat("a long title ", 20)}
		}
		if _, err := writer.NewInsert().Model(&rows).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// A checkpoint moves the pages into the file the reader maps.
		if i == 1 {
			if _, err := writer.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := papers(); got != 1500 {
		t.Errorf("the reader counts %d papers after the last write, want 1500", got)
	}
}
