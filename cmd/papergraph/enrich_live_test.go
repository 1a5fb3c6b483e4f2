package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/enrich"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/notify"
	"github.com/papergraph/papergraph/server"
)

// An enrich run announces the researchers it changes: a subscriber to
// researcherUpdated of Jason Priem hears him once his OpenAlex profile's
// figures are written, with their source; and the API shows where each
// external figure comes from. The APIs answer from enrich's test data.
func TestEnrichAnnouncesAndShowsSources(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		seedEnrichArchive(t, bdb)
		var priem []db.Researcher
		if err := bdb.NewSelect().Model(&priem).Where("name = ?", "Jason Priem").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if len(priem) != 1 {
			t.Fatalf("researchers named Jason Priem: %d, want 1", len(priem))
		}
		bus := notify.NewLocal()
		if strings.HasPrefix(dsn, "postgres") {
			bus = notify.NewPostgres(bdb)
			ready := make(chan struct{}, 1)
			bus.Start(dsn, slog.New(slog.NewTextHandler(t.Output(), nil)), func() {
				select {
				case ready <- struct{}{}:
				default:
				}
			})
			<-ready
		}
		defer bus.Close()
		srv, err := server.New(server.Config{DB: bdb, Writer: bdb, Bus: bus, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
		if err != nil {
			t.Fatal(err)
		}
		api := httptest.NewServer(srv.Handler())
		defer api.Close()

		conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(api.URL, "http")+"/graphql",
			&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		type message struct {
			ID      string          `json:"id,omitempty"`
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload,omitempty"`
		}
		read := func() message {
			for {
				var m message
				if err := wsjson.Read(ctx, conn, &m); err != nil {
					t.Fatal(err)
				}
				if m.Type != "ping" && m.Type != "pong" {
					return m
				}
			}
		}
		if err := wsjson.Write(ctx, conn, message{Type: "connection_init"}); err != nil {
			t.Fatal(err)
		}
		if m := read(); m.Type != "connection_ack" {
			t.Fatalf("got %s, want connection_ack", m.Type)
		}
		sub, _ := json.Marshal(map[string]string{"query": fmt.Sprintf(
			`subscription { researcherUpdated(id: "%d") { name hIndex figuresSource { source updatedAt } } }`, priem[0].ID)})
		if err := wsjson.Write(ctx, conn, message{ID: "priem", Type: "subscribe", Payload: sub}); err != nil {
			t.Fatal(err)
		}
		for bus.Subscribers() != 1 {
			select {
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}

		oa := httptest.NewServer(fakeOpenAlex(t))
		defer oa.Close()
		s2 := httptest.NewServer(fakeS2(t))
		defer s2.Close()
		before := time.Now().Add(-time.Second)
		var announced [][]int64
		// No Delay and no 429: the run never waits.
		_, err = enrich.Run(ctx, bdb, enrich.Options{
			OpenAlexURL: oa.URL, S2URL: s2.URL, Mailto: "lead@example.org", S2Key: "s2-key",
			OnCommit: func(researchers []int64) {
				announced = append(announced, researchers)
				if err := bus.Publish(ctx, nil, researchers); err != nil {
					t.Error(err)
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(announced) == 0 {
			t.Fatal("enrich announced nothing")
		}

		// Priem is heard first as an author of the paper OpenAlex told
		// about, then with his profile's figures.
		type figures struct {
			Source    string
			UpdatedAt time.Time
		}
		var heard struct {
			ResearcherUpdated struct {
				Name          string
				HIndex        *int
				FiguresSource *figures
			}
		}
		for i := 0; heard.ResearcherUpdated.HIndex == nil; i++ {
			if i == len(announced) {
				t.Fatalf("%d answers, none with Priem's figures", i)
			}
			m := read()
			if m.Type != "next" || m.ID != "priem" {
				t.Fatalf("got %s %s %s, want next of priem", m.Type, m.ID, m.Payload)
			}
			var resp struct{ Data json.RawMessage }
			if err := json.Unmarshal(m.Payload, &resp); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(resp.Data, &heard); err != nil {
				t.Fatal(err)
			}
		}
		got := heard.ResearcherUpdated
		if got.Name != "Jason Priem" || *got.HIndex != 17 || got.FiguresSource == nil || got.FiguresSource.Source != "OPENALEX" ||
			got.FiguresSource.UpdatedAt.Before(before) || got.FiguresSource.UpdatedAt.After(time.Now()) {
			t.Errorf("researcherUpdated: %+v %+v, want Jason Priem, h-index 17 from OPENALEX written during the run", got, got.FiguresSource)
		}

		// The sources through the API, on papers read by id and on
		// papers of a list page (read without their long text).
		body, _ := json.Marshal(map[string]string{"query": fmt.Sprintf(`{
			oa: paper(id: "1802.04375") { citedByCount citedByCountSource { source } }
			s2: paper(id: "physics/0602001") { citedByCount citedByCountSource { source } }
			none: paper(id: "0704.0001") { citedByCount citedByCountSource { source } }
			researcher(id: "%d") { figuresSource { source } papers(first: 5) { nodes { arxivId citedByCountSource { source } } } }
		}`, priem[0].ID)})
		resp, err := http.Post(api.URL+"/graphql", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer struct {
			Data   json.RawMessage
			Errors []struct{ Message string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || len(answer.Errors) > 0 {
			t.Fatalf("query: %v %+v", err, answer.Errors)
		}
		want := `{"oa":{"citedByCount":962,"citedByCountSource":{"source":"OPENALEX"}},` +
			`"s2":{"citedByCount":0,"citedByCountSource":{"source":"SEMANTIC_SCHOLAR"}},` +
			`"none":{"citedByCount":null,"citedByCountSource":null},` +
			`"researcher":{"figuresSource":{"source":"OPENALEX"},"papers":{"nodes":[{"arxivId":"1802.04375","citedByCountSource":{"source":"OPENALEX"}}]}}}`
		if string(answer.Data) != want {
			t.Errorf("sources:\n%s\nwant\n%s", answer.Data, want)
		}
	})
}

// enrichTestdata reads one of the objects enrich's tests serve.
func enrichTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(enrichTestdataDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const enrichTestdataDir = "../../enrich/testdata"

// seedEnrichArchive imports the papers enrich's tests start from:
// 0704.0001 as Kaggle has it, and the two made-up papers that carry the
// DOIs and bylines of the OpenAlex work and the Semantic Scholar paper the
// fake APIs serve.
func seedEnrichArchive(t *testing.T, bdb *bun.DB) {
	t.Helper()
	paths := []string{filepath.Join(enrichTestdataDir, "kaggle-0704.0001.jsonl"), filepath.Join(enrichTestdataDir, "made-up.jsonl")}
	sum, err := ingest.Import(context.Background(), bdb, ingest.Options{Format: ingest.Kaggle, Paths: paths})
	if err != nil || !sum.OK() || sum.Read != 3 {
		t.Fatalf("seed: %+v, %v", sum, err)
	}
}

// fakeOpenAlex serves OpenAlex's /works and /authors: the work
// W2741809807 to a filter naming its DOI, the author A5023888391 to one
// naming it, and empty pages to anything else.
func fakeOpenAlex(t *testing.T) http.Handler {
	work, author := enrichTestdata(t, "openalex-work-W2741809807.json"), enrichTestdata(t, "openalex-author-A5023888391.json")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("mailto") != "lead@example.org" {
			t.Errorf("OpenAlex asked %s, want mailto=lead@example.org", r.URL)
		}
		filter := q.Get("filter")
		results := []json.RawMessage{}
		switch {
		case r.URL.Path == "/works" && strings.Contains(filter, "10.7717/peerj.4375") && q.Get("cursor") == "*":
			results = append(results, work)
		case r.URL.Path == "/authors" && slices.Contains(strings.Split(strings.TrimPrefix(filter, "openalex:"), "|"), "A5023888391"):
			results = append(results, author)
		}
		json.NewEncoder(w).Encode(map[string]any{"meta": map[string]any{"next_cursor": nil}, "results": results})
	})
}

// fakeS2 serves Semantic Scholar's /paper/batch and /author/batch: the
// paper 223588394 for ARXIV:physics/0602001 and, for the author
// 2096896523, the profile it was merged into, which no paper of the
// archive lists; null for anything else.
func fakeS2(t *testing.T) http.Handler {
	paper, merged := enrichTestdata(t, "s2-paper-223588394.json"), enrichTestdata(t, "s2-author-119387837.json")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("x-api-key") != "s2-key" {
			t.Errorf("S2 asked %s %s with key %q, want POST with key s2-key", r.Method, r.URL, r.Header.Get("x-api-key"))
		}
		var body struct{ IDs []string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("S2 body: %v", err)
		}
		kind := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/batch")
		out := make([]json.RawMessage, len(body.IDs))
		for i, id := range body.IDs {
			out[i] = json.RawMessage("null")
			switch {
			case kind == "paper" && id == "ARXIV:physics/0602001":
				out[i] = paper
			case kind == "author" && id == "2096896523":
				out[i] = merged
			}
		}
		json.NewEncoder(w).Encode(out)
	})
}
