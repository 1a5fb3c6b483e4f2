package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest/oaitest"
)

// nodeClient installs the graphql-ws client of testdata/wsclient (the
// versions its package-lock.json pins) into a temporary directory and
// returns the path of its subscribe.mjs (see nodePackage).
func nodeClient(t *testing.T) string {
	t.Helper()
	return nodePackage(t, "wsclient", "subscribe.mjs")
}

// nodePackage installs the npm package of testdata/pkg (the versions its
// package-lock.json pins) into a temporary directory and returns the path
// of its script there. Without PAPERGRAPH_TEST_NODE=1 the test is
// skipped; with it, a missing node or npm, or an install that fails,
// fails the test.
func nodePackage(t *testing.T, pkg, script string) string {
	t.Helper()
	if os.Getenv("PAPERGRAPH_TEST_NODE") != "1" {
		t.Skip("set PAPERGRAPH_TEST_NODE=1 to test with the npm client of testdata/" + pkg + " (needs node and npm)")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("PAPERGRAPH_TEST_NODE=1 but %s is missing: %v", tool, err)
		}
	}
	dir := t.TempDir()
	for _, name := range []string{"package.json", "package-lock.json", script} {
		b, err := os.ReadFile(filepath.Join("testdata", pkg, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, "npm", "ci", "--silent", "--no-audit", "--no-fund")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci of testdata/%s: %v\n%s", pkg, err, out)
	}
	return filepath.Join(dir, script)
}

// The npm graphql-ws client, as browsers and Node programs use it,
// subscribes to papersAdded and receives exactly the papers of a
// concurrent harvest that match its filter.
func TestGraphQLWSClient(t *testing.T) {
	script := nodeClient(t)
	records := oaitest.SampleRecords(t, "../demo/data/kaggle-arxiv-sample.jsonl.gz")
	want := hepTh(records)
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		bus := liveBus(t, ctx, dsn, bdb)
		srv := httptest.NewServer(newTestServer(t, bdb, Config{Writer: bdb, Bus: bus}).Handler())
		defer srv.Close()

		node := exec.CommandContext(ctx, "node", script, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql",
			`subscription { papersAdded(filter: {categories: ["hep-th"]}) { arxivId } }`, fmt.Sprint(len(want)))
		var stderr strings.Builder
		node.Stderr = &stderr
		stdout, err := node.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := node.Start(); err != nil {
			t.Fatal(err)
		}
		waitSubscribers(t, ctx, bus, 1)
		harvested := harvestLive(t, ctx, bdb, bus, records)

		var got []string
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			var result struct {
				Data   struct{ PapersAdded struct{ ArxivID string } }
				Errors []struct{ Message string }
			}
			if err := json.Unmarshal(lines.Bytes(), &result); err != nil || len(result.Errors) > 0 {
				t.Fatalf("graphql-ws client printed %s (%v)", lines.Bytes(), err)
			}
			got = append(got, result.Data.PapersAdded.ArxivID)
		}
		if err := node.Wait(); err != nil {
			t.Fatalf("node subscribe.mjs: %v\n%s", err, stderr.String())
		}
		if err := <-harvested; err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("the graphql-ws client received %d papers %v, want the %d in hep-th %v", len(got), got, len(want), want)
		}
	})
}
