package db

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
)

// SQLite compiles a statement's text into a program before it runs it,
// and modernc's driver compiles every query afresh: for the README query,
// whose statements are long (a page per parent, joined by UNION ALL),
// compiling is a large share of a request's work. The SQLite pools that Open and
// OpenReader make therefore keep, on each connection, the compiled
// statements whose keys they bind (see bound), batch reads and writes by
// lists of keys: their text depends only on the shape of the statement
// (how many parents, which page), so a connection compiles each shape
// once.

// A connection keeps at most cachedStatements compiled statements, of at
// most cachedText bytes of SQL in all, the least recently used going
// first. A compiled statement takes an order of magnitude more of SQLite's
// memory than its text, outside Go's heap, and a client chooses the texts
// (page sizes, cursors, categories are written into them), so the bound
// is by size, which bounds each connection's compiled programs too.
const (
	cachedStatements = 256
	cachedText       = 1 << 20
)

// cachingConnector opens SQLite connections through drv, each keeping its
// compiled statements (cachingConn).
type cachingConnector struct {
	drv driver.Driver
	dsn string
}

// openSQLite is the pool of dsn's SQLite connections through the
// registered driver, each keeping its compiled statements.
func openSQLite(dsn string) (*sql.DB, error) {
	probe, err := sql.Open("sqlite", dsn) // opens nothing: a way to the registered driver
	if err != nil {
		return nil, err
	}
	drv := probe.Driver()
	probe.Close()
	return sql.OpenDB(cachingConnector{drv: drv, dsn: dsn}), nil
}

func (c cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	cc, ok := conn.(sqliteConn)
	if !ok {
		conn.Close()
		return nil, errors.New("sqlite: the driver's connection lacks the context methods")
	}
	return &cachingConn{sqliteConn: cc, stmts: map[string]*list.Element{}, lru: list.New()}, nil
}

// Driver returns the driver under a type of its own, by which binding
// knows the pool.
func (c cachingConnector) Driver() driver.Driver { return cachingDriver{c.drv} }

type cachingDriver struct{ driver.Driver }

// sqliteConn is what database/sql uses of modernc's connection, which
// cachingConn passes on.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is a SQLite connection whose statements with bound
// parameters (in their context, see bound) run as compiled statements it
// keeps, reads and writes alike.
// database/sql uses a connection from one goroutine at a time, but a
// transaction may read a statement while an earlier read of the same text
// is still open: that one runs as a statement of its own, closed with its
// rows.
type cachingConn struct {
	sqliteConn
	stmts map[string]*list.Element // of *cachedStmt, by SQL text
	lru   *list.List               // most recently used first
	text  int                      // bytes of SQL kept
}

type cachedStmt struct {
	query string
	stmt  driver.Stmt
	busy  bool // its rows are open
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	named, ok := boundArgs(ctx, args)
	if !ok {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := cs.stmt.(driver.StmtQueryContext).QueryContext(ctx, named)
	if err != nil {
		// A statement that failed (a cancelled context, a busy database)
		// is not kept: the next read compiles it afresh.
		c.forget(cs)
		c.release(cs)
		return nil, err
	}
	return &cachedRows{Rows: rows, release: func() { c.release(cs) }}, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	named, ok := boundArgs(ctx, args)
	if !ok {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	defer c.release(cs)
	res, err := cs.stmt.(driver.StmtExecContext).ExecContext(ctx, named)
	if err != nil {
		c.forget(cs) // as in QueryContext
	}
	return res, err
}

// stmt returns the compiled statement of query, marked busy: the kept
// one when it is free, else a new one, kept if there is room.
func (c *cachingConn) stmt(ctx context.Context, query string) (*cachedStmt, error) {
	if e, ok := c.stmts[query]; ok {
		cs := e.Value.(*cachedStmt)
		if !cs.busy {
			c.lru.MoveToFront(e)
			cs.busy = true
			return cs, nil
		}
	}
	st, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	cs := &cachedStmt{query: query, stmt: st, busy: true}
	if _, kept := c.stmts[query]; !kept && len(query) <= cachedText/8 {
		c.evict(len(query))
		if c.lru.Len() < cachedStatements && c.text+len(query) <= cachedText {
			c.stmts[query] = c.lru.PushFront(cs)
			c.text += len(query)
		}
	}
	return cs, nil
}

// evict closes the least recently used free statements until there is
// room for one more of n bytes.
func (c *cachingConn) evict(n int) {
	for e := c.lru.Back(); e != nil && (c.lru.Len() >= cachedStatements || c.text+n > cachedText); {
		prev := e.Prev()
		if cs := e.Value.(*cachedStmt); !cs.busy {
			c.forget(cs)
			cs.stmt.Close()
		}
		e = prev
	}
}

// forget drops cs from the statements the connection keeps.
func (c *cachingConn) forget(cs *cachedStmt) {
	if e, ok := c.stmts[cs.query]; ok && e.Value.(*cachedStmt) == cs {
		c.lru.Remove(e)
		delete(c.stmts, cs.query)
		c.text -= len(cs.query)
	}
}

// release marks cs free once its rows are closed, and closes it if the
// connection does not keep it.
func (c *cachingConn) release(cs *cachedStmt) {
	cs.busy = false
	if e, ok := c.stmts[cs.query]; !ok || e.Value.(*cachedStmt) != cs {
		cs.stmt.Close()
	}
}

func (c *cachingConn) Close() error {
	for e := c.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*cachedStmt).stmt.Close()
	}
	c.stmts, c.lru, c.text = nil, list.New(), 0
	return c.sqliteConn.Close()
}

// cachedRows are the rows of a kept statement, which they free when
// closed.
type cachedRows struct {
	driver.Rows
	release func()
	done    bool
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	if !r.done {
		r.done = true
		r.release()
	}
	return err
}
