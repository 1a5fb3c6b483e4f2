package dbtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// A Seed is data that tests read, written into a migrated database by
// fill, on top of its base's data when it has a base. On SQLite it is
// written once a process, and each test's database is a copy of the
// file: importing a fixture takes longer than copying what it wrote. On
// PostgreSQL, where a copy would be a template database that would
// outlive the process, fill runs in each test's database.
type Seed struct {
	base   *Seed
	fill   func(context.Context, *bun.DB) error
	sqlite func() ([]byte, error)
}

// NewSeed is the Seed that fill writes into a migrated database.
func NewSeed(fill func(context.Context, *bun.DB) error) *Seed {
	return (*Seed)(nil).Then(fill)
}

// Then is the Seed that fill writes on top of s's data, as a later
// import finds the data of an earlier one.
func (s *Seed) Then(fill func(context.Context, *bun.DB) error) *Seed {
	n := &Seed{base: s, fill: fill}
	n.sqlite = sync.OnceValues(n.buildSQLite)
	return n
}

// NewSeeded is NewMigrated for a database that also holds s's data.
func NewSeeded(t testing.TB, kind string, s *Seed) string {
	t.Helper()
	if kind == "sqlite" {
		image, err := s.sqlite()
		if err != nil {
			t.Fatalf("seeded SQLite database: %v", err)
		}
		return writeSQLite(t, image)
	}
	dsn := NewMigrated(t, kind)
	bdb, err := db.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if err := s.fillAll(context.Background(), bdb); err != nil {
		t.Fatalf("seed: %v", err)
	}
	return dsn
}

// EachSeeded is Each with databases that hold s's data.
func EachSeeded(t *testing.T, s *Seed, fn func(t *testing.T, dsn string, bdb *bun.DB)) {
	t.Helper()
	for _, kind := range Kinds() {
		t.Run(kind, func(t *testing.T) {
			dsn := NewSeeded(t, kind, s)
			fn(t, dsn, Open(t, dsn))
		})
	}
}

// fillAll writes the data of s's bases, then s's own, into bdb.
func (s *Seed) fillAll(ctx context.Context, bdb *bun.DB) error {
	if s == nil {
		return nil
	}
	if err := s.base.fillAll(ctx, bdb); err != nil {
		return err
	}
	return s.fill(ctx, bdb)
}

// buildSQLite returns the bytes of a SQLite database file holding s's
// data: its base's file (or the migrated one) with fill run on a copy.
// Like sqliteImage's, the file is checkpointed and closed before it is
// read, and kept in memory only.
func (s *Seed) buildSQLite() ([]byte, error) {
	base, err := sqliteImage()
	if s.base != nil {
		base, err = s.base.sqlite()
	}
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(sqliteDir(), "papergraph-dbtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "seed.db")
	if err := os.WriteFile(path, base, 0o644); err != nil {
		return nil, err
	}
	bdb, err := db.Open("sqlite:" + path)
	if err != nil {
		return nil, err
	}
	err = s.fill(context.Background(), bdb)
	if err == nil {
		_, err = bdb.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	}
	if err = errors.Join(err, bdb.Close()); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
