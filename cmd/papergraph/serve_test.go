package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestServeReadOnly serves an imported SQLite file read-only and reads a
// paper through the API: serve must neither migrate nor load the demo.
func TestServeReadOnly(t *testing.T) {
	tests := []struct {
		name    string
		params  string
		lockDir bool // make the file's directory read-only too
	}{
		{"mode=ro", "?mode=ro", false},
		{"immutable in a read-only directory", "?immutable=1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := dbtest.New(t, "sqlite")
			var out, errOut bytes.Buffer
			if err := run(context.Background(), []string{"import", "--db", dsn, "paperscape", "../../ingest/testdata/paperscape.csv"}, &out, &errOut); err != nil {
				t.Fatalf("import: %v\n%s", err, errOut.String())
			}
			if tt.lockDir {
				dir := filepath.Dir(strings.TrimPrefix(dsn, "sqlite:"))
				if err := os.Chmod(dir, 0o555); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Chmod(dir, 0o755) })
			}
			body, _ := serveAndPost(t, dsn+tt.params, `{"query":"{ paper(id: \"hep-th/9203078\") { title } }"}`)
			if got, want := data(t, body), `{"paper":{"title":"Extended Supersymmetry and Self-Duality in 2+2 Dimensions"}}`; got != want {
				t.Errorf("data = %s, want %s (body %s)", got, want, body)
			}
		})
	}
}

// data returns the data entry of a GraphQL response body.
func data(t *testing.T, body string) string {
	t.Helper()
	var resp struct{ Data json.RawMessage }
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return string(resp.Data)
}

// serveAndPost runs serve on dsn, posts body to /graphql once it answers,
// stops serve and returns the response body and what serve wrote to
// stderr.
func serveAndPost(t *testing.T, dsn, body string) (resp, stderr string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	var out, errOut bytes.Buffer
	go func() { done <- run(ctx, []string{"serve", "--db", dsn, "--addr", addr}, &out, &errOut) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := http.Post("http://"+addr+"/graphql", "application/json", strings.NewReader(body))
		if err == nil {
			b, err := io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			resp = string(b)
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended before answering: %v\n%s", err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v\n%s", err, errOut.String())
	}
	return resp, errOut.String()
}

// TestAnotherImportRunning: while an import holds the database, a second
// import and migrate refuse at once, naming it, and serve says it serves
// what the import has written (and does not load the demo into it).
func TestAnotherImportRunning(t *testing.T) {
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			dsn := dbtest.New(t, kind)
			ctx := context.Background()
			release, err := db.LockImport(ctx, dbtest.Open(t, dsn))
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			want := fmt.Sprintf("another papergraph import is writing to this database (pid %d, started ", os.Getpid())
			for _, args := range [][]string{
				{"import", "--db", dsn, "paperscape", "../../ingest/testdata/paperscape.csv"},
				{"migrate", "--db", dsn},
			} {
				var out, errOut bytes.Buffer
				err := run(ctx, args, &out, &errOut)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %v, want %q", args[0], err, want)
				}
			}
			resp, stderr := serveAndPost(t, dsn, `{"query":"{ __typename }"}`)
			if !strings.Contains(stderr, want) || !strings.Contains(stderr, "serving what it has written so far") {
				t.Errorf("serve said %q, want %q", stderr, want)
			}
			if got := data(t, resp); got != `{"__typename":"Query"}` {
				t.Errorf("serve answered %s", resp)
			}
			if strings.Contains(stderr, "demo") {
				t.Errorf("serve loaded the demo beside the import: %s", stderr)
			}
		})
	}
}
