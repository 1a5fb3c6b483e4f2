package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
			body := serveAndPost(t, dsn+tt.params, `{"query":"{ paper(id: \"hep-th/9203078\") { title } }"}`)
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

// serveAndPost runs serve on dsn, posts body to /graphql once it answers
// and returns the response body, stopping serve afterwards.
func serveAndPost(t *testing.T, dsn, body string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var stdout, stderr bytes.Buffer
	go func() { done <- run(ctx, []string{"serve", "--db", dsn, "--addr", addr}, &stdout, &stderr) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, stderr.String())
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Post("http://"+addr+"/graphql", "application/json", strings.NewReader(body))
		if err == nil {
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("serve ended before answering: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
