package db_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestPostgresSessionsCompileNothing checks that papergraph's PostgreSQL
// sessions run with JIT compilation off (see openPostgres): the estimates
// of the candidates statement's skipped bands, which grow with the
// archive, made PostgreSQL compile it for far longer than it runs.
func TestPostgresSessionsCompileNothing(t *testing.T) {
	if !slices.Contains(dbtest.Kinds(), "postgres") {
		t.Skip("no PostgreSQL: set " + dbtest.PostgresEnv)
	}
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "postgres"))
	var jit string
	if err := bdb.NewRaw("SHOW jit").Scan(context.Background(), &jit); err != nil {
		t.Fatal(err)
	}
	if jit != "off" {
		t.Errorf("jit is %q in papergraph's session, want off", jit)
	}
}

// TestPostgresReadersPlanOnce checks that the API's PostgreSQL sessions
// (OpenReader's) keep one generic plan for each prepared statement (see
// openPostgres; under the default plan_cache_mode PostgreSQL replans
// the batch reads at every run), that the writer's keep PostgreSQL's default, and that a DSN
// which sets plan_cache_mode keeps its own.
func TestPostgresReadersPlanOnce(t *testing.T) {
	if !slices.Contains(dbtest.Kinds(), "postgres") {
		t.Skip("no PostgreSQL: set " + dbtest.PostgresEnv)
	}
	dsn := dbtest.New(t, "postgres")
	dbtest.Open(t, dsn) // migrated
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	for _, tt := range []struct {
		name string
		open func() (*bun.DB, error)
		want string
	}{
		{"reader", func() (*bun.DB, error) { return db.OpenReader(dsn, 1) }, "force_generic_plan"},
		{"writer", func() (*bun.DB, error) { return db.Open(dsn) }, "auto"},
		{"reader, DSN's own", func() (*bun.DB, error) { return db.OpenReader(dsn+sep+"plan_cache_mode=force_custom_plan", 1) }, "force_custom_plan"},
	} {
		bdb, err := tt.open()
		if err != nil {
			t.Fatal(err)
		}
		var mode string
		if err := bdb.NewRaw("SHOW plan_cache_mode").Scan(context.Background(), &mode); err != nil {
			t.Fatal(err)
		}
		bdb.Close()
		if mode != tt.want {
			t.Errorf("%s: plan_cache_mode %q, want %q", tt.name, mode, tt.want)
		}
	}
}
