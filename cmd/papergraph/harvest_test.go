package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// oaiPage is a ListRecords answer holding one arXivRaw record: arXiv's
// metadata of 0704.0001 (CC0), as in demo/data/kaggle-arxiv-sample.jsonl.gz.
const oaiPage = `<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">
<responseDate>2026-11-28T12:00:00Z</responseDate>
<request verb="ListRecords" metadataPrefix="arXivRaw">http://localhost/oai</request>
<ListRecords>
<record><header><identifier>oai:arXiv.org:0704.0001</identifier><datestamp>2008-11-13</datestamp><setSpec>physics:hep-ph</setSpec></header>
<metadata><arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/">
<id>0704.0001</id><submitter>Pavel Nadolsky</submitter>
<version version="v1"><date>Mon, 2 Apr 2007 19:18:42 GMT</date><size>37kb</size><source_type>D</source_type></version>
<version version="v2"><date>Tue, 24 Jul 2007 20:10:27 GMT</date><size>37kb</size><source_type>D</source_type></version>
<title>Calculation of prompt diphoton production cross sections at Tevatron and
  LHC energies</title>
<authors>C. Bal\'azs, E. L. Berger, P. M. Nadolsky, C.-P. Yuan</authors>
<categories>hep-ph</categories>
<comments>37 pages, 15 figures; published version</comments>
<report-no>ANL-HEP-PR-07-12</report-no>
<journal-ref>Phys.Rev.D76:013009,2007</journal-ref>
<doi>10.1103/PhysRevD.76.013009</doi>
<abstract>A fully differential calculation in perturbative quantum chromodynamics is
presented for the production of massive photon pairs at hadron colliders.</abstract>
</arXivRaw></metadata></record>
</ListRecords>
</OAI-PMH>
`

// oaiRepository serves oaiPage to every request and counts them.
func oaiRepository(t *testing.T) (*httptest.Server, *atomic.Int64) {
	return oaiRepositoryOf(t, oaiPage)
}

// oaiRepositoryOf serves page to every request and counts them.
func oaiRepositoryOf(t *testing.T, page string) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		fmt.Fprint(w, page)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

func TestHarvestCommand(t *testing.T) {
	oai, _ := oaiRepository(t)
	dsn := dbtest.New(t, "sqlite")
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"harvest", "--db", dsn, "--oai-url", oai.URL}, &out, &errOut); err != nil {
		t.Fatalf("harvest: %v\n%s", err, errOut.String())
	}
	for _, want := range []string{"1 requests (0 retried), 1 pages, 1 records: inserted 1,", "all of arXiv: harvested through 2026-11-28"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("harvest printed %q, want %q in it", out.String(), want)
		}
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--from", "yesterday"}, `from "yesterday" is not a date: want YYYY-MM-DD`},
		{[]string{"--set", ""}, "empty set name"},
		{[]string{"cs"}, `harvest takes no arguments, got "cs"`},
	}
	for _, tt := range tests {
		err := run(context.Background(), append([]string{"harvest", "--db", dsn, "--oai-url", oai.URL}, tt.args...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), errUsage.Error()) {
			t.Errorf("harvest %v: %v, want a usage error saying %s", tt.args, err, tt.want)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--harvest-every", "-1h"}, "--harvest-every -1h0m0s: want a positive interval and a writable database"},
		{[]string{"--harvest-every", "6h", "--oai-url", "ftp://example.org/oai"}, `"ftp://example.org/oai" is not an http(s) URL`},
	} {
		err := run(context.Background(), append([]string{"serve", "--db", dsn}, tt.args...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), errUsage.Error()) {
			t.Errorf("serve %v: %v, want a usage error saying %s", tt.args, err, tt.want)
		}
	}
}

// serve --harvest-every harvests at start and counts it on /metrics; a
// harvest that finds another instance writing skips its turn.
func TestServeHarvestEvery(t *testing.T) {
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			dsn := dbtest.New(t, kind)
			t.Run("harvests", func(t *testing.T) {
				oai, requests := oaiRepository(t)
				metrics := serveUntil(t, dsn, oai.URL, `papergraph_harvest_runs_total{result="ok"} 1`)
				for _, want := range []string{`papergraph_harvest_records_total{outcome="written"} 1`, "papergraph_harvest_pages_total 1",
					`papergraph_harvest_through_timestamp_seconds{set=""} 1.795824e+09`} {
					if !strings.Contains(metrics, want) {
						t.Errorf("/metrics lacks %q:\n%s", want, metrics)
					}
				}
				if n := requests.Load(); n != 1 {
					t.Errorf("%d requests to the repository, want 1", n)
				}
				through, err := db.HarvestedThrough(context.Background(), dbtest.Open(t, dsn), "")
				if err != nil || through != "2026-11-28" {
					t.Errorf("harvested through %q, %v; want 2026-11-28", through, err)
				}
			})
			t.Run("another instance writing", func(t *testing.T) {
				oai, requests := oaiRepository(t)
				release, err := db.LockImport(context.Background(), dbtest.Open(t, dsn))
				if err != nil {
					t.Fatal(err)
				}
				defer release()
				serveUntil(t, dsn, oai.URL, `papergraph_harvest_runs_total{result="skipped"} 1`)
				if n := requests.Load(); n != 0 {
					t.Errorf("%d requests to the repository, want none", n)
				}
			})
		})
	}
}

// serveUntil runs serve --harvest-every on dsn until /metrics shows line,
// and returns what /metrics showed.
func serveUntil(t *testing.T, dsn, oaiURL, line string) string {
	t.Helper()
	var metrics string
	serveWhile(t, dsn, oaiURL, func(addr string) bool {
		if r, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			metrics = string(b)
		}
		return !strings.Contains(metrics, line)
	})
	return metrics
}

// serveWhile runs serve --harvest-every on dsn, asking more of the
// server at addr, a short pause between asks, until it answers false.
func serveWhile(t *testing.T, dsn, oaiURL string, more func(addr string) bool) {
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
	var errOut bytes.Buffer
	go func() {
		done <- run(ctx, []string{"serve", "--db", dsn, "--addr", addr, "--demo=false",
			"--harvest-every", "24h", "--oai-url", oaiURL}, io.Discard, &errOut)
	}()
	for more(addr) {
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v\n%s", err, errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v\n%s", err, errOut.String())
	}
	// serve waits for its bus's listener (PostgreSQL's LISTEN) to end.
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "notify.(*Bus).Listen") {
		t.Errorf("serve returned with its bus still listening:\n%s", stacks)
	}
}

// A paper serve --harvest-every harvests is embedded and added to the
// vector index the server searches: a SEMANTIC search finds it without a
// restart.
func TestServeHarvestSearchable(t *testing.T) {
	const title = "Entropy of rotating black holes in quantum gravity"
	const abstract = "Rotating black holes, their horizon entropy and the area law."
	page := strings.NewReplacer("0704.0001", "2611.00001", "<datestamp>2008-11-13", "<datestamp>2026-11-28",
		`Calculation of prompt diphoton production cross sections at Tevatron and
  LHC energies`, title,
		`A fully differential calculation in perturbative quantum chromodynamics is
presented for the production of massive photon pairs at hadron colliders.`, abstract).Replace(oaiPage)
	if !strings.Contains(page, title) || !strings.Contains(page, abstract) {
		t.Fatal("the record's title or abstract was not replaced")
	}
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			dsn := dbtest.New(t, kind)
			runOK(t, "import", "--db", dsn, "kaggle", kaggleSample)
			oai, _ := oaiRepositoryOf(t, page)
			// The harvest's embedding step ends after its metrics are
			// counted; the server is asked until it has ended, a few
			// hundred times at most.
			var got []string
			tries := 0
			serveWhile(t, dsn, oai.URL, func(addr string) bool {
				got = semanticSearch(t, addr, title+" "+abstract)
				tries++
				return tries < 600 && (len(got) == 0 || got[0] != "2611.00001")
			})
			if len(got) == 0 || got[0] != "2611.00001" {
				t.Errorf("SEMANTIC search for the harvested paper's text found %v first, want 2611.00001", got)
			}
		})
	}
}

// semanticSearch is the arXiv ids of the first 3 papers of a SEMANTIC
// search for q at the server at addr; none while it cannot answer.
func semanticSearch(t *testing.T, addr, q string) []string {
	body, _ := json.Marshal(map[string]any{
		"query":     `query($q: String!) { searchPapers(query: $q, first: 3, mode: SEMANTIC) { nodes { arxivId } } }`,
		"variables": map[string]any{"q": q},
	})
	r, err := http.Post("http://"+addr+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil
	}
	defer r.Body.Close()
	var resp struct {
		Data struct {
			SearchPapers struct{ Nodes []struct{ ArxivID string } }
		}
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(r.Body).Decode(&resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Errors) > 0 {
		t.Logf("search: %v", resp.Errors)
	}
	var ids []string
	for _, n := range resp.Data.SearchPapers.Nodes {
		ids = append(ids, n.ArxivID)
	}
	return ids
}
