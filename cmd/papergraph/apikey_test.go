package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

func TestAPIKeyCommands(t *testing.T) {
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			dsn := dbtest.New(t, kind)
			ctx := context.Background()
			apikey := func(args ...string) (string, string, error) {
				t.Helper()
				var out, errOut bytes.Buffer
				err := run(ctx, append([]string{"apikey"}, append(args[:1:1], append([]string{"--db", dsn}, args[1:]...)...)...), &out, &errOut)
				return out.String(), errOut.String(), err
			}
			var keys []string
			for _, args := range [][]string{{"--name", "notebook"}, {"--name", "laptop", "--weight", "3"}} {
				name := args[1]
				out, errOut, err := apikey(append([]string{"create"}, args...)...)
				if err != nil {
					t.Fatalf("create: %v\n%s", err, errOut)
				}
				// The key alone on standard output, the talk on stderr.
				if !regexp.MustCompile(`^pg_[A-Za-z0-9_-]{43}\n$`).MatchString(out) {
					t.Fatalf("create printed %q on stdout, want the key alone", out)
				}
				if !strings.Contains(errOut, name) || strings.Contains(errOut, strings.TrimSpace(out)) {
					t.Errorf("create's stderr = %q, want the name and not the key", errOut)
				}
				keys = append(keys, strings.TrimSpace(out))
			}
			bdb := dbtest.Open(t, dsn)
			if n := countRows(t, dsn, keys[0]); n != 0 {
				t.Errorf("the key itself is stored in %d rows", n)
			}
			for i, k := range keys {
				got, err := db.ActiveAPIKey(ctx, bdb, db.HashAPIKey(k))
				if err != nil || got == nil {
					t.Fatalf("ActiveAPIKey(new key) = %v, %v", got, err)
				}
				if want := []int{db.DefaultClientWeight, 3}[i]; got.Weight != want {
					t.Errorf("key %s: weight %d, want %d", got.Name, got.Weight, want)
				}
			}

			if _, _, err := apikey("revoke", keys[1][:11]); err != nil {
				t.Fatalf("revoke by prefix: %v", err)
			}
			out, _, err := apikey("list")
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "LAST USED") {
				t.Fatalf("list = %q, want a header and two keys", out)
			}
			first, second := strings.Fields(lines[1]), strings.Fields(lines[2])
			if first[1] != "notebook" || first[2] != keys[0][:11] || first[3] != "1" || first[len(first)-1] != "-" {
				t.Errorf("list line %q, want notebook, %s…, weight 1, not revoked", lines[1], keys[0][:11])
			}
			if second[1] != "laptop" || second[3] != "3" || second[len(second)-1] == "-" {
				t.Errorf("list line %q, want laptop of weight 3 revoked", lines[2])
			}
			if got, err := db.ActiveAPIKey(ctx, bdb, db.HashAPIKey(keys[1])); err != nil || got != nil {
				t.Errorf("ActiveAPIKey(revoked key) = %v, %v, want nil", got, err)
			}
			if _, _, err := apikey("revoke", first[0]); err != nil {
				t.Errorf("revoke by id: %v", err)
			}

			for _, tt := range []struct {
				args []string
				want error
			}{
				{[]string{"create"}, errUsage},
				{[]string{"create", "--name", "a\tb"}, errUsage},
				{[]string{"create", "--name", "light", "--weight", "0"}, errUsage},
				{[]string{"create", "--name", "heavy", "--weight", "101"}, errUsage},
				{[]string{"revoke"}, errUsage},
				{[]string{"revoke", "pg_nosuchkey"}, db.ErrNoSuchKey},
				{[]string{"revoke", "x"}, db.ErrNoSuchKey},
			} {
				if _, _, err := apikey(tt.args...); !errors.Is(err, tt.want) {
					t.Errorf("apikey %q = %v, want %v", tt.args, err, tt.want)
				}
			}
		})
	}
}

// countRows counts the api_keys rows holding s in any column.
func countRows(t *testing.T, dsn, s string) int {
	t.Helper()
	var n int
	err := dbtest.Open(t, dsn).NewRaw(`SELECT COUNT(*) FROM api_keys WHERE name = ? OR prefix = ? OR hash = ?`, s, s, s).
		Scan(context.Background(), &n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
