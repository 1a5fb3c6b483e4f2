// Package dbtest gives tests fresh, migrated databases: SQLite always, and
// PostgreSQL when PAPERGRAPH_TEST_POSTGRES holds a DSN and the run is not
// -short. Each database is a copy of one migrated once, made for one test
// and removed after it.
package dbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
			dsn := NewMigrated(t, kind)
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
		return "sqlite:" + filepath.Join(tempDir(t), "test.db")
	}
	return newPostgres(t, "template1")
}

// NewMigrated is New for a database that Open will find migrated: a
// database takes longer to migrate than to copy, so it is a copy of one
// that this test process migrated once (on PostgreSQL, a template
// database kept for later processes too).
func NewMigrated(t testing.TB, kind string) string {
	t.Helper()
	if kind == "sqlite" {
		return newSQLite(t)
	}
	// Test processes of another schema version on the same server (a
	// branch beside this one) drop this version's template as old: it is
	// built again then.
	for rebuilt := false; ; rebuilt = true {
		tpl, err := migratedTemplate(rebuilt)
		if err != nil {
			t.Fatalf("migrated template database: %v", err)
		}
		dsn, err := createPostgres(t, tpl)
		if err == nil {
			return dsn
		}
		if rebuilt || !strings.Contains(err.Error(), "SQLSTATE 3D000") {
			t.Fatalf("create test database: %v", err)
		}
	}
}

// newSQLite writes the migrated SQLite database's bytes to a file of t's
// and returns its DSN.
func newSQLite(t testing.TB) string {
	t.Helper()
	image, err := sqliteImage()
	if err != nil {
		t.Fatalf("migrated SQLite database: %v", err)
	}
	return writeSQLite(t, image)
}

// sqliteDir is the directory test databases are written under: TMPDIR
// when it is set; else /dev/shm, a file system in memory, when there is
// one, where the fsync of SQLite's checkpoints waits for no disk (no test
// database needs to outlive the machine); else the system's temporary
// directory.
var sqliteDir = sync.OnceValue(func() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	const shm = "/dev/shm"
	if probe, err := os.MkdirTemp(shm, "papergraph-dbtest-"); err == nil {
		os.Remove(probe)
		return shm
	}
	return os.TempDir()
})

// tempDir is t.TempDir under sqliteDir: a new directory, removed when t
// ends.
func tempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(sqliteDir(), "papergraph-dbtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove test database: %v", err)
		}
	})
	return dir
}

// writeSQLite writes the bytes of a SQLite database to a file of t's and
// returns its DSN.
func writeSQLite(t testing.TB, image []byte) string {
	t.Helper()
	path := filepath.Join(tempDir(t), "test.db")
	if err := os.WriteFile(path, image, 0o644); err != nil {
		t.Fatal(err)
	}
	return "sqlite:" + path
}

// sqliteImage returns the bytes of a SQLite database file migrated by
// this build's migrations, built once a process. It is kept in memory, so
// that no file outlives the process. The database is checkpointed and
// closed before it is read, so that the main file holds all of it.
var sqliteImage = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp(sqliteDir(), "papergraph-dbtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	bdb, err := db.Open("sqlite:" + path)
	if err != nil {
		return nil, err
	}
	err = db.Migrate(context.Background(), bdb)
	if err == nil {
		_, err = bdb.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	}
	if err = errors.Join(err, bdb.Close()); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// newPostgres creates a PostgreSQL database for t as a copy of template,
// dropped when t ends, and returns its DSN.
func newPostgres(t testing.TB, template string) string {
	t.Helper()
	dsn, err := createPostgres(t, template)
	if err != nil {
		t.Fatalf("create test database: %v", err)
	}
	return dsn
}

// createPostgres is newPostgres returning the error of CREATE DATABASE.
func createPostgres(t testing.TB, template string) (string, error) {
	t.Helper()
	name := fmt.Sprintf("papergraph_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, seq.Add(1))
	if err := adminExec("CREATE DATABASE " + name + " TEMPLATE " + template); err != nil {
		return "", err
	}
	t.Cleanup(func() {
		if err := adminExec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	dsn, err := postgresDSN(name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn, nil
}

// migratedTemplate returns the name of a PostgreSQL database migrated by
// this build's migrations, creating it when none is. It is named after
// db.SchemaVersion and kept, like a build cache, for the next test
// processes; one of an older version is dropped. Each process builds its
// own under a name of its own and renames it when it is done, so that a
// half-built one is never copied. rebuild asks again after the one found
// went missing.
func migratedTemplate(rebuild bool) (string, error) {
	templateMu.Lock()
	defer templateMu.Unlock()
	if templateName != "" && !rebuild {
		return templateName, nil
	}
	name, err := buildTemplate()
	if err == nil {
		templateName = name
	}
	return name, err
}

var (
	templateMu   sync.Mutex
	templateName string // built or found by this process
)

func buildTemplate() (string, error) {
	name := "papergraph_template_" + db.SchemaVersion()
	conn, err := sql.Open("pgx", os.Getenv(PostgresEnv))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	var old []string
	rows, err := conn.Query(`SELECT datname FROM pg_database WHERE datname ~ '^papergraph_template_[0-9a-f]+$'`)
	if err != nil {
		return "", err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return "", err
		}
		old = append(old, n)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	for _, n := range old {
		if n == name {
			return name, nil
		}
		conn.Exec("DROP DATABASE IF EXISTS " + n) //nolint:errcheck // another process may be copying it; it goes next time
	}
	building := fmt.Sprintf("%s_%d", name, os.Getpid())
	if _, err := conn.Exec("CREATE DATABASE " + building); err != nil {
		return "", err
	}
	if err := migrate(building); err != nil {
		conn.Exec("DROP DATABASE IF EXISTS " + building + " WITH (FORCE)") //nolint:errcheck // reporting err matters more
		return "", err
	}
	if _, err := conn.Exec("ALTER DATABASE " + building + " RENAME TO " + name); err != nil {
		// Another process was quicker: use its template.
		conn.Exec("DROP DATABASE IF EXISTS " + building) //nolint:errcheck // a leftover costs disk, not correctness
	}
	return name, nil
}

// migrate migrates the PostgreSQL database name and closes every
// connection to it, as a template must have none.
func migrate(name string) error {
	dsn, err := postgresDSN(name)
	if err != nil {
		return err
	}
	bdb, err := db.Open(dsn)
	if err != nil {
		return err
	}
	err = db.Migrate(context.Background(), bdb)
	return errors.Join(err, bdb.Close())
}

// adminExec runs stmt on the PostgreSQL database of PostgresEnv.
func adminExec(stmt string) error {
	conn, err := sql.Open("pgx", os.Getenv(PostgresEnv))
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Exec(stmt)
	return err
}

// postgresDSN is PostgresEnv's DSN for the database name.
func postgresDSN(name string) (string, error) {
	u, err := url.Parse(os.Getenv(PostgresEnv))
	if err != nil {
		return "", fmt.Errorf("%s: %w", PostgresEnv, err)
	}
	u.Path = "/" + name
	return u.String(), nil
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

// ReplicaEnv names the environment variable with the DSN of a streaming
// replica of PostgresEnv's server (.ci/pg-replica starts one).
const ReplicaEnv = "PAPERGRAPH_TEST_POSTGRES_REPLICA"

// Replicated gives t a fresh, migrated PostgreSQL database and a DSN that
// reads it on the replica of ReplicaEnv, once the replica has it. It skips
// t when the run is -short or either variable is unset.
func Replicated(t testing.TB) (primary, replica string, bdb *bun.DB) {
	t.Helper()
	if testing.Short() || os.Getenv(PostgresEnv) == "" || os.Getenv(ReplicaEnv) == "" {
		t.Skipf("needs %s and %s, and no -short", PostgresEnv, ReplicaEnv)
	}
	primary = NewMigrated(t, "postgres")
	bdb = Open(t, primary)
	p, err := url.Parse(primary)
	if err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(os.Getenv(ReplicaEnv))
	if err != nil {
		t.Fatalf("%s: %v", ReplicaEnv, err)
	}
	r.Path = p.Path
	replica = r.String()
	conn, err := sql.Open("pgx", replica)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := conn.Ping()
		if err == nil {
			return primary, replica, bdb
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica has not replayed the test database's creation: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Log is a bun query hook that keeps the statements sent, spaces folded,
// so that a test that counts them can say which ones it saw.
type Log struct {
	mu    sync.Mutex
	sqls  []string
	bound [][]any
}

// BeforeQuery implements bun.QueryHook.
func (l *Log) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

// AfterQuery implements bun.QueryHook.
func (l *Log) AfterQuery(ctx context.Context, ev *bun.QueryEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sqls = append(l.sqls, strings.Join(strings.Fields(ev.Query), " "))
	l.bound = append(l.bound, db.Bound(ctx))
}

// Take returns the statements logged since the last Take.
func (l *Log) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.sqls
	l.sqls, l.bound = nil, nil
	return out
}

// TakeBound is Take with each statement's bound parameters, which hold
// the keys a list statement reads (see db.Bound), written after it as
// " -- [p1 p2 …]" where it has any.
func (l *Log) TakeBound() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.sqls))
	for i, s := range l.sqls {
		out[i] = s
		if len(l.bound[i]) > 0 {
			out[i] = fmt.Sprintf("%s -- %v", s, l.bound[i])
		}
	}
	l.sqls, l.bound = nil, nil
	return out
}
