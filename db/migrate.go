package db

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// The migrations are SQL files, history that code changes cannot rewrite:
// migrations/shared holds those both databases run, migrations/sqlite and
// migrations/postgres those written for one (a migration is in shared or
// in both of the others). Each file is NNNN_name.tx.up.sql, run by bun in
// one transaction, a statement per part between --bun:split lines; bun
// records it as NNNN_name.
//
//go:embed migrations
var migrationFiles embed.FS

// migrations lists the schema's versions for bdb's database, in order.
func migrations(bdb *bun.DB) (*migrate.Migrations, error) {
	dialect := "sqlite"
	if IsPostgres(bdb) {
		dialect = "postgres"
	}
	ms := migrate.NewMigrations()
	seen := map[string]string{}
	for _, dir := range []string{"shared", dialect} {
		found := migrate.NewMigrations()
		sub, err := fs.Sub(migrationFiles, "migrations/"+dir)
		if err != nil {
			return nil, err
		}
		if err := found.Discover(sub); err != nil {
			return nil, err
		}
		for _, m := range found.Sorted() {
			// bun would record the number alone; the names recorded since
			// the first release include the name.
			m.Name, m.Comment = m.Name+"_"+m.Comment, ""
			if other, ok := seen[m.Name]; ok {
				return nil, fmt.Errorf("migrate: %s is in both migrations/%s and migrations/%s", m.Name, other, dir)
			}
			seen[m.Name] = dir
			ms.Add(m)
		}
	}
	return ms, nil
}

// SchemaVersion identifies the schema this build's migrations build: a
// hash of their files.
func SchemaVersion() string {
	h := sha256.New()
	err := fs.WalkDir(migrationFiles, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := migrationFiles.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path, len(text))
		h.Write(text)
		return nil
	})
	if err != nil {
		panic("db: embedded migrations: " + err.Error())
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Migrate brings the schema up to date. A migration is recorded only once
// it has succeeded, so one that failed or was interrupted runs again next
// time. Processes starting together take turns: on PostgreSQL through an
// advisory lock, on SQLite through bun's lock table. A current schema is
// left unwritten, so that a read-only database can be served; one that is
// not current and read-only gives an error that wraps ErrReadOnly.
func Migrate(ctx context.Context, db *bun.DB) error {
	ms, err := migrations(db)
	if err != nil {
		return err
	}
	m := migrate.NewMigrator(db, ms, migrate.WithMarkAppliedOnSuccess(true))
	// Before Init, which writes: a current schema may be read-only. On a
	// database without bun's tables this fails, and Init creates them.
	if n, err := unapplied(ctx, m); err == nil && n == 0 {
		return nil
	}
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("migrate: %w", readOnly(err))
	}
	if n, err := unapplied(ctx, m); err != nil || n == 0 {
		return err
	}
	unlock, err := lockMigrations(ctx, db, m)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", readOnly(err))
	}
	return nil
}

// migrationLockWait is how long Migrate waits for another process's
// migration before it gives up.
const migrationLockWait = 30 * time.Second

// lockMigrations takes the migration lock and returns its release.
func lockMigrations(ctx context.Context, db *bun.DB, m *migrate.Migrator) (func(), error) {
	ctx, cancel := context.WithTimeout(ctx, migrationLockWait)
	defer cancel()
	if IsPostgres(db) {
		// A session lock dies with its connection, so a killed migration
		// never leaves it behind.
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext('papergraph migrations'))"); err != nil {
			conn.Close()
			return nil, fmt.Errorf("migrate: waiting for another process's migration: %w", err)
		}
		return func() {
			conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock(hashtext('papergraph migrations'))") //nolint:errcheck // closing the connection releases it too
			conn.Close()
		}, nil
	}
	for {
		err := m.Lock(ctx)
		if err == nil {
			return func() { m.Unlock(context.Background()) }, nil //nolint:errcheck // nothing to do if the row stays; the message below explains it
		}
		if err := readOnly(err); errors.Is(err, ErrReadOnly) {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("migrate: another process has been migrating this database for 30 s; " +
				"if none is running, an earlier migration was killed: delete the row of the table bun_migration_locks")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Pending returns how many migrations have not been applied.
func Pending(ctx context.Context, db *bun.DB) (int, error) {
	ms, err := migrations(db)
	if err != nil {
		return 0, err
	}
	return unapplied(ctx, migrate.NewMigrator(db, ms))
}

func unapplied(ctx context.Context, m *migrate.Migrator) (int, error) {
	ms, err := m.MigrationsWithStatus(ctx)
	if err != nil {
		return 0, err
	}
	return len(ms.Unapplied()), nil
}
