package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

const (
	mediaJSON     = "application/json"
	mediaResponse = "application/graphql-response+json"
)

// newTestServer builds a server over bdb; fields set in cfg override the
// defaults.
func newTestServer(t *testing.T, bdb *bun.DB, cfg Config) *Server {
	t.Helper()
	cfg.DB = bdb
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sqliteServer is newTestServer on a fresh SQLite database.
func sqliteServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	return newTestServer(t, dbtest.Open(t, dbtest.NewMigrated(t, "sqlite")), cfg)
}

// gqlResponse is a GraphQL response as the tests read it.
type gqlResponse struct {
	Data   json.RawMessage
	Errors []struct {
		Message    string
		Extensions struct{ Code, RequestID string }
	}
}

// errorCode returns the first error's extensions.code, or "" if none.
func (r gqlResponse) errorCode() string {
	if len(r.Errors) == 0 {
		return ""
	}
	return r.Errors[0].Extensions.Code
}

// serve sends req to h and returns the recorded response.
func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// post builds a POST /graphql request with body as its JSON and accept as
// its Accept header (none when empty).
func post(t *testing.T, body any, accept string) *http.Request {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(b))
	req.Header.Set("Content-Type", mediaJSON)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return req
}

// decode reads a GraphQL response from rec.
func decode(t *testing.T, rec *httptest.ResponseRecorder) gqlResponse {
	t.Helper()
	var resp gqlResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("decode %q: %v", rec.Body.String(), err)
	}
	return resp
}

func TestEndpoints(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	tests := []struct {
		name, method, target string
		wantStatus           int
		wantType             string
		wantBody             string // a substring of the body
	}{
		{name: "graphiql page", method: "GET", target: "/", wantStatus: http.StatusOK,
			wantType: "text/html; charset=utf-8", wantBody: `<div id="graphiql" data-endpoint="/graphql"`},
		{name: "healthz", method: "GET", target: "/healthz", wantStatus: http.StatusOK,
			wantType: "text/plain; charset=utf-8", wantBody: "ok\n"},
		{name: "readyz", method: "GET", target: "/readyz", wantStatus: http.StatusOK, wantBody: "ok\n"},
		{name: "metrics", method: "GET", target: "/metrics", wantStatus: http.StatusOK,
			wantBody: "papergraph_sql_statements_total"},
		{name: "graphql GET", method: "GET", target: "/graphql?query=%7B__typename%7D", wantStatus: http.StatusOK,
			wantType: mediaJSON, wantBody: `{"data":{"__typename":"Query"},`},
		{name: "graphql OPTIONS", method: "OPTIONS", target: "/graphql", wantStatus: http.StatusOK},
		{name: "graphql PUT", method: "PUT", target: "/graphql", wantStatus: http.StatusMethodNotAllowed},
		{name: "unknown path", method: "GET", target: "/nope", wantStatus: http.StatusNotFound},
		{name: "healthz POST", method: "POST", target: "/healthz", wantStatus: http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, httptest.NewRequest(tt.method, tt.target, nil))
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %q)", rec.Code, tt.wantStatus, rec.Body.String())
			}
			if got := rec.Header().Get("Content-Type"); tt.wantType != "" && got != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
			}
			if !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("body = %q, want it to contain %q", rec.Body.String(), tt.wantBody)
			}
		})
	}
}

// TestContentNegotiation checks GraphQL over HTTP's media types and status
// codes: application/graphql-response+json clients get 4xx for requests
// that never execute, application/json clients (and clients that send no
// Accept) get 200 with the errors in the body.
func TestContentNegotiation(t *testing.T) {
	h := sqliteServer(t, Config{MaxDepth: 2}).Handler()
	tests := []struct {
		name, accept, query string
		wantStatus          int
		wantType            string
		wantCode            string
	}{
		{"response+json success", mediaResponse, "{ __typename }", 200, mediaResponse, ""},
		{"response+json syntax error", mediaResponse, "{ __typename", 400, mediaResponse, "GRAPHQL_PARSE_FAILED"},
		{"response+json validation error", mediaResponse, "{ nope }", 400, mediaResponse, "GRAPHQL_VALIDATION_FAILED"},
		{"response+json over a limit", mediaResponse, "{ paper(id: \"x\") { authors { name } } }", 400, mediaResponse, codeDepthLimit},
		{"json success", mediaJSON, "{ __typename }", 200, mediaJSON, ""},
		{"json syntax error", mediaJSON, "{ __typename", 200, mediaJSON, "GRAPHQL_PARSE_FAILED"},
		{"json validation error", mediaJSON, "{ nope }", 200, mediaJSON, "GRAPHQL_VALIDATION_FAILED"},
		{"json over a limit", mediaJSON, "{ paper(id: \"x\") { authors { name } } }", 200, mediaJSON, codeDepthLimit},
		{"json preferred", mediaJSON + ", " + mediaResponse, "{ nope }", 200, mediaJSON, "GRAPHQL_VALIDATION_FAILED"},
		{"response+json preferred", mediaResponse + ", " + mediaJSON, "{ nope }", 400, mediaResponse, "GRAPHQL_VALIDATION_FAILED"},
		{"no accept success", "", "{ __typename }", 200, mediaJSON, ""},
		{"no accept syntax error", "", "{ __typename", 200, mediaJSON, "GRAPHQL_PARSE_FAILED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, post(t, map[string]string{"query": tt.query}, tt.accept))
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %q)", rec.Code, tt.wantStatus, rec.Body.String())
			}
			if got := rec.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
			}
			if got := decode(t, rec).errorCode(); got != tt.wantCode {
				t.Errorf("extensions.code = %q, want %q", got, tt.wantCode)
			}
		})
	}
}

func TestGET(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	tests := []struct {
		name       string
		params     url.Values
		wantStatus int
		wantData   string
		wantCode   string
	}{
		{"query", url.Values{"query": {"{ __typename }"}}, 200, `{"__typename":"Query"}`, ""},
		{"named operation with variables",
			url.Values{
				"query":         {"query A { a: __typename } query B($id: String!) { paper(id: $id) { __typename } b: __typename }"},
				"operationName": {"A"},
				"variables":     {`{"id": "x"}`},
			}, 200, `{"a":"Query"}`, ""},
		{"mutation", url.Values{"query": {`mutation { followCategory(code: "hep-th") { code } }`}}, 405, "", ""},
		{"bad variables", url.Values{"query": {"{ __typename }"}, "variables": {"{"}}, 400, "", ""},
		{"field error", url.Values{"query": {`{ paper(id: "xyz") { title } }`}}, 200, "", "BAD_USER_INPUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/graphql?"+tt.params.Encode(), nil)
			req.Header.Set("Accept", mediaResponse)
			rec := serve(h, req)
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %q)", rec.Code, tt.wantStatus, rec.Body.String())
			}
			resp := decode(t, rec)
			if got := string(resp.Data); tt.wantData != "" && got != tt.wantData {
				t.Errorf("data = %s, want %s", got, tt.wantData)
			}
			if got := resp.errorCode(); got != tt.wantCode {
				t.Errorf("extensions.code = %q, want %q", got, tt.wantCode)
			}
			// Only a clean answer may be cached.
			wantCache := ""
			if tt.wantStatus == 200 && tt.wantCode == "" {
				wantCache = cacheMaxAge
			}
			if got := rec.Header().Get("Cache-Control"); got != wantCache {
				t.Errorf("Cache-Control = %q, want %q", got, wantCache)
			}
		})
	}
}

// TestPOSTIsNotCached: answers to POST carry no Cache-Control.
func TestPOSTIsNotCached(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{"query":"{ __typename }"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := serve(h, req)
	if rec.Code != 200 || rec.Header().Get("Cache-Control") != "" {
		t.Errorf("POST: status %d, Cache-Control %q; want 200 and none", rec.Code, rec.Header().Get("Cache-Control"))
	}
}

// TestPersistedQuery runs the automatic persisted query round trip: an
// unknown hash, then the query with its hash, then the hash alone.
func TestPersistedQuery(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	const query = "{ __typename }"
	sum := sha256.Sum256([]byte(query))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	steps := []struct {
		name        string
		body        map[string]any
		wantMessage string
		wantData    string
	}{
		{"hash miss", map[string]any{"extensions": ext}, "PersistedQueryNotFound", ""},
		{"register", map[string]any{"query": query, "extensions": ext}, "", `{"__typename":"Query"}`},
		{"hash hit", map[string]any{"extensions": ext}, "", `{"__typename":"Query"}`},
	}
	for _, step := range steps {
		resp := decode(t, serve(h, post(t, step.body, mediaJSON)))
		gotMessage := ""
		if len(resp.Errors) > 0 {
			gotMessage = resp.Errors[0].Message
		}
		if gotMessage != step.wantMessage {
			t.Errorf("%s: error = %q, want %q", step.name, gotMessage, step.wantMessage)
		}
		if step.wantData != "" && string(resp.Data) != step.wantData {
			t.Errorf("%s: data = %s, want %s", step.name, resp.Data, step.wantData)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	h := sqliteServer(t, Config{MaxBodyBytes: 64}).Handler()
	small := `{"query":"{ __typename }"}`
	large := `{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("x", 64) + `"}}`
	tests := []struct {
		name       string
		body       string
		chunked    bool // no Content-Length: the limit must bite while reading
		wantStatus int
	}{
		{"small", small, false, http.StatusOK},
		{"large", large, false, http.StatusRequestEntityTooLarge},
		{"small chunked", small, true, http.StatusOK},
		{"large chunked", large, true, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", mediaJSON)
			if tt.chunked {
				req.ContentLength = -1
			}
			if rec := serve(h, req); rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %q)", rec.Code, tt.wantStatus, rec.Body.String())
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	var logs bytes.Buffer
	h := sqliteServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Handler()
	tests := []struct {
		name, in string
		wantEcho bool
	}{
		{"client id kept", "req-42.a:b_c", true},
		{"none given", "", false},
		{"unsafe id replaced", "x\"y z", false},
		{"overlong id replaced", strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			req := post(t, map[string]string{"query": "query Probe { __typename }"}, "")
			if tt.in != "" {
				req.Header.Set(requestIDHeader, tt.in)
			}
			got := serve(h, req).Header().Get(requestIDHeader)
			if tt.wantEcho && got != tt.in {
				t.Errorf("X-Request-Id = %q, want %q", got, tt.in)
			}
			if !tt.wantEcho && (got == tt.in || !validRequestID(got)) {
				t.Errorf("X-Request-Id = %q, want a fresh valid id", got)
			}
			line := logs.String()
			for _, want := range []string{"request_id=" + got, "operation=Probe", "status=200", "path=/graphql"} {
				if !strings.Contains(line, want) {
					t.Errorf("log %q lacks %q", line, want)
				}
			}
			if n := strings.Count(line, "\n"); n != 1 {
				t.Errorf("request logged %d lines, want 1", n)
			}
		})
	}
}

// TestInternalErrorRequestID checks that an internal error names the
// request by the id of the X-Request-Id header, given or made, so that a
// client's report leads to the server's log line.
func TestInternalErrorRequestID(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	if _, err := bdb.ExecContext(context.Background(), "ALTER TABLE researchers RENAME TO gone"); err != nil {
		t.Fatal(err)
	}
	h := newTestServer(t, bdb, Config{}).Handler()
	for _, given := range []string{"req-internal-1", ""} {
		req := post(t, map[string]string{"query": `{ researcher(id: "1") { name } }`}, "")
		if given != "" {
			req.Header.Set(requestIDHeader, given)
		}
		rec := serve(h, req)
		header, resp := rec.Header().Get(requestIDHeader), decode(t, rec)
		if resp.errorCode() != "INTERNAL_SERVER_ERROR" {
			t.Fatalf("given %q: errors %+v, want INTERNAL_SERVER_ERROR", given, resp.Errors)
		}
		if got := resp.Errors[0].Extensions.RequestID; got != header || given != "" && got != given {
			t.Errorf("given %q: extensions.requestId %q, X-Request-Id %q; want them equal", given, got, header)
		}
	}
}

func TestMetrics(t *testing.T) {
	statements := &db.StatementCounter{}
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite")).WithQueryHook(statements)
	// Each server counts the statements it sends, once, however many
	// share the database (as servers in tests do), and none that others
	// send.
	other := newTestServer(t, bdb, Config{}).Handler()
	h := newTestServer(t, bdb, Config{}).Handler()
	if _, err := bdb.NewSelect().ColumnExpr("1").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := statements.Count()
	for _, body := range []map[string]string{
		{"query": "query Probe { __typename }"},
		{"query": "query Probe { __typename }"},
		{"query": "{ __typename }"},
		{"query": "{ nope }"},
		{"query": "{ nope", "operationName": "not a name!"},
		{"query": `query Lookup { paper(id: "hep-th/9201001") { title } }`}, // sends SQL
	} {
		serve(h, post(t, body, mediaResponse))
	}
	body := serve(h, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String()
	for _, want := range []string{
		`papergraph_graphql_requests_total{code="200",has_errors="false",operation="Probe"} 2`,
		`papergraph_graphql_requests_total{code="200",has_errors="false",operation="anonymous"} 1`,
		`papergraph_graphql_requests_total{code="400",has_errors="true",operation="anonymous"} 1`,
		`papergraph_graphql_requests_total{code="400",has_errors="true",operation="other"} 1`,
		`papergraph_graphql_request_duration_seconds_count{operation="Probe"} 2`,
		`papergraph_graphql_requests_total{code="200",has_errors="false",operation="Lookup"} 1`,
		fmt.Sprintf("papergraph_sql_statements_total %d\n", statements.Count()-before),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if body := serve(other, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String(); !strings.Contains(body, "papergraph_sql_statements_total 0\n") {
		t.Errorf("a server that was sent no request counts statements: %s", metricLine(body, "papergraph_sql_statements_total"))
	}
	if statements.Count() == before {
		t.Error("the lookup sent no SQL; the statement count above proves nothing")
	}
}

// metricLine returns the line of the exposition body that gives name.
func metricLine(body, name string) string {
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, name+" ") {
			return line
		}
	}
	return name + " missing"
}

func TestReadyz(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		h := newTestServer(t, bdb, Config{}).Handler()
		if rec := serve(h, httptest.NewRequest(http.MethodGet, "/readyz", nil)); rec.Code != http.StatusOK {
			t.Errorf("open database: status = %d, want 200", rec.Code)
		}
		bdb.Close()
		rec := serve(h, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("closed database: status = %d, want 503", rec.Code)
		}
		if got, want := rec.Body.String(), "database not ready\n"; got != want {
			t.Errorf("closed database: body = %q, want %q", got, want)
		}
	})
}

func TestServeShutdown(t *testing.T) {
	s := sqliteServer(t, Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok\n" {
		t.Errorf("healthz = %q, want %q", body, "ok\n")
	}

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve returned %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
}

func TestNewRejects(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no database", Config{}},
		{"bad cors origin", Config{DB: bdb, CORSOrigins: []string{"localhost:3000"}}},
		{"cors origin with path", Config{DB: bdb, CORSOrigins: []string{"https://example.org/app"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil {
				t.Error("New succeeded, want an error")
			}
		})
	}
}

// TestExampleQuery runs the query GraphiQL opens with against a few
// imported papers, so that it stays valid as the schema changes.
func TestExampleQuery(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{"testdata/pscp.csv"}})
		if err != nil || !sum.OK() {
			t.Fatalf("import: %+v, %v", sum, err)
		}
		h := newTestServer(t, bdb, Config{}).Handler()
		rec := serve(h, post(t, map[string]string{"query": ExampleQuery}, mediaResponse))
		resp := decode(t, rec)
		if rec.Code != http.StatusOK || len(resp.Errors) > 0 {
			t.Fatalf("status %d, errors %+v", rec.Code, resp.Errors)
		}
		var data struct {
			Paper struct {
				Title   string
				Authors []struct {
					Name       string
					Researcher struct {
						Name       string
						PaperCount int
						Coauthors  struct {
							Nodes []struct {
								Researcher       struct{ Name string }
								SharedPaperCount int
							}
						}
					}
				}
			}
		}
		if err := json.Unmarshal(resp.Data, &data); err != nil {
			t.Fatal(err)
		}
		if got, want := data.Paper.Title, "Combinatorics of the Modular Group II: the Kontsevich integrals"; got != want {
			t.Errorf("title = %q, want %q", got, want)
		}
		var got []string
		for _, a := range data.Paper.Authors {
			line := fmt.Sprintf("%s (%s, %d papers):", a.Name, a.Researcher.Name, a.Researcher.PaperCount)
			for _, c := range a.Researcher.Coauthors.Nodes {
				line += fmt.Sprintf(" %s %d", c.Researcher.Name, c.SharedPaperCount)
			}
			got = append(got, line)
		}
		want := []string{
			"C. Itzykson (C. Itzykson, 3 papers): J.-B. Zuber 3 P. D. Francesco 1",
			"J.-B. Zuber (J.-B. Zuber, 3 papers): C. Itzykson 3 P. D. Francesco 1",
		}
		if !slices.Equal(got, want) {
			t.Errorf("authors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// stallUntilDone is a query hook that holds every statement until its
// context ends, as a statement slower than the request's time would.
type stallUntilDone struct{}

func (stallUntilDone) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	<-ctx.Done()
	return ctx
}

func (stallUntilDone) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestDeadlineIsTimeout checks that a field stopped by its request's
// deadline reads as TIMEOUT, not as an internal error.
func TestDeadlineIsTimeout(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	bdb = bdb.WithQueryHook(stallUntilDone{})
	h := newTestServer(t, bdb, Config{}).Handler()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	rec := serve(h, post(t, map[string]string{"query": `{ researcher(id: "1") { name } }`}, "").WithContext(ctx))
	if resp := decode(t, rec); resp.errorCode() != "TIMEOUT" {
		t.Errorf("errors %+v, want TIMEOUT", resp.Errors)
	}
}
