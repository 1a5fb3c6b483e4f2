package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Replica defaults: how far behind the primary a replica may fall before
// reads skip it, and how often each replica's state is checked.
const (
	DefaultReplicaMaxLag   = 10 * time.Second
	DefaultReplicaInterval = time.Second
)

// ReplicaOptions tune Replicas. Zero values take the defaults.
type ReplicaOptions struct {
	MaxLag   time.Duration // skip a replica whose replay is further behind
	Interval time.Duration // check every replica this often
}

// Replicas is the bun.ConnResolver of a PostgreSQL reader pool with
// streaming replicas (OpenReplicated): each statement of the pool goes to
// the next replica in turn that answers and is at most MaxLag behind the
// primary, and to the primary when none is. A statement that fails because
// its replica went away (connection refused or reset, shut down,
// cancelled by a recovery conflict) runs again on the primary, once, and
// the replica is skipped from then on until a check finds it back, so a
// replica that stops fails no request.
//
// Statements that must see what was just written (a transaction, or a
// context from Primary) go to the primary.
type Replicas struct {
	primary *sql.DB
	list    []*replica
	opts    ReplicaOptions
	next    atomic.Uint64

	mu      sync.Mutex
	samples []lsnSample // the primary's WAL position over time, oldest first
	stop    context.CancelFunc
	done    chan struct{}
}

// replica is one streaming replica and what the last check found.
type replica struct {
	name      string // host:port, safe to show
	db        *sql.DB
	up        atomic.Bool
	lag       atomic.Int64 // nanoseconds; -1 when unknown
	failovers atomic.Uint64

	mu     sync.Mutex
	reason string // why it is skipped, for the log and /readyz
}

// lsnSample is the primary's WAL position at a moment.
type lsnSample struct {
	at  time.Time
	lsn uint64
}

// ReplicaStatus is what Replicas.Status reports of one replica.
type ReplicaStatus struct {
	Name      string
	Up        bool          // reads go to it
	Lag       time.Duration // behind the primary; -1 when unknown
	Failovers uint64        // statements it failed that ran again on the primary
	Reason    string        // why it is skipped, when it is
}

type primaryKey struct{}

// Primary returns a context whose statements on a replicated reader go to
// the primary, for reads that must see a write made just before.
func Primary(ctx context.Context) context.Context {
	return context.WithValue(ctx, primaryKey{}, true)
}

// OpenReplicated is OpenReader for a PostgreSQL primary with streaming
// replicas: the pool's statements are spread over the replicas that keep
// up, as Replicas describes. The replicas' sessions are read-only and
// under ReadStatementTimeout like the primary's. Closing the pool closes
// the replicas and stops their checks.
func OpenReplicated(dsn string, conns int, replicaDSNs []string, opts ReplicaOptions) (*bun.DB, *Replicas, error) {
	if !IsPostgresDSN(dsn) {
		return nil, nil, errors.New("read replicas need a PostgreSQL primary")
	}
	primary, err := openPostgres(dsn, conns, true)
	if err != nil {
		return nil, nil, err
	}
	if opts.MaxLag <= 0 {
		opts.MaxLag = DefaultReplicaMaxLag
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultReplicaInterval
	}
	r := &Replicas{primary: primary, opts: opts, done: make(chan struct{})}
	for _, rdsn := range replicaDSNs {
		if !IsPostgresDSN(rdsn) {
			r.closeReplicas()
			primary.Close()
			return nil, nil, fmt.Errorf("replica %s: not a PostgreSQL DSN", hostPort(rdsn))
		}
		sqldb, err := openPostgres(rdsn, conns, true)
		if err != nil {
			r.closeReplicas()
			primary.Close()
			return nil, nil, fmt.Errorf("replica %s: %w", hostPort(rdsn), err)
		}
		rep := &replica{name: hostPort(rdsn), db: sqldb, reason: "not checked yet"}
		rep.lag.Store(-1)
		r.list = append(r.list, rep)
	}
	r.check(context.Background())
	ctx, stop := context.WithCancel(context.Background())
	r.stop = stop
	go r.watch(ctx)
	return newDB(primary, pgdialect.New(), bun.WithConnResolver(r)), r, nil
}

// ResolveConn implements bun.ConnResolver.
func (r *Replicas) ResolveConn(ctx context.Context, _ bun.Query) bun.IConn {
	if on, _ := ctx.Value(primaryKey{}).(bool); on || len(r.list) == 0 {
		return nil
	}
	n := uint64(len(r.list))
	start := r.next.Add(1)
	for i := range n {
		if rep := r.list[(start+i)%n]; rep.up.Load() {
			return failover{rep: rep, primary: r.primary}
		}
	}
	return nil
}

// Close implements bun.ConnResolver: it stops the checks and closes the
// replicas (bun closes the primary).
func (r *Replicas) Close() error {
	if r.stop != nil {
		r.stop()
		<-r.done
	}
	return r.closeReplicas()
}

func (r *Replicas) closeReplicas() error {
	var errs []error
	for _, rep := range r.list {
		errs = append(errs, rep.db.Close())
	}
	return errors.Join(errs...)
}

// Status reports each replica's state as of its last check, in the order
// they were given.
func (r *Replicas) Status() []ReplicaStatus {
	out := make([]ReplicaStatus, len(r.list))
	for i, rep := range r.list {
		rep.mu.Lock()
		reason := rep.reason
		rep.mu.Unlock()
		up := rep.up.Load()
		if up {
			reason = ""
		}
		out[i] = ReplicaStatus{Name: rep.name, Up: up, Lag: time.Duration(rep.lag.Load()),
			Failovers: rep.failovers.Load(), Reason: reason}
	}
	return out
}

// watch checks the replicas every Interval until ctx ends.
func (r *Replicas) watch(ctx context.Context) {
	defer close(r.done)
	tick := time.NewTicker(r.opts.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.check(ctx)
		}
	}
}

// check samples the primary's WAL position and then each replica's replay
// position, and from the two sets each replica's lag and state.
func (r *Replicas) check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, max(r.opts.Interval, time.Second))
	defer cancel()
	now := time.Now()
	var primaryLSN string
	known := r.primary.QueryRowContext(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&primaryLSN) == nil
	var samples []lsnSample
	if lsn, err := parseLSN(primaryLSN); known && err == nil {
		samples = r.sample(now, lsn)
	} else {
		known = false
	}
	var wg sync.WaitGroup
	for _, rep := range r.list {
		wg.Go(func() { rep.check(ctx, now, samples, known, r.opts.MaxLag) })
	}
	wg.Wait()
}

// sample records the primary at lsn at now and returns the samples kept:
// those of the last two MaxLag, enough to tell any lag up to the bound.
func (r *Replicas) sample(now time.Time, lsn uint64) []lsnSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, lsnSample{at: now, lsn: lsn})
	keep := now.Add(-2*r.opts.MaxLag - r.opts.Interval)
	i := 0
	for i < len(r.samples)-1 && r.samples[i].at.Before(keep) {
		i++
	}
	r.samples = append(r.samples[:0], r.samples[i:]...)
	return append([]lsnSample(nil), r.samples...)
}

// check asks one replica how far it has replayed. Its lag is the age of
// the newest primary position it has reached (zero when it has reached
// the latest), so an idle primary makes no lag and a replay paused under
// a busy one grows its lag by the clock.
func (rep *replica) check(ctx context.Context, now time.Time, samples []lsnSample, known bool, maxLag time.Duration) {
	var recovering bool
	var replay sql.NullString
	err := rep.db.QueryRowContext(ctx, "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text").Scan(&recovering, &replay)
	switch {
	case err != nil:
		rep.skip("does not answer")
		return
	case !recovering:
		// Promoted: it is a primary of its own now, as current as any.
		rep.lag.Store(0)
		rep.up.Store(true)
		return
	case !known || !replay.Valid:
		rep.lag.Store(-1)
		rep.skip("lag unknown")
		return
	}
	at, err := parseLSN(replay.String)
	if err != nil {
		rep.lag.Store(-1)
		rep.skip("lag unknown")
		return
	}
	lag := now.Sub(samples[0].at) // behind every sample kept: at least this
	for i := len(samples) - 1; i >= 0; i-- {
		if samples[i].lsn <= at {
			lag = now.Sub(samples[i].at)
			break
		}
	}
	if samples[len(samples)-1].lsn <= at {
		lag = 0
	}
	rep.lag.Store(int64(lag))
	if lag > maxLag {
		rep.skip(fmt.Sprintf("lagging %s behind the primary (bound %s)", lag.Round(100*time.Millisecond), maxLag))
		return
	}
	rep.up.Store(true)
}

// skip takes the replica out of the rotation, saying why.
func (rep *replica) skip(reason string) {
	rep.mu.Lock()
	rep.reason = reason
	rep.mu.Unlock()
	rep.up.Store(false)
}

// failover is the bun.IConn ResolveConn hands out: the replica, with the
// primary behind it for statements the replica could not run.
type failover struct {
	rep     *replica
	primary *sql.DB
}

func (f failover) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := f.rep.db.QueryContext(ctx, query, args...)
	if err != nil && f.retry(ctx, err) {
		return f.primary.QueryContext(ctx, query, args...)
	}
	return rows, err
}

func (f failover) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := f.rep.db.ExecContext(ctx, query, args...)
	if err != nil && f.retry(ctx, err) {
		return f.primary.ExecContext(ctx, query, args...)
	}
	return res, err
}

// QueryRowContext serves bun's Count and Exists, whose error shows only at
// Scan: the replica is asked only while a check finds it up.
func (f failover) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return f.rep.db.QueryRowContext(ctx, query, args...)
}

// retry reports whether a statement that failed on the replica with err
// should run on the primary, and if so takes the replica out of the
// rotation until the next check finds it well.
func (f failover) retry(ctx context.Context, err error) bool {
	if ctx.Err() != nil || !lostReplica(err) {
		return false
	}
	f.rep.failovers.Add(1)
	f.rep.skip("a statement failed on it")
	return true
}

// lostReplica reports whether err says the replica, rather than the
// statement, failed: a connection that could not be made or was lost, a
// server shutting down, or a statement cancelled because it held up WAL
// replay (a recovery conflict). A statement timeout or a bad query is the
// statement's own and would fail on the primary too.
func lostReplica(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return true
	}
	switch {
	case strings.HasPrefix(pgErr.Code, "08"): // connection exception
		return true
	case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutdown, crash, cannot connect now
		return true
	case pgErr.Code == "40001": // on a standby: cancelled by a conflict with recovery
		return true
	}
	return false
}

// parseLSN reads a PostgreSQL WAL position, "16/B374D848".
func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("not a WAL position: %q", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, err
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, err
	}
	return h<<32 | l, nil
}

// hostPort names a PostgreSQL DSN by its host and port, which are safe to
// show where the DSN (with its password) is not.
func hostPort(dsn string) string {
	if cfg, err := pgx.ParseConfig(dsn); err == nil {
		return fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	}
	if u, err := url.Parse(dsn); err == nil && u.Host != "" {
		return u.Host
	}
	return "replica"
}

// IsPostgresDSN reports whether dsn names a PostgreSQL database.
func IsPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openPostgres opens a pool of conns connections (0: PostgresConns); read
// makes its sessions read-only and under ReadStatementTimeout.
func openPostgres(dsn string, conns int, read bool) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	if conns <= 0 {
		conns = PostgresConns
	}
	// No JIT compilation: papergraph's statements are short, and their
	// cost estimates count work they never do (the lower bands of a
	// search's candidates, skipped at run time), so PostgreSQL compiled
	// them, for far longer than they run. A DSN that sets jit keeps its
	// own.
	if _, set := cfg.RuntimeParams["jit"]; !set {
		cfg.RuntimeParams["jit"] = "off"
	}
	if read {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
		if _, set := cfg.RuntimeParams["statement_timeout"]; !set {
			cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(ReadStatementTimeout.Milliseconds(), 10)
		}
		// Generic plans: a statement the API sends binds its keys (see
		// params.go), and pgx prepares it once per connection, but
		// PostgreSQL planned it again at every run, because a custom plan
		// for the few keys at hand looks cheaper than the generic one
		// and plan_cache_mode auto then keeps choosing custom plans, so
		// planning cost more than running. Every such statement reads
		// by index from its keys, whatever they are, so one generic plan
		// serves all. A DSN that sets plan_cache_mode keeps its own.
		if _, set := cfg.RuntimeParams["plan_cache_mode"]; !set {
			cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
		}
	}
	sqldb := openPGX(*cfg, !read)
	// As many idle connections as open ones: the default of two would
	// close and reopen connections under any steady load.
	sqldb.SetMaxOpenConns(conns)
	sqldb.SetMaxIdleConns(conns)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	return sqldb, nil
}
