package db_test

import (
	"context"
	"slices"
	"testing"

	"github.com/papergraph/papergraph/db/dbtest"
)

// TestPostgresSessionsCompileNothing checks that papergraph's PostgreSQL
// sessions run with JIT compilation off (see openPostgres): the estimates
// of the candidates statement's skipped bands made PostgreSQL compile it
// for 1.7 s at 2.7 million papers.
func TestPostgresSessionsCompileNothing(t *testing.T) {
	if !slices.Contains(dbtest.Kinds(), "postgres") {
		t.Skip("no PostgreSQL: set " + dbtest.PostgresEnv)
	}
	bdb := dbtest.Open(t, dbtest.New(t, "postgres"))
	var jit string
	if err := bdb.NewRaw("SHOW jit").Scan(context.Background(), &jit); err != nil {
		t.Fatal(err)
	}
	if jit != "off" {
		t.Errorf("jit is %q in papergraph's session, want off", jit)
	}
}
