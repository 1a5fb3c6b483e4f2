// Package db is papergraph's storage: bun models, the schema and its
// migrations, and the batch reads the API's dataloaders call. The same code
// runs on SQLite (the embedded default) and PostgreSQL.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// MaxCoauthorPaperAuthors bounds the papers that make co-author links:
// a paper with more authors (a large collaboration) would tie thousands
// of people to each other by one paper and drown every network. Such
// papers still count everywhere else.
const MaxCoauthorPaperAuthors = 100

// DefaultDSN is the database used when none is given: a SQLite file in the
// working directory.
const DefaultDSN = "papergraph.db"

// Open connects to the database named by dsn: "postgres://…" or
// "postgresql://…" is PostgreSQL; "sqlite:PATH" or a plain path is SQLite,
// with SQLite's URI parameters after a "?" (see sqliteDSN): "?mode=ro"
// opens it read-only, "?immutable=1" also for a file on read-only media.
// It does not migrate; call Migrate.
func Open(dsn string) (*bun.DB, error) {
	if dsn == "" {
		dsn = DefaultDSN
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sqldb, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, err
		}
		sqldb.SetMaxOpenConns(16)
		return bun.NewDB(sqldb, pgdialect.New()), nil
	}
	path, params, readOnly := sqliteDSN(strings.TrimPrefix(dsn, "sqlite:"))
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	// WAL lets readers run beside the one writer; busy_timeout makes a
	// second writer wait instead of failing at once; a 64 MiB page cache
	// keeps the indexes an import and the derived figures walk in memory.
	// A read-only database keeps the journal mode it has (setting it
	// writes) and takes no write lock.
	writable := "&_pragma=journal_mode(WAL)"
	txlock := "&_txlock=immediate"
	if readOnly {
		writable, txlock = "", ""
	}
	sqldb, err := sql.Open("sqlite", "file:"+path+"?"+params+
		"_pragma=foreign_keys(1)"+writable+"&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)"+
		"&_pragma=cache_size(-65536)&_pragma=temp_store(MEMORY)"+txlock)
	if err != nil {
		return nil, err
	}
	// SQLite allows one writer; a single connection also keeps the
	// per-connection pragmas above in force for every statement.
	sqldb.SetMaxOpenConns(1)
	return bun.NewDB(sqldb, sqlitedialect.New()), nil
}

// IsPostgres reports whether db talks to PostgreSQL.
func IsPostgres(db bun.IDB) bool { return db.Dialect().Name() == dialect.PG }

// Ping checks that the database answers and its schema is current.
func Ping(ctx context.Context, db *bun.DB) error {
	if err := db.PingContext(ctx); err != nil {
		return err
	}
	pending, err := Pending(ctx, db)
	if err != nil {
		return err
	}
	if pending > 0 {
		return fmt.Errorf("%d migrations not applied", pending)
	}
	return nil
}

// StatementCounter is a bun query hook that counts every statement sent
// to the database.
type StatementCounter struct{ n atomic.Int64 }

// BeforeQuery implements bun.QueryHook.
func (c *StatementCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	c.n.Add(1)
	return ctx
}

// AfterQuery implements bun.QueryHook.
func (c *StatementCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// Count returns the number of statements seen so far.
func (c *StatementCounter) Count() int64 { return c.n.Load() }
