package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/notify"
)

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// wsClient is a graphql-transport-ws client of a test server.
type wsClient struct {
	t    *testing.T
	ctx  context.Context
	conn *websocket.Conn
	// in has the messages that answerPings's reader read, but pings and
	// pongs, in order; it is closed, after inErr is set, when reading
	// fails. It is nil while the test reads the connection itself.
	in    chan wsMessage
	inErr error
}

// answerPings has c read its connection from now on, answering each ping
// as it comes, as a graphql-transport-ws client does, and keeping the
// other messages for read. A test that waits for the server (on the bus)
// without reading needs it: the server closes a connection whose pong is
// late, and with it every subscription the test waits for.
func (c *wsClient) answerPings() {
	c.in = make(chan wsMessage, 1<<10)
	go func() {
		defer close(c.in)
		for {
			var m wsMessage
			err := wsjson.Read(c.ctx, c.conn, &m)
			if err == nil && m.Type == "ping" {
				err = wsjson.Write(c.ctx, c.conn, wsMessage{Type: "pong"})
			}
			if err != nil {
				c.inErr = err
				return
			}
			if m.Type != "ping" && m.Type != "pong" {
				c.in <- m
			}
		}
	}()
}

// dialWS opens a graphql-transport-ws connection to srv and completes its
// handshake.
func dialWS(t *testing.T, ctx context.Context, srv *httptest.Server) *wsClient {
	t.Helper()
	return dialWSWith(t, ctx, srv, websocket.DialOptions{})
}

// dialWSWith is dialWS with opts (an HTTP client, headers) for the dial;
// the subprotocol is set here.
func dialWSWith(t *testing.T, ctx context.Context, srv *httptest.Server, opts websocket.DialOptions) *wsClient {
	t.Helper()
	opts.Subprotocols = []string{"graphql-transport-ws"}
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql", &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	c := &wsClient{t: t, ctx: ctx, conn: conn}
	c.send(wsMessage{Type: "connection_init"})
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("got %s, want connection_ack", m.Type)
	}
	return c
}

func (c *wsClient) send(m wsMessage) {
	c.t.Helper()
	if err := wsjson.Write(c.ctx, c.conn, m); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next message that is neither a ping, which it
// answers as the protocol asks, nor a pong.
func (c *wsClient) read() wsMessage {
	c.t.Helper()
	if c.in != nil {
		m, ok := <-c.in
		if !ok {
			c.t.Fatal(c.inErr)
		}
		return m
	}
	for {
		var m wsMessage
		if err := wsjson.Read(c.ctx, c.conn, &m); err != nil {
			c.t.Fatal(err)
		}
		switch m.Type {
		case "ping":
			c.send(wsMessage{Type: "pong"})
		case "pong":
		default:
			return m
		}
	}
}

// subscribe starts operation id with query.
func (c *wsClient) subscribe(id, query string) {
	c.t.Helper()
	payload, _ := json.Marshal(map[string]string{"query": query})
	c.send(wsMessage{ID: id, Type: "subscribe", Payload: payload})
}

// next reads the next message, which must be a "next" of id, into data.
func (c *wsClient) next(id string, data any) {
	c.t.Helper()
	m := c.read()
	if m.Type != "next" || m.ID != id {
		c.t.Fatalf("got %s %s %s, want next of %s", m.Type, m.ID, m.Payload, id)
	}
	var resp gqlResponse
	if err := json.Unmarshal(m.Payload, &resp); err != nil {
		c.t.Fatal(err)
	}
	if len(resp.Errors) > 0 {
		c.t.Fatalf("errors: %+v", resp.Errors)
	}
	if err := json.Unmarshal(resp.Data, data); err != nil {
		c.t.Fatal(err)
	}
}

// refusal reads the answer to a refused operation id, an "error" message
// or a "next" with errors, then "complete", and returns its first code.
func (c *wsClient) refusal(id string) string {
	c.t.Helper()
	m := c.read()
	if m.ID != id {
		c.t.Fatalf("got %s of %q, want an answer to %s", m.Type, m.ID, id)
	}
	var codes []struct{ Extensions struct{ Code string } }
	switch m.Type {
	case "error":
		if err := json.Unmarshal(m.Payload, &codes); err != nil {
			c.t.Fatal(err)
		}
		// gqlgen follows an error with a complete.
		if done := c.read(); done.Type != "complete" || done.ID != id {
			c.t.Fatalf("got %s of %q after the error, want complete", done.Type, done.ID)
		}
	case "next":
		var resp struct {
			Errors []struct{ Extensions struct{ Code string } }
		}
		if err := json.Unmarshal(m.Payload, &resp); err != nil {
			c.t.Fatal(err)
		}
		codes = resp.Errors
		if done := c.read(); done.Type != "complete" {
			c.t.Fatalf("got %s after the refusal, want complete", done.Type)
		}
	default:
		c.t.Fatalf("got %s %s, want a refusal", m.Type, m.Payload)
	}
	if len(codes) == 0 {
		c.t.Fatalf("refusal of %s without errors", id)
	}
	return codes[0].Extensions.Code
}

// liveBus returns the bus a server on bdb would use: pg_notify and a
// listener on PostgreSQL, in process on SQLite.
func liveBus(t *testing.T, ctx context.Context, dsn string, bdb *bun.DB) *notify.Bus {
	t.Helper()
	if !strings.HasPrefix(dsn, "postgres") {
		return notify.NewLocal()
	}
	bus := notify.NewPostgres(bdb)
	ready := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		bus.Listen(ctx, dsn, slog.New(slog.NewTextHandler(t.Output(), nil)), func() {
			select {
			case ready <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-ready:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	return bus
}

// waitSubscribers waits until bus has n subscribers.
func waitSubscribers(t *testing.T, ctx context.Context, bus *notify.Bus, n int) {
	t.Helper()
	for bus.Subscribers() != n {
		select {
		case <-ctx.Done():
			t.Fatalf("%d subscribers, want %d: %v", bus.Subscribers(), n, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// kagglePaper is one record of the arXiv metadata snapshot.
func kagglePaper(id, category, author string) string {
	return fmt.Sprintf(`{"id":%q,"authors":%q,"title":"Paper %s","categories":%q,"abstract":"About %s.","versions":[{"version":"v1","created":"Mon, 2 Apr 2007 19:18:42 GMT"}],"update_date":"2007-04-02","authors_parsed":[]}`,
		id, author, id, category, id)
}

// importLive imports records and publishes each commit on bus, as serve
// --harvest-every and the import commands do.
func importLive(t *testing.T, ctx context.Context, bdb *bun.DB, bus *notify.Bus, records ...string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "papers.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(records, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ingest.Import(ctx, bdb, ingest.Options{Format: ingest.Kaggle, Paths: []string{file},
		OnCommit: func(papers, researchers []int64) {
			if err := bus.Publish(ctx, papers, researchers); err != nil {
				t.Error(err)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
}

type addedPaper struct {
	PapersAdded struct {
		ArxivID string
		Authors []struct{ Researcher struct{ ResearcherID int64 } }
	}
}

// A subscriber to papersAdded hears exactly the papers an import writes
// that match its filter, one "next" each; researcherUpdated hears the
// researchers of the papers written.
func TestSubscriptionPapersAdded(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		bus := liveBus(t, ctx, dsn, bdb)
		srv := httptest.NewServer(newTestServer(t, bdb, Config{Writer: bdb, Bus: bus}).Handler())
		defer srv.Close()
		c := dialWS(t, ctx, srv)
		c.answerPings()
		c.subscribe("hep", `subscription { papersAdded(filter: {categories: ["hep-th"]}) { arxivId authors { researcher { researcherId } } } }`)
		waitSubscribers(t, ctx, bus, 1)

		importLive(t, ctx, bdb, bus,
			kagglePaper("0704.0001", "hep-th", "A. One"),
			kagglePaper("0704.0002", "hep-ph", "B. Two"),
			kagglePaper("0704.0003", "hep-th math-ph", "C. Three"))
		var got []string
		var first addedPaper
		for range 2 {
			var p addedPaper
			c.next("hep", &p)
			got = append(got, p.PapersAdded.ArxivID)
			if first.PapersAdded.ArxivID == "" {
				first = p
			}
		}
		slices.Sort(got)
		if want := []string{"0704.0001", "0704.0003"}; !slices.Equal(got, want) {
			t.Errorf("papersAdded: got %v, want %v", got, want)
		}
		if len(first.PapersAdded.Authors) != 1 {
			t.Fatalf("authors of %s: got %d, want 1", first.PapersAdded.ArxivID, len(first.PapersAdded.Authors))
		}
		rid := first.PapersAdded.Authors[0].Researcher.ResearcherID

		c.subscribe("who", fmt.Sprintf(`subscription { researcherUpdated(id: "%d") { researcherId } }`, rid))
		waitSubscribers(t, ctx, bus, 2)
		// A hep-ph paper by someone else, then a hep-th one by the same
		// author: the next answers are the hep-th paper and the author, so
		// the hep-ph paper reached neither subscription.
		importLive(t, ctx, bdb, bus, kagglePaper("0704.0004", "hep-ph", "D. Four"))
		var again []string
		authorPaper := map[string]string{"0704.0001": "A. One", "0704.0003": "C. Three"}[first.PapersAdded.ArxivID]
		importLive(t, ctx, bdb, bus, kagglePaper("0704.0005", "hep-th", authorPaper))
		for range 2 {
			m := c.read()
			var resp struct {
				Data struct {
					PapersAdded       *struct{ ArxivID string }
					ResearcherUpdated *struct{ ResearcherID int64 }
				}
			}
			if m.Type != "next" {
				t.Fatalf("got %s %s, want next", m.Type, m.Payload)
			}
			if err := json.Unmarshal(m.Payload, &resp); err != nil {
				t.Fatal(err)
			}
			switch {
			case m.ID == "hep" && resp.Data.PapersAdded != nil:
				again = append(again, resp.Data.PapersAdded.ArxivID)
			case m.ID == "who" && resp.Data.ResearcherUpdated != nil:
				again = append(again, fmt.Sprint(resp.Data.ResearcherUpdated.ResearcherID))
			default:
				t.Fatalf("unexpected %s", m.Payload)
			}
		}
		slices.Sort(again)
		if want := []string{"0704.0005", fmt.Sprint(rid)}; !slices.Equal(again, want) {
			t.Errorf("after the second imports: got %v, want %v", again, want)
		}
	})
}

// Over the WebSocket only subscriptions run; each is priced by the cost
// model and refused past its limits; a connection holds at most MaxSubscriptions.
func TestSubscriptionRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		bus := notify.NewLocal()
		srv := httptest.NewServer(newTestServer(t, bdb, Config{Bus: bus, MaxNodes: 1000}).Handler())
		defer srv.Close()
		c := dialWS(t, ctx, srv)
		c.answerPings()

		c.subscribe("q", `{ paper(id: "0704.0001") { title } }`)
		if got := c.refusal("q"); got != codeNotSubscription {
			t.Errorf("query over the WebSocket: got %q, want %s", got, codeNotSubscription)
		}
		c.subscribe("dear", `subscription { papersAdded { authors(first: 100) { researcher { papers(first: 100) { nodes { title } } } } } }`)
		if got := c.refusal("dear"); got != codeNodeLimit {
			t.Errorf("subscription of 10,000 nodes an answer: got %q, want %s", got, codeNodeLimit)
		}
		c.subscribe("bad", `subscription { papersAdded(filter: {researcher: "no one at all"}) { title } }`)
		if got := c.refusal("bad"); got != "BAD_USER_INPUT" {
			t.Errorf("bad filter: got %q, want BAD_USER_INPUT", got)
		}
		for i := range MaxSubscriptions {
			c.subscribe(fmt.Sprint(i), `subscription { papersAdded { title } }`)
		}
		waitSubscribers(t, ctx, bus, MaxSubscriptions)
		c.subscribe("one too many", `subscription { papersAdded { title } }`)
		if got := c.refusal("one too many"); got != codeTooManyStreams {
			t.Errorf("subscription %d: got %q, want %s", MaxSubscriptions+1, got, codeTooManyStreams)
		}
		// A second connection of the same client is refused too: the cap
		// is per client as well.
		c2 := dialWS(t, ctx, srv)
		c2.answerPings()
		c2.subscribe("other", `subscription { papersAdded { title } }`)
		if got := c2.refusal("other"); got != codeTooManyStreams {
			t.Errorf("same client, second connection: got %q, want %s", got, codeTooManyStreams)
		}
		// Completing one frees its place.
		c.send(wsMessage{ID: "0", Type: "complete"})
		waitSubscribers(t, ctx, bus, MaxSubscriptions-1)
		c2.subscribe("freed", `subscription { papersAdded { title } }`)
		waitSubscribers(t, ctx, bus, MaxSubscriptions)
	})
}

// The whole server holds at most MaxServerSubscriptions, whoever asks.
func TestServerSubscriptionCap(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	bus := notify.NewLocal()
	srv := httptest.NewServer(newTestServer(t, bdb, Config{Bus: bus, MaxServerSubscriptions: 2}).Handler())
	defer srv.Close()
	c := dialWS(t, ctx, srv)
	c.answerPings()
	c.subscribe("1", `subscription { papersAdded { title } }`)
	c.subscribe("2", `subscription { papersAdded { title } }`)
	waitSubscribers(t, ctx, bus, 2)
	c.subscribe("3", `subscription { papersAdded { title } }`)
	if got := c.refusal("3"); got != codeTooManyStreams {
		t.Errorf("subscription past the server's 2: got %q, want %s", got, codeTooManyStreams)
	}
}

// Each answer of a subscription costs as many statements for a wide
// selection as for a narrow one: the stream has the look-ahead fill the
// answer's fresh loaders for its item (resolvers.EventLoaders), as a root
// does for its objects.
func TestSubscriptionStatementsDepthNotWidth(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		bus := notify.NewLocal()
		// A researcher with 25 papers, each with a co-author, and a paper
		// with 25 authors.
		var records, crowd []string
		for i := range 25 {
			records = append(records, kagglePaper(fmt.Sprintf("0705.%04d", i+1), "hep-th", fmt.Sprintf("H. Hub, C. Co%d", i)))
			crowd = append(crowd, fmt.Sprintf("M. Many%d", i))
		}
		records = append(records, kagglePaper("0706.0001", "hep-ph", strings.Join(crowd, ", ")))
		importLive(t, ctx, bdb, bus, records...)
		var hub, many int64
		if err := bdb.NewRaw("SELECT id FROM researchers ORDER BY paper_count DESC, id LIMIT 1").Scan(ctx, &hub); err != nil {
			t.Fatal(err)
		}
		if err := bdb.NewRaw("SELECT id FROM papers WHERE arxiv_id = '0706.0001'").Scan(ctx, &many); err != nil {
			t.Fatal(err)
		}
		log := &dbtest.Log{}
		bdb.AddQueryHook(log)
		srv := httptest.NewServer(newTestServer(t, bdb, Config{Bus: bus}).Handler())
		defer srv.Close()
		c := dialWS(t, ctx, srv)
		c.answerPings()

		for _, tt := range []struct {
			// query takes the hub's id and n.
			name, query string
			papers      []int64
			researchers []int64
			item        string
			// want statements: a comment each.
			want int
		}{
			// 1 the researcher the event names; 2 a page of their
			// papers; 3 authorships of those.
			{name: "researcherUpdated", query: `subscription { researcherUpdated(id: "%[1]d") { papers(first: %[2]d) { nodes { title authors(first: 3) { name } } } } }`,
				researchers: []int64{hub}, item: `"title"`, want: 3},
			// 1 the event's paper, matched against the filter;
			// 2 its authorships, joined with their researchers;
			// 3 researcher_categories of those.
			{name: "papersAdded", query: `subscription { papersAdded { authors(first: %[2]d) { researcher { name fields(first: 3) { count } } } } }`,
				papers: []int64{many}, item: `"name"`, want: 3},
		} {
			items := map[int]int{}
			for _, n := range []int{2, 20} {
				id := fmt.Sprintf("%s-%d", tt.name, n)
				c.subscribe(id, fmt.Sprintf(tt.query, hub, n))
				waitSubscribers(t, ctx, bus, 1)
				log.Take()
				if err := bus.Publish(ctx, tt.papers, tt.researchers); err != nil {
					t.Fatal(err)
				}
				var data json.RawMessage
				c.next(id, &data)
				sqls := log.Take()
				items[n] = strings.Count(string(data), tt.item+":")
				if len(sqls) != tt.want {
					t.Errorf("%s, n=%d: %d statements, want %d:\n%s", tt.name, n, len(sqls), tt.want, strings.Join(sqls, "\n"))
				}
				c.send(wsMessage{ID: id, Type: "complete"})
				if m := c.read(); m.Type != "complete" || m.ID != id {
					t.Fatalf("got %s of %s, want complete of %s", m.Type, m.ID, id)
				}
				waitSubscribers(t, ctx, bus, 0)
			}
			if items[20] <= items[2] {
				t.Errorf("%s: %d items for n=20, %d for n=2: the case does not test width", tt.name, items[20], items[2])
			}
		}
	})
}

// A subscription sent by HTTP is refused before it starts, by POST and by
// GET: its events go over the WebSocket, and nothing would read a stream
// started for a one-response answer. askStream, whose stream reports a
// failed answer as a subscription error, is among them.
func TestSubscriptionsOverHTTPRefused(t *testing.T) {
	bus := notify.NewLocal()
	h := sqliteServer(t, Config{Bus: bus}).Handler()
	for _, doc := range []string{
		`subscription { papersAdded { title } }`,
		`subscription { askStream(question: "What is the source of axions?") { kind } }`,
	} {
		get := httptest.NewRequest(http.MethodGet, "/graphql?"+url.Values{"query": {doc}}.Encode(), nil)
		get.Header.Set("Accept", mediaJSON)
		for _, req := range []*http.Request{post(t, map[string]any{"query": doc}, mediaJSON), get} {
			resp := decode(t, serve(h, req))
			if resp.errorCode() != codeWebsocketOnly || (len(resp.Data) > 0 && string(resp.Data) != "null") || strings.Contains(resp.Errors[0].Message, "/tmp") {
				t.Errorf("%s %s: %+v, want one %s error and no data", req.Method, doc, resp, codeWebsocketOnly)
			}
		}
	}
	if n := bus.Subscribers(); n != 0 {
		t.Errorf("%d subscribers after refusals, want 0", n)
	}
}

// TestStreamPlaceFreedBeforeComplete: a subscription's place is given
// back when its stream ends, while its operation's context is still
// live, since the transport writes complete before it cancels that
// context; a client that subscribes again on reading complete must find
// the place free.
func TestStreamPlaceFreedBeforeComplete(t *testing.T) {
	counts := newStreamCounts(1000, time.Minute)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), wsSessionKey{}, new(wsSession)))
	defer cancel()
	var handlers []graphql.ResponseHandler
	for range MaxSubscriptions {
		sent := false
		handlers = append(handlers, counts.InterceptOperation(ctx, func(context.Context) graphql.ResponseHandler {
			return func(context.Context) *graphql.Response {
				if sent {
					return nil
				}
				sent = true
				return &graphql.Response{Data: []byte(`{}`)}
			}
		}))
	}
	refused := counts.InterceptOperation(ctx, func(context.Context) graphql.ResponseHandler {
		t.Fatal("a subscription past the cap was started")
		return nil
	})
	if r := refused(ctx); len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != codeTooManyStreams {
		t.Fatalf("past the cap: %+v, want %s", r, codeTooManyStreams)
	}
	for _, h := range handlers {
		for h(ctx) != nil {
		}
	}
	counts.mu.Lock()
	total := counts.total
	counts.mu.Unlock()
	if total != 0 {
		t.Fatalf("%d places held after every stream ended, want 0", total)
	}
	started := false
	again := counts.InterceptOperation(ctx, func(context.Context) graphql.ResponseHandler {
		started = true
		return func(context.Context) *graphql.Response { return nil }
	})
	again(ctx)
	cancel()
	if !started {
		t.Fatal("a subscription after complete was refused")
	}
}
