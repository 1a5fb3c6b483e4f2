package server

import (
	"database/sql"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// TestServesThroughReplicas: with one replica that keeps up and one that
// is down, GraphQL answers from the first, and /readyz and /metrics say
// which is which.
func TestServesThroughReplicas(t *testing.T) {
	primary, replica, bdb := dbtest.Replicated(t)
	sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{"testdata/pscp.csv"}})
	if err != nil || !sum.OK() {
		t.Fatalf("import: %+v, %v", sum, err)
	}
	// Nothing listens on port 1: the second replica is down.
	u, err := url.Parse(replica)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = "127.0.0.1:1"
	down := u.String()
	reader, set, err := db.OpenReplicated(primary, 0, []string{replica, down},
		db.ReplicaOptions{MaxLag: time.Second, Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	direct, err := sql.Open("pgx", replica)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int
		if err := direct.QueryRow("SELECT count(*) FROM papers").Scan(&n); err == nil && n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica did not replay the import within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	h := newTestServer(t, reader, Config{Replicas: set}).Handler()

	rec := serve(h, post(t, map[string]string{"query": `{ paper(id: "hep-th/9201001") { title } }`}, mediaJSON))
	if resp := decode(t, rec); rec.Code != http.StatusOK || len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), `"title"`) {
		t.Fatalf("query: status %d, data %s, errors %+v", rec.Code, resp.Data, resp.Errors)
	}
	rec = serve(h, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "replica 0: up") || !strings.Contains(body, "replica 1: skipped: does not answer") {
		t.Errorf("readyz: status %d, body %q; want 200 with replica 0 up and replica 1 skipped", rec.Code, body)
	}
	rec = serve(h, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{`papergraph_replica_up{replica="0"} 1`, `papergraph_replica_up{replica="1"} 0`, `papergraph_replica_lag_seconds{replica="0"}`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
