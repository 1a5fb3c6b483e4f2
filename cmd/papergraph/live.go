package main

import (
	"context"
	"log/slog"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/notify"
)

// writerBus is the bus a command that writes dsn announces its commits
// on: PostgreSQL's pg_notify through bdb, which every server listening on
// the database hears; nil on SQLite, whose servers hear only their own
// harvest (see serveBus).
func writerBus(dsn string, bdb *bun.DB) *notify.Bus {
	if db.IsPostgresDSN(dsn) {
		return notify.NewPostgres(bdb)
	}
	return nil
}

// serveBus is serve's bus: on PostgreSQL one that publishes through
// publish and listens on dsn until it is closed, so that the server
// hears every writer of the database; on SQLite one in process, which
// hears the server's own harvest only. Serve closes it once the server
// has shut down, which waits for its listener to end.
func serveBus(dsn string, publish bun.IDB, logger *slog.Logger) *notify.Bus {
	if !db.IsPostgresDSN(dsn) {
		return notify.NewLocal()
	}
	bus := notify.NewPostgres(publish)
	bus.Start(dsn, logger, nil)
	return bus
}

// publisher is an ingest OnCommit that announces each commit on bus; nil
// when bus is.
func publisher(ctx context.Context, bus *notify.Bus, logger *slog.Logger) func(papers, researchers []int64) {
	if bus == nil {
		return nil
	}
	return func(papers, researchers []int64) {
		if err := bus.Publish(ctx, papers, researchers); err != nil {
			logger.Warn("notify: could not announce a commit", "err", err)
		}
	}
}
