package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/ingest/oaitest"
	"github.com/papergraph/papergraph/notify"
)

// A subscriber to papersAdded hears exactly the papers a harvest running
// at the same time writes that match its filter: the harvest of the
// sample's 200 records from an OAI-PMH repository, in pages of 30, each
// committed and announced as serve --harvest-every does.
func TestSubscriptionHearsHarvest(t *testing.T) {
	records := oaitest.SampleRecords(t, "../demo/data/kaggle-arxiv-sample.jsonl.gz")
	want := hepTh(records)
	if len(want) == 0 || len(want) == len(records) {
		t.Fatalf("%d of the %d records are in hep-th: the test needs some in and some out", len(want), len(records))
	}
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		bus := liveBus(t, ctx, dsn, bdb)
		srv := httptest.NewServer(newTestServer(t, bdb, Config{Writer: bdb, Bus: bus}).Handler())
		defer srv.Close()
		c := dialWS(t, ctx, srv)
		c.answerPings()
		c.subscribe("hep", `subscription { papersAdded(filter: {categories: ["hep-th"]}) { arxivId categories { code } } }`)
		waitSubscribers(t, ctx, bus, 1)

		harvested := harvestLive(t, ctx, bdb, bus, records)
		var got []string
		for len(got) < len(want) {
			var p struct {
				PapersAdded struct {
					ArxivID    string
					Categories []struct{ Code string }
				}
			}
			c.next("hep", &p)
			if !slices.ContainsFunc(p.PapersAdded.Categories, func(c struct{ Code string }) bool { return c.Code == "hep-th" }) {
				t.Errorf("%s of %v reached a hep-th subscriber", p.PapersAdded.ArxivID, p.PapersAdded.Categories)
			}
			got = append(got, p.PapersAdded.ArxivID)
		}
		if err := <-harvested; err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("papersAdded during the harvest: got %d papers %v, want the %d in hep-th %v", len(got), got, len(want), want)
		}
		// Nothing more comes: a paper announced after the harvest is the
		// next answer, so no paper of the harvest came twice.
		importLive(t, ctx, bdb, bus, kagglePaper("0704.9999", "hep-th", "Z. Last"))
		var last addedPaper
		c.next("hep", &last)
		if last.PapersAdded.ArxivID != "0704.9999" {
			t.Errorf("after the harvest: got %s, want 0704.9999", last.PapersAdded.ArxivID)
		}
	})
}

// harvestLive starts a harvest of records, served by an OAI-PMH
// repository 30 to a page, that announces each commit on bus as serve
// --harvest-every does; its error comes on the channel when it ends.
func harvestLive(t *testing.T, ctx context.Context, bdb *bun.DB, bus *notify.Bus, records []oaitest.Record) <-chan error {
	oai := oaitest.NewServer(t, records, 30)
	harvested := make(chan error, 1)
	go func() {
		_, err := ingest.Harvest(ctx, bdb, ingest.HarvestOptions{URL: oai.URL, Delay: time.Millisecond, OnCommit: func(papers, researchers []int64) {
			if err := bus.Publish(ctx, papers, researchers); err != nil {
				t.Error(err)
			}
		}})
		harvested <- err
	}()
	return harvested
}

// hepTh are the ids of records filed under hep-th, sorted.
func hepTh(records []oaitest.Record) []string {
	var ids []string
	for _, r := range records {
		_, rest, _ := strings.Cut(r.Metadata, "<categories>")
		cats, _, _ := strings.Cut(rest, "</categories>")
		if slices.Contains(strings.Fields(cats), "hep-th") {
			ids = append(ids, r.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// A WebSocket upgrade from a browser page is taken from the server's
// own origin and the CORS origins, and refused with 403 from any other;
// one without an Origin (not from a browser) is taken.
func TestWebsocketOrigins(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		srv := httptest.NewServer(newTestServer(t, bdb, Config{Bus: notify.NewLocal(), CORSOrigins: []string{"https://app.example.org"}}).Handler())
		defer srv.Close()
		url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/graphql"
		for _, tt := range []struct {
			origin string
			status int
		}{
			{"https://app.example.org", http.StatusSwitchingProtocols},
			{srv.URL, http.StatusSwitchingProtocols},
			{"", http.StatusSwitchingProtocols},
			{"https://evil.example.org", http.StatusForbidden},
			{"http://app.example.org", http.StatusForbidden},
			{"null", http.StatusForbidden},
		} {
			h := http.Header{}
			if tt.origin != "" {
				h.Set("Origin", tt.origin)
			}
			conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: h})
			if resp == nil {
				t.Fatalf("origin %q: %v", tt.origin, err)
			}
			if resp.StatusCode != tt.status {
				t.Errorf("origin %q: got %d (%v), want %d", tt.origin, resp.StatusCode, err, tt.status)
			}
			if conn != nil {
				conn.CloseNow()
			}
		}
	})
}

// smallBuffers is a listener whose connections have a small send
// buffer, so that a client that does not read blocks the server's writes
// soon.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// A client that subscribes and then never reads does not hold the
// server: once a write has waited WebsocketWriteTimeout the server
// closes the connection, and the subscription ends.
func TestWebsocketWriteTimeout(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		bus := liveBus(t, ctx, dsn, bdb)
		ts := httptest.NewUnstartedServer(newTestServer(t, bdb, Config{Bus: bus, WebsocketWriteTimeout: 200 * time.Millisecond}).Handler())
		ts.Listener = smallBuffers{ts.Listener}
		ts.Start()
		defer ts.Close()
		dialer := &net.Dialer{}
		client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(4096)
			}
			return c, err
		}}}
		c := dialWSWith(t, ctx, ts, websocket.DialOptions{HTTPClient: client})
		conn := c.conn
		c.subscribe("all", `subscription { papersAdded { arxivId title abstract } }`)
		waitSubscribers(t, ctx, bus, 1)

		// 1,000 papers of about 300 bytes an answer: far more than the
		// buffers between the server and the client hold.
		const n = 1000
		records := make([]string, n)
		for i := range records {
			records[i] = kagglePaper(fmt.Sprintf("0705.%04d", i+1), "hep-th", "A. Writer")
		}
		importLive(t, ctx, bdb, bus, records...)
		// The subscription ends when the server gives up on the
		// connection; without the write timeout it would wait for the
		// client for ever.
		waitSubscribers(t, ctx, bus, 0)
		read := 0
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				if ctx.Err() != nil {
					t.Fatalf("the connection stayed open after %d messages: %v", read, err)
				}
				break
			}
			var m wsMessage
			if json.Unmarshal(data, &m) == nil && m.Type == "next" {
				read++
			}
		}
		t.Logf("read %d of %d papers before the server closed", read, n)
		if read >= n {
			t.Errorf("the client read all %d papers: the server never gave up on its writes", read)
		}
	})
}

// A client that subscribes and stops reading is closed within the write
// timeout even when the few messages sent to it fit in the buffers of
// the network, so that no write of the server ever waits: it does not
// answer the pings, whose pongs would follow its reading of them.
func TestWebsocketSilentClientClosed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		bus := liveBus(t, ctx, dsn, bdb)
		ts := httptest.NewServer(newTestServer(t, bdb, Config{Bus: bus, WebsocketWriteTimeout: 300 * time.Millisecond}).Handler())
		defer ts.Close()
		reader := dialWS(t, ctx, ts)
		defer reader.conn.CloseNow()
		reader.subscribe("r", `subscription { papersAdded { arxivId } }`)
		papers := readPapers(ctx, reader)
		silent := dialWS(t, ctx, ts)
		defer silent.conn.CloseNow()
		silent.subscribe("s", `subscription { papersAdded { arxivId } }`)
		waitSubscribers(t, ctx, bus, 2)

		importLive(t, ctx, bdb, bus, kagglePaper("0705.0001", "hep-th", "A. Writer"))
		if got := <-papers; got != "0705.0001" {
			t.Fatalf("the reading client got %q", got)
		}
		// The silent client is dropped; the reading one, answering the
		// pings, keeps its subscription and hears the next paper.
		waitSubscribers(t, ctx, bus, 1)
		importLive(t, ctx, bdb, bus, kagglePaper("0705.0002", "hep-th", "A. Writer"))
		if got := <-papers; got != "0705.0002" {
			t.Fatalf("the reading client got %q after the silent one was closed", got)
		}
	})
}

// readPapers reads c's messages until its connection ends, answering
// pings, and sends the arXiv id of each papersAdded event; the channel
// is closed when the connection ends. It holds the ids of up to 16,384
// events for its reader, so that the client keeps answering pings.
func readPapers(ctx context.Context, c *wsClient) <-chan string {
	out := make(chan string, 1<<14)
	go func() {
		defer close(out)
		for {
			var m wsMessage
			if err := wsjson.Read(ctx, c.conn, &m); err != nil {
				return
			}
			switch m.Type {
			case "ping":
				if wsjson.Write(ctx, c.conn, wsMessage{Type: "pong"}) != nil {
					return
				}
			case "next":
				var resp struct {
					Data struct{ PapersAdded struct{ ArxivID string } }
				}
				_ = json.Unmarshal(m.Payload, &resp)
				out <- resp.Data.PapersAdded.ArxivID
			}
		}
	}()
	return out
}

// Twenty-one subscribers that read as fast as the server writes to them
// each hear every paper of an import committed in many more batches than
// a subscriber may fall events behind: events that pile up are merged,
// not counted against the subscriber. With -short there are fewer
// subscribers and papers a batch, but still more batches than that.
func TestSubscribersKeepUpWithImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		bus := liveBus(t, ctx, dsn, bdb)
		// Each subscriber is a client of its own, behind a proxy.
		ts := httptest.NewServer(newTestServer(t, bdb, Config{Bus: bus,
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}).Handler())
		defer ts.Close()
		clients, batches, perBatch := 21, 100, 20
		if testing.Short() {
			clients, perBatch = 5, 4
		}
		heard := make([]<-chan string, clients)
		for i := range heard {
			c := dialWSWith(t, ctx, ts, websocket.DialOptions{
				HTTPHeader: http.Header{"X-Forwarded-For": {fmt.Sprintf("203.0.113.%d", i+1)}}})
			c.subscribe("all", `subscription { papersAdded { arxivId } }`)
			heard[i] = readPapers(ctx, c)
		}
		waitSubscribers(t, ctx, bus, clients)
		for b := range batches {
			records := make([]string, perBatch)
			for i := range records {
				records[i] = kagglePaper(fmt.Sprintf("0801.%04d", b*perBatch+i+1), "hep-th", "A. Writer")
			}
			importLive(t, ctx, bdb, bus, records...)
		}
		for i, papers := range heard {
			seen := map[string]bool{}
			for len(seen) < batches*perBatch {
				id, ok := <-papers
				if !ok || id == "" {
					t.Fatalf("subscriber %d: the connection ended after %d of %d papers", i, len(seen), batches*perBatch)
				}
				seen[id] = true
			}
		}
	})
}
