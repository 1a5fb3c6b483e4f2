// Package db is papergraph's storage: bun models, the schema and its
// migrations, and the batch reads the API's dataloaders call. The same code
// runs on SQLite (the embedded default) and PostgreSQL.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	_ "github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" driver dbtest uses
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/schema"
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
// It is the writer: imports and migrations go through it (on SQLite it is
// the one connection that may write). It does not migrate; call Migrate.
func Open(dsn string) (*bun.DB, error) {
	return open(dsn, 0, false)
}

// Pool sizes: SQLiteReaders is OpenReader's default on SQLite (whose
// writer has one connection), PostgresConns the default of either pool on
// PostgreSQL.
const (
	SQLiteReaders = 4
	PostgresConns = 16
)

// readerMmap is the most of the database file a SQLite reader maps into
// memory rather than reading with pread into a page cache of its own.
// Without the map every reader keeps its own copy of the pages it has
// read, so each of them warms up apart and the readers of a busy server
// read, copy and cache the same pages again, all through one page-cache
// mutex of the process; through the map they share the operating
// system's one copy, and a page read costs no system call. SQLite caps
// the map at its build's maximum (2 GiB on Linux); a larger file is read
// through the page cache beyond it.
const readerMmap = 1 << 31

// ReadStatementTimeout is PostgreSQL's statement_timeout on the serving
// connections, unless the DSN sets one: a safety net for a statement
// whose context never ends. The server's own deadlines are shorter.
const ReadStatementTimeout = 30 * time.Second

// OpenReader opens the pool the API serves from: conns connections (0
// means SQLiteReaders or PostgresConns) that may only read. On SQLite
// they run beside Open's writer thanks to WAL, with its pragmas and
// query_only; on PostgreSQL each session is read-only and runs under
// ReadStatementTimeout. A SQLite DSN with "?mode=ro" or "?immutable=1"
// serves a read-only file the same way, leaving its journal mode alone.
// An in-memory SQLite database cannot be shared between connections, so
// it has no reader.
func OpenReader(dsn string, conns int) (*bun.DB, error) {
	return open(dsn, conns, true)
}

// open is the one connection builder behind Open and OpenReader: read
// says whether the pool is a reader, conns how many connections it holds
// (0: the default for its role and database).
func open(dsn string, conns int, read bool) (*bun.DB, error) {
	if dsn == "" {
		dsn = DefaultDSN
	}
	if IsPostgresDSN(dsn) {
		sqldb, err := openPostgres(dsn, conns, read)
		if err != nil {
			return nil, err
		}
		return newDB(sqldb, pgdialect.New()), nil
	}
	path, params, readOnly := sqliteDSN(strings.TrimPrefix(dsn, "sqlite:"))
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	// WAL lets readers run beside the one writer; busy_timeout makes a
	// second writer wait instead of failing at once; a 64 MiB page cache
	// keeps the indexes an import and the derived figures walk in memory.
	// modernc applies each _pragma to every connection it opens. A
	// read-only database keeps the journal mode it has (setting it writes)
	// and takes no write lock.
	pragmas := "_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)" +
		"&_pragma=cache_size(-65536)"
	if !readOnly {
		pragmas += "&_pragma=journal_mode(WAL)"
	}
	switch {
	case read && (path == ":memory:" || strings.Contains(params, "mode=memory")):
		return nil, errors.New("sqlite: an in-memory database has no read pool; serve it from a file")
	case read:
		// Readers take no write lock, not even for a transaction. They
		// read the file through a memory map (see readerMmap).
		pragmas += "&_pragma=query_only(1)&_pragma=mmap_size(" + strconv.FormatInt(readerMmap, 10) + ")" +
			"&_pragma=temp_store(MEMORY)"
		if conns <= 0 {
			conns = SQLiteReaders
		}
	default:
		// The writer's temporary data stays in files (which the
		// operating system caches): with temp_store MEMORY, SQLite's
		// sorter keeps a whole CREATE INDEX or large ORDER BY in memory
		// rather than in runs of the page cache's size, and an import's
		// bulk index builds would hold the archive's largest index.
		//
		// SQLite allows one writer; an immediate transaction takes the
		// write lock at BEGIN rather than failing at its first write.
		if !readOnly {
			pragmas += "&_txlock=immediate"
		}
		conns = 1
	}
	sqldb, err := openSQLite("file:" + uriPath(path) + "?" + params + pragmas)
	if err != nil {
		return nil, err
	}
	sqldb.SetMaxOpenConns(conns)
	sqldb.SetMaxIdleConns(conns)
	return newDB(sqldb, sqlitedialect.New()), nil
}

// uriPath escapes what SQLite's URI filenames read as syntax in a file
// path: % (an escape) and # (the start of a fragment, which cut a path
// such as "runs#2/papergraph.db" short and opened another file).
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "#", "%23").Replace(path)
}

// newDB wraps sqldb for bun, with the hook that keeps each context to its
// slot among the statements of its pool (see Scheduler).
func newDB(sqldb *sql.DB, d schema.Dialect, opts ...bun.DBOption) *bun.DB {
	bdb := bun.NewDB(sqldb, d, opts...)
	bdb.AddQueryHook(shareHook{})
	return bdb
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

// WithQueryHook returns bdb.WithQueryHook(hook), a copy of bdb whose
// statements hook sees, bulk writes' included: InsertColumns and the
// functions beside it send theirs past bun, as prepared statements, and
// tell only the hooks given here (and those bdb had from here). A hook
// added with bun's own AddQueryHook or WithQueryHook sees every statement
// but those, and a copy that bun's WithQueryHook makes of the result
// tells its bulk statements to no hook.
func WithQueryHook(bdb *bun.DB, hook bun.QueryHook) *bun.DB {
	clone := bdb.WithQueryHook(hook)
	hooks := append(slices.Clip(observersOf(bdb)), hook)
	key := weak.Make(clone)
	observers.Store(key, hooks)
	// The entry goes with its database.
	runtime.AddCleanup(clone, func(key weak.Pointer[bun.DB]) { observers.Delete(key) }, key)
	return clone
}

// observers holds, by database, the hooks that WithQueryHook gave it, in
// the order bun runs them.
var observers sync.Map // weak.Pointer[bun.DB] → []bun.QueryHook

// observersOf returns the hooks that WithQueryHook gave bdb.
func observersOf(bdb *bun.DB) []bun.QueryHook {
	hooks, _ := observers.Load(weak.Make(bdb))
	h, _ := hooks.([]bun.QueryHook)
	return h
}

// StatementCounter is a bun query hook that counts every statement sent
// to the database; given with WithQueryHook, it counts those of bulk
// writes too.
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
