// Package dbtest gives tests fresh, migrated databases: SQLite always, and
// PostgreSQL when PAPERGRAPH_TEST_POSTGRES holds a DSN and the run is not
// -short. Each PostgreSQL database is created for one test and dropped
// after it.
package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// PostgresEnv names the environment variable with the PostgreSQL DSN tests use.
const PostgresEnv = "PAPERGRAPH_TEST_POSTGRES"

// Each runs fn once per available database, as subtests named "sqlite" and
// "postgres", each on a fresh migrated database.
func Each(t *testing.T, fn func(t *testing.T, dsn string, bdb *bun.DB)) {
	t.Helper()
	for _, kind := range Kinds() {
		t.Run(kind, func(t *testing.T) {
			dsn := New(t, kind)
			fn(t, dsn, Open(t, dsn))
		})
	}
}

// Kinds lists the databases tests run on here: SQLite, and PostgreSQL when
// PostgresEnv holds a DSN and the run is not -short. go test -short is the
// quick loop while editing; the whole suite, as CI runs it, is on both.
func Kinds() []string {
	if os.Getenv(PostgresEnv) != "" && !testing.Short() {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

var seq atomic.Int64

// New creates an empty database of the given kind for t, removed when t
// ends, and returns its DSN. It does not migrate.
func New(t testing.TB, kind string) string {
	t.Helper()
	if kind == "sqlite" {
		return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
	}
	admin := os.Getenv(PostgresEnv)
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	name := fmt.Sprintf("papergraph_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, seq.Add(1))
	conn, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		conn, err := sql.Open("pgx", admin)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		if _, err := conn.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// Open opens and migrates dsn, closing it when t ends.
func Open(t testing.TB, dsn string) *bun.DB {
	t.Helper()
	bdb, err := db.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bdb.Close() })
	if err := db.Migrate(context.Background(), bdb); err != nil {
		t.Fatal(err)
	}
	return bdb
}
