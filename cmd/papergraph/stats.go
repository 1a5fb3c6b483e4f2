package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/papergraph/papergraph/db"
)

func cmdStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("stats", "stats [--db DSN] [--json]", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	bdb, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	s, err := db.ReadStats(ctx, bdb)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(s)
	}
	fmt.Fprintf(stdout, "papers        %d\nresearchers   %d\ninstitutions  %d\nauthorships   %d\ncitations     %d\n",
		s.Papers, s.Researchers, s.Institutions, s.Authorships, s.Citations)
	return nil
}
