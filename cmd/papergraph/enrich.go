package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/papergraph/papergraph/enrich"
	"github.com/papergraph/papergraph/ingest"
)

func cmdEnrich(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("enrich", "enrich [--db DSN] [--openalex-url URL] [--s2-url URL] [--mailto ADDRESS] [--delay D]\n"+
		"       [--max-requests N] [--refresh AGE]\n\n"+
		"Asks OpenAlex and Semantic Scholar about the papers, newest first, and the researchers linked to their\n"+
		"profiles, and stores external ids, cited-by counts and the researchers' figures. A stopped run goes on\n"+
		"where it stopped. An empty URL skips that source. The Semantic Scholar API key is read from\n"+
		"$PAPERGRAPH_S2_KEY.", stderr)
	openAlexURL := fs.String("openalex-url", "https://api.openalex.org", "OpenAlex API base URL (empty: skip OpenAlex)")
	s2URL := fs.String("s2-url", "https://api.semanticscholar.org/graph/v1", "Semantic Scholar Graph API base URL (empty: skip it)")
	mailto := fs.String("mailto", os.Getenv("PAPERGRAPH_MAILTO"), "your e-mail address, for OpenAlex's polite pool (env PAPERGRAPH_MAILTO)")
	delay := fs.Duration("delay", time.Second, "least time between two requests")
	maxRequests := fs.Int("max-requests", 0, "stop after N requests, retries included (0: no cap)")
	refresh := fs.Duration("refresh", 0, "ask again about items last asked about longer ago than this (0: never)")
	tries := fs.Int("tries", 5, "attempts of a request that meets 429 or 503")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: enrich takes no arguments", errUsage)
	}
	if *refresh != 0 && *refresh < time.Second {
		return fmt.Errorf("%w: --refresh must be 0 or at least 1s", errUsage)
	}
	bdb, closeDB, err := openLocked(ctx, *dsn)
	if err != nil {
		return err
	}
	defer closeDB()
	announce := publisher(ctx, writerBus(*dsn, bdb), slog.New(slog.NewTextHandler(stderr, nil)))
	var onCommit func([]int64)
	if announce != nil {
		onCommit = func(researchers []int64) { announce(nil, researchers) }
	}
	sum, err := enrich.Run(ctx, bdb, enrich.Options{
		OpenAlexURL: *openAlexURL, S2URL: *s2URL, Mailto: *mailto, S2Key: os.Getenv("PAPERGRAPH_S2_KEY"),
		Delay: *delay, Tries: *tries, MaxRequests: *maxRequests, RefreshAge: *refresh,
		Bad:      func(e *ingest.RecordError) { fmt.Fprintln(stderr, "malformed:", e) },
		Log:      func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) },
		OnCommit: onCommit,
	})
	var asked []string
	for _, src := range slices.Sorted(maps.Keys(sum.Checked)) {
		asked = append(asked, fmt.Sprintf("%s %d", src, sum.Checked[src]))
	}
	requests := "requests"
	if sum.Requests == 1 {
		requests = "request"
	}
	fmt.Fprintf(stdout, "enrich: %d %s; asked about: %s; read %d, inserted %d, updated %d, unchanged %d, malformed %d\n",
		sum.Requests, requests, cmp.Or(strings.Join(asked, ", "), "nothing"), sum.Records,
		sum.Inserted, sum.Updated, sum.Unchanged, sum.Bad)
	if sum.Stopped {
		fmt.Fprintln(stdout, "enrich: stopped at --max-requests; run it again to go on")
	}
	return err
}
