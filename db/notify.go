package db

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
)

// NotifyChannel is the PostgreSQL channel writers' commits are announced
// on (see package notify).
const NotifyChannel = "papergraph"

// Notify sends payload on NotifyChannel (PostgreSQL only); the listeners
// hear it when the statement's transaction, if any, commits.
func Notify(ctx context.Context, idb bun.IDB, payload string) error {
	_, err := idb.ExecContext(ctx, "SELECT pg_notify(?, ?)", NotifyChannel, payload)
	return err
}

// Listen connects to the PostgreSQL database dsn on a connection of its
// own, listens on NotifyChannel and calls heard with every payload, until
// ctx ends or the connection fails: it returns ctx's error or the
// connection's. ready, when not nil, is called once the LISTEN holds.
func Listen(ctx context.Context, dsn string, ready func(), heard func(payload string)) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		return err
	}
	if ready != nil {
		ready()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		heard(n.Payload)
	}
}
