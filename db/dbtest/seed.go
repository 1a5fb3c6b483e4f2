package dbtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

// A Seed is data that tests read, written into a migrated database by
// fill, on top of its base's data when it has a base. On SQLite it is
// written once a process (or, when it states what it reads, kept across
// processes until that changes: see Reads), and each test's database is
// a copy of the file: importing a fixture takes longer than copying what
// it wrote. On
// PostgreSQL, where a copy would be a template database that would
// outlive the process, fill runs in each test's database.
type Seed struct {
	base   *Seed
	fill   func(context.Context, *bun.DB) error
	sqlite func() ([]byte, error)
	// index tells the seeds of one test binary apart, in the order they
	// were made (package variables are made in the same order each run).
	index int64
	// reads are the files fill reads, when Reads named them (known): only
	// such a seed is kept across processes (see keptImage).
	reads []string
	known bool
}

// seeds counts the seeds made in this process.
var seeds atomic.Int64

// NewSeed is the Seed that fill writes into a migrated database.
func NewSeed(fill func(context.Context, *bun.DB) error) *Seed {
	return (*Seed)(nil).Then(fill)
}

// Then is the Seed that fill writes on top of s's data, as a later
// import finds the data of an earlier one.
func (s *Seed) Then(fill func(context.Context, *bun.DB) error) *Seed {
	n := &Seed{base: s, fill: fill, index: seeds.Add(1)}
	n.sqlite = sync.OnceValues(func() ([]byte, error) { return keptImage(n, n.buildSQLite) })
	return n
}

// Reads states that fill reads nothing but this test binary's code and
// the files at paths (relative to the package's directory, as tests run),
// and returns s. The SQLite file of a seed whose chain all states what it
// reads is kept across test processes under the system's temporary
// directory (see keptImage); a fill that reads anything else (the clock
// beyond the day, the network, the environment, files made by the test)
// must not call it. It is for package variables, before any test runs.
func (s *Seed) Reads(paths ...string) *Seed {
	s.reads, s.known = paths, true
	return s
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
