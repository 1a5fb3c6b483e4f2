package db_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// readOnlyFixture makes a migrated SQLite file with one paper and closes
// it, as an operator would before serving it read-only.
func readOnlyFixture(t *testing.T) string {
	t.Helper()
	dsn := dbtest.New(t, "sqlite")
	bdb, err := db.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := db.Migrate(ctx, bdb); err != nil {
		t.Fatal(err)
	}
	if _, err := bdb.NewInsert().Model(&db.Paper{ArxivID: "2401.00002", Title: "Holographic tilings"}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(dsn, "sqlite:")
}

// checkServes opens dsn as serve does (Migrate through the writer, then
// reads from the read pool) and checks that the schema counts as current
// and the paper is there.
func checkServes(t *testing.T, dsn string) {
	t.Helper()
	bdb, err := db.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	ctx := context.Background()
	if err := db.Migrate(ctx, bdb); err != nil {
		t.Fatalf("Migrate on a current read-only database: %v", err)
	}
	if err := db.Ping(ctx, bdb); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if s, err := db.ReadStats(ctx, bdb); err != nil || s.Papers != 1 {
		t.Errorf("Count = %+v, %v; want 1 paper", s, err)
	}
	if _, err := bdb.NewInsert().Model(&db.Paper{ArxivID: "2401.00003", Title: "x"}).Exec(ctx); err == nil {
		t.Error("a write to the read-only database succeeded")
	}
	// serve answers from a read pool beside the writer.
	rdb, err := db.OpenReader(dsn, 0)
	if err != nil {
		t.Fatalf("OpenReader: %v", err)
	}
	defer rdb.Close()
	if err := db.Ping(ctx, rdb); err != nil {
		t.Fatalf("Ping the read pool: %v", err)
	}
	if s, err := db.ReadStats(ctx, rdb); err != nil || s.Papers != 1 {
		t.Errorf("Count from the read pool = %+v, %v; want 1 paper", s, err)
	}
}

func TestServeReadOnly(t *testing.T) {
	t.Run("mode=ro", func(t *testing.T) {
		checkServes(t, "sqlite:"+readOnlyFixture(t)+"?mode=ro")
	})
	t.Run("immutable in a read-only directory", func(t *testing.T) {
		path := readOnlyFixture(t)
		dir := filepath.Dir(path)
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		checkServes(t, path+"?immutable=1")
	})
	t.Run("chmod 0444", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("running as root, whom file modes do not stop writing: the file would not be read-only; mode=ro and immutable=1 above cover read-only serving")
		}
		path := readOnlyFixture(t)
		if err := os.Chmod(path, 0o444); err != nil {
			t.Fatal(err)
		}
		checkServes(t, path)
	})
}

// TestReadOnlyBehind: a read-only database whose schema is not current
// says so, rather than failing on a lock or a driver message.
func TestReadOnlyBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	bdb, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bdb.Exec("CREATE TABLE unrelated (a INTEGER)"); err != nil {
		t.Fatal(err)
	}
	bdb.Close()
	ro, err := db.Open("sqlite:" + path + "?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := db.Migrate(context.Background(), ro); !errors.Is(err, db.ErrReadOnly) {
		t.Errorf("Migrate = %v, want ErrReadOnly", err)
	}
}

func TestReadOnlyDSN(t *testing.T) {
	for dsn, want := range map[string]bool{
		"papergraph.db":               false,
		"sqlite:x.db?mode=ro":         true,
		"x.db?immutable=1":            true,
		"x.db?mode=rw":                false,
		"postgres://h/db?mode=ro":     false,
		"sqlite:/a/b.db?cache=shared": false,
		// SQLite reads immutable as a boolean, spelt any of its ways.
		"x.db?immutable=TRUE": true,
		"x.db?immutable=yes":  true,
		"x.db?immutable=on":   true,
		"x.db?immutable=0":    false,
	} {
		if got := db.ReadOnlyDSN(dsn); got != want {
			t.Errorf("ReadOnlyDSN(%q) = %v, want %v", dsn, got, want)
		}
	}
}

// TestReadOnlyPostgresRole serves a migrated PostgreSQL database through a
// role that may only read it, and checks that the same role gets
// ErrReadOnly once the schema is behind.
func TestReadOnlyPostgresRole(t *testing.T) {
	if !slices.Contains(dbtest.Kinds(), "postgres") {
		t.Skip("no PostgreSQL: " + dbtest.PostgresEnv + " is not set, or -short")
	}
	dsn := dbtest.New(t, "postgres")
	admin := dbtest.Open(t, dsn)
	ctx := context.Background()
	if _, err := admin.NewInsert().Model(&db.Paper{ArxivID: "2401.00002", Title: "Holographic tilings"}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("papergraph_reader_%d", os.Getpid())
	for _, stmt := range []string{
		"DROP ROLE IF EXISTS " + role, // left by a killed run
		"CREATE ROLE " + role + " LOGIN",
		"GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + role,
	} {
		if _, err := admin.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		admin.ExecContext(ctx, "DROP OWNED BY "+role) //nolint:errcheck // the role's drop below says if it failed
		if _, err := admin.ExecContext(ctx, "DROP ROLE "+role); err != nil {
			t.Errorf("drop role: %v", err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	checkServes(t, u.String())

	if _, err := admin.ExecContext(ctx, "DELETE FROM bun_migrations WHERE name = '0006_coauthor_rank'"); err != nil {
		t.Fatal(err)
	}
	reader, err := db.Open(u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if err := db.Migrate(ctx, reader); !errors.Is(err, db.ErrReadOnly) {
		t.Errorf("Migrate behind, as a reader = %v, want ErrReadOnly", err)
	}
}
