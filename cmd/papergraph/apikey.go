package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/papergraph/papergraph/db"
)

// maxKeyName bounds a key's name, which listings and viewer { name } show.
const maxKeyName = 100

const apikeyUsage = `usage: papergraph apikey create --name NAME [--weight N] [--db DSN]
       papergraph apikey list [--db DSN]
       papergraph apikey revoke [--db DSN] ID|PREFIX

create prints the new key, alone, on standard output: it is shown once
and stored only as its SHA-256 hash. A client signs in with it by sending
Authorization: Bearer KEY; a revoked key is refused with 401. A key's
weight is its part in the server's statement slots while clients wait
for them: a key of weight 2 gets twice the slots of an address.`

func cmdAPIKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: apikey needs a subcommand\n\n%s", errUsage, apikeyUsage)
	}
	switch args[0] {
	case "create":
		return apikeyCreate(ctx, args[1:], stdout, stderr)
	case "list":
		return apikeyList(ctx, args[1:], stdout, stderr)
	case "revoke":
		return apikeyRevoke(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, apikeyUsage)
		return errHelp
	}
	return fmt.Errorf("%w: unknown apikey subcommand %q\n\n%s", errUsage, args[0], apikeyUsage)
}

func apikeyCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("apikey create", "apikey create --name NAME [--weight N] [--db DSN]", stderr)
	name := fs.String("name", "", "what the key is for, as `apikey list` and viewer { name } show it (required)")
	weight := fs.Int("weight", db.DefaultClientWeight, fmt.Sprintf("the key's part in the server's statement slots while clients wait for them,\n"+
		"`N` times an address's (1 to %d): a front end's server-side renderer may need more than one", db.MaxKeyWeight))
	if err := parse(fs, args); err != nil {
		return err
	}
	n := strings.TrimSpace(*name)
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: apikey create takes no arguments, got %q", errUsage, fs.Args())
	case n == "":
		return fmt.Errorf("%w: apikey create needs --name NAME", errUsage)
	case len(n) > maxKeyName || strings.ContainsFunc(n, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return fmt.Errorf("%w: --name: at most %d bytes, no control characters", errUsage, maxKeyName)
	case *weight < 1 || *weight > db.MaxKeyWeight:
		return fmt.Errorf("%w: --weight %d: %v", errUsage, *weight, db.ErrKeyWeight)
	}
	bdb, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	key, k, err := db.CreateWeightedAPIKey(ctx, bdb, n, *weight, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, key)
	fmt.Fprintf(stderr, "papergraph: API key %d (%s…) %q of weight %d created; it is shown this once: keep it safe\n", k.ID, k.Prefix, k.Name, k.Weight)
	return nil
}

func apikeyList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("apikey list", "apikey list [--db DSN]", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: apikey list takes no arguments, got %q", errUsage, fs.Args())
	}
	bdb, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	ks, err := db.APIKeys(ctx, bdb)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tWEIGHT\tCREATED\tLAST USED\tREVOKED")
	for _, k := range ks {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix, k.Weight, when(k.CreatedAt), when(k.LastUsedAt), when(k.RevokedAt))
	}
	return tw.Flush()
}

// when is t as listings show it, "-" when it is zero.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func apikeyRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("apikey revoke", "apikey revoke [--db DSN] ID|PREFIX", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: apikey revoke needs one ID or PREFIX (as apikey list shows them)", errUsage)
	}
	bdb, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	k, err := db.RevokeAPIKey(ctx, bdb, fs.Arg(0), time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked API key %d (%s…) %q\n", k.ID, k.Prefix, k.Name)
	return nil
}
