package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// One import at a time.
//
// An import (and migrate, which may end a bulk load) holds the import lock
// while it writes: on PostgreSQL a session advisory lock, on SQLite an
// flock on the file PATH.import-lock beside the database. Both die with
// the process, so a killed import never leaves one behind. The holder
// records its pid and start time where the next one can read them: in its
// session's application_name on PostgreSQL, in the lock file on SQLite.

// ImportHolder describes the process holding the import lock.
type ImportHolder struct {
	PID     int
	Started time.Time
}

// ImportRunningError says another process holds the import lock.
type ImportRunningError struct{ Holder ImportHolder }

func (e *ImportRunningError) Error() string {
	return fmt.Sprintf("another papergraph import is writing to this database (%s); "+
		"wait for it to finish, or stop it and run the import again", e.Holder)
}

func (h ImportHolder) String() string {
	if h.PID == 0 {
		return "pid unknown"
	}
	return fmt.Sprintf("pid %d, started %s", h.PID, h.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
}

// importLockKeys are the two int4 keys of the PostgreSQL advisory lock.
const importLockKeys = "1885827184, 2" // "pgrp", and the migration lock's sibling

// LockImport takes the import lock and returns its release, or an
// *ImportRunningError naming the process that holds it. It does not wait.
func LockImport(ctx context.Context, bdb *bun.DB) (release func(), err error) {
	if IsPostgres(bdb) {
		return lockImportPostgres(ctx, bdb)
	}
	path, err := importLockPath(ctx, bdb)
	if err != nil || path == "" {
		return func() {}, err
	}
	return lockFile(path)
}

// ImportRunning returns the holder of the import lock, or nil when no
// import is running. It writes nothing, so it works on a read-only database.
func ImportRunning(ctx context.Context, bdb *bun.DB) (*ImportHolder, error) {
	if IsPostgres(bdb) {
		return postgresImportHolder(ctx, bdb)
	}
	path, err := importLockPath(ctx, bdb)
	if err != nil || path == "" {
		return nil, err
	}
	return fileHolder(path)
}

// importLockPath returns the lock file of a SQLite database, or "" for an
// in-memory one.
func importLockPath(ctx context.Context, bdb *bun.DB) (string, error) {
	var rows []struct {
		Seq  int
		Name string
		File string
	}
	if err := bdb.NewRaw("PRAGMA database_list").Scan(ctx, &rows); err != nil {
		return "", err
	}
	for _, r := range rows {
		if r.Name == "main" && r.File != "" {
			return r.File + ".import-lock", nil
		}
	}
	return "", nil
}

// holderLine is what the lock's holder records about itself.
const holderLine = "papergraph import pid %d since %d"

func holderRecord() string { return fmt.Sprintf(holderLine, os.Getpid(), time.Now().Unix()) }

func parseHolder(s string) ImportHolder {
	var pid int
	var since int64
	if _, err := fmt.Sscanf(strings.TrimSpace(s), holderLine, &pid, &since); err != nil {
		return ImportHolder{}
	}
	return ImportHolder{PID: pid, Started: time.Unix(since, 0)}
}

func lockImportPostgres(ctx context.Context, bdb *bun.DB) (func(), error) {
	conn, err := bdb.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var got bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock("+importLockKeys+")").Scan(&got); err != nil {
		conn.Close()
		return nil, err
	}
	if !got {
		conn.Close()
		h, err := postgresImportHolder(ctx, bdb)
		if err != nil {
			return nil, err
		}
		if h == nil { // released in between
			h = &ImportHolder{}
		}
		return nil, &ImportRunningError{Holder: *h}
	}
	// The pool keeps a closed connection open, and the lock with it: a
	// lock that cannot be given back takes its connection out of the pool.
	release := func() {
		_, err := conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock("+importLockKeys+"), set_config('application_name', '', false)")
		if err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck // ErrBadConn is the point
		}
		conn.Close()
	}
	if _, err := conn.ExecContext(ctx, "SELECT set_config('application_name', ?, false)", holderRecord()); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

func postgresImportHolder(ctx context.Context, bdb *bun.DB) (*ImportHolder, error) {
	var app string
	err := bdb.NewRaw(`SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND (l.classid, l.objid, l.objsubid) = (`+importLockKeys+`, 2)
		  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(ctx, &app)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h := parseHolder(app)
	return &h, nil
}
