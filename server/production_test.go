package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db/dbtest"
)

// TestRequestErrorHasNoData: a request that fails before execution gets
// errors and no data entry, for both media types (graphql-http's audits
// D586 and 5E5B ask it of application/graphql-response+json).
func TestRequestErrorHasNoData(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	tests := []struct {
		name, accept, query string
		wantStatus          int
	}{
		{"response+json parse failure", mediaResponse, "{", 400},
		{"response+json validation failure", mediaResponse, "{ 8 }", 400},
		{"response+json unknown field", mediaResponse, "{ nope }", 400},
		{"json parse failure", mediaJSON, "{", 200},
		{"json validation failure", mediaJSON, "{ nope }", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, post(t, map[string]string{"query": tt.query}, tt.accept))
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("decode %q: %v", rec.Body.String(), err)
			}
			if _, ok := body["data"]; ok {
				t.Errorf("body = %s, want no data entry", rec.Body.String())
			}
			if len(body["errors"]) == 0 {
				t.Errorf("body = %s, want errors", rec.Body.String())
			}
		})
	}
	// A field error is not a request error: data stays.
	rec := serve(h, post(t, map[string]string{"query": `{ paper(id: "xyz") { title } }`}, mediaResponse))
	if !strings.Contains(rec.Body.String(), `"data":`) {
		t.Errorf("field error body = %s, want a data entry", rec.Body.String())
	}
}

func TestSecurityHeaders(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	for _, target := range []string{"/graphql?query=%7B__typename%7D", "/healthz", "/metrics", "/nope", "/?query=%7B__typename%7D"} {
		rec := serve(h, httptest.NewRequest(http.MethodGet, target, nil))
		for header, want := range map[string]string{
			"X-Content-Type-Options": "nosniff",
			"Referrer-Policy":        "no-referrer",
			"X-Frame-Options":        "DENY",
		} {
			if got := rec.Header().Get(header); got != want {
				t.Errorf("%s: %s = %q, want %q", target, header, got, want)
			}
		}
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: Content-Security-Policy = %q, want default-src and frame-ancestors 'none'", target, csp)
		}
	}
}

// TestGraphiQLPolicy checks that GraphiQL's page runs nothing inline and
// loads everything from this server, under a policy that allows no more.
func TestGraphiQLPolicy(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	rec := serve(h, httptest.NewRequest(http.MethodGet, "/", nil))
	directives := map[string]string{}
	for _, d := range strings.Split(rec.Header().Get("Content-Security-Policy"), "; ") {
		name, value, _ := strings.Cut(d, " ")
		directives[name] = value
	}
	for name, want := range map[string]string{
		"default-src": "'none'", "script-src": "'self'", "style-src": "'self'", "font-src": "'self'",
		"img-src": "data:", "connect-src": "'self'", "frame-ancestors": "'none'",
	} {
		if got := directives[name]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}

	page := rec.Body.String()
	for _, inline := range []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>`), regexp.MustCompile(`<style`), regexp.MustCompile(`\s(?:style|on[a-z]+)=`),
	} {
		for _, m := range inline.FindAllString(page, -1) {
			if !strings.Contains(m, " src=") {
				t.Errorf("page has %q, which the policy refuses", m)
			}
		}
	}
	wantTypes := map[string]string{"script": "text/javascript", "stylesheet": "text/css", "license": "text/plain"}
	refs := regexp.MustCompile(`<(?:script|link rel="([a-z]+)")[^>]*(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) != len(wantTypes) {
		t.Fatalf("page names %d files, want a script, a style sheet and the licences", len(refs))
	}
	for _, m := range refs {
		kind := cmp.Or(m[1], "script")
		if !strings.HasPrefix(m[2], "/") || strings.HasPrefix(m[2], "//") {
			t.Errorf("page loads %s from elsewhere than this server", m[2])
			continue
		}
		rec := serve(h, httptest.NewRequest(http.MethodGet, m[2], nil))
		if got := rec.Header().Get("Content-Type"); rec.Code != http.StatusOK || !strings.HasPrefix(got, wantTypes[kind]) {
			t.Errorf("GET %s = %d %s, want 200 %s", m[2], rec.Code, got, wantTypes[kind])
		}
	}
}

// TestVaryAccept: GET answers, which caches may keep, vary by Accept,
// since Accept picks their media type and status.
func TestVaryAccept(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	rec := serve(h, httptest.NewRequest(http.MethodGet, "/graphql?query=%7B__typename%7D", nil))
	if rec.Header().Get("Cache-Control") == "" {
		t.Fatal("GET answer is not cacheable; the test checks nothing")
	}
	if got := rec.Header().Values("Vary"); !strings.Contains(strings.Join(got, ","), "Accept") {
		t.Errorf("Vary = %q, want Accept among them", got)
	}
}

func TestDisableIntrospection(t *testing.T) {
	off := sqliteServer(t, Config{DisableIntrospection: true}).Handler()
	on := sqliteServer(t, Config{}).Handler()
	tests := []struct {
		name, query string
		refused     bool
	}{
		{"schema", "{ __schema { queryType { name } } }", true},
		{"type", `{ __type(name: "Paper") { name } }`, true},
		{"through a fragment", `query { ...F } fragment F on Query { ... on Query { __type(name: "Paper") { name } } }`, true},
		{"typename", "{ __typename }", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(off, post(t, map[string]string{"query": tt.query}, mediaResponse))
			wantStatus, wantCode := 200, ""
			if tt.refused {
				wantStatus, wantCode = 400, codeIntrospectionDisabled
			}
			if rec.Code != wantStatus {
				t.Errorf("off: status = %d, want %d", rec.Code, wantStatus)
			}
			if got := decode(t, rec).errorCode(); got != wantCode {
				t.Errorf("off: code = %q, want %q", got, wantCode)
			}
			if rec := serve(on, post(t, map[string]string{"query": tt.query}, mediaResponse)); rec.Code != 200 || decode(t, rec).errorCode() != "" {
				t.Errorf("on: status %d, body %s; want 200 without errors", rec.Code, rec.Body.String())
			}
		})
	}
}

// TestDisableIntrospectionSuggestsNothing: with introspection off, a
// misspelt field is refused without naming the fields it could have been.
func TestDisableIntrospectionSuggestsNothing(t *testing.T) {
	const query = `{ paper(id: "hep-th/9201001") { titel } }`
	for _, tt := range []struct {
		name    string
		cfg     Config
		suggest bool
	}{
		{"introspection on", Config{}, true},
		{"introspection off", Config{DisableIntrospection: true}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(sqliteServer(t, tt.cfg).Handler(), post(t, map[string]string{"query": query}, mediaResponse))
			resp := decode(t, rec)
			if rec.Code != 400 || len(resp.Errors) != 1 {
				t.Fatalf("status %d, body %s; want 400 with one error", rec.Code, rec.Body.String())
			}
			if got := strings.Contains(resp.Errors[0].Message, `Did you mean "title"`); got != tt.suggest {
				t.Errorf("message %q: suggests title = %v, want %v", resp.Errors[0].Message, got, tt.suggest)
			}
		})
	}
}

func TestDisableGraphiQL(t *testing.T) {
	h := sqliteServer(t, Config{DisableGraphiQL: true}).Handler()
	rec := serve(h, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "/graphql") {
		t.Errorf("GET / = %d %q, want 404 pointing at /graphql", rec.Code, rec.Body.String())
	}
}

func TestMetricsAddr(t *testing.T) {
	s := sqliteServer(t, Config{MetricsAddr: "127.0.0.1:0"})
	if rec := serve(s.Handler(), httptest.NewRequest(http.MethodGet, "/metrics", nil)); rec.Code != http.StatusNotFound {
		t.Errorf("API address /metrics = %d, want 404", rec.Code)
	}
	rec := serve(s.MetricsHandler(), httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "papergraph_sql_statements_total") {
		t.Errorf("metrics address /metrics = %d, want 200 with the metrics", rec.Code)
	}
	// Go's profiles are on the metrics address only.
	if rec := serve(s.MetricsHandler(), httptest.NewRequest(http.MethodGet, "/debug/pprof/goroutine?debug=1", nil)); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "goroutine profile") {
		t.Errorf("metrics address /debug/pprof/goroutine = %d, want 200 with the profile", rec.Code)
	}
	if rec := serve(s.Handler(), httptest.NewRequest(http.MethodGet, "/debug/pprof/goroutine?debug=1", nil)); rec.Code == http.StatusOK {
		t.Errorf("API address /debug/pprof/goroutine = %d, want no profile", rec.Code)
	}
	if s := sqliteServer(t, Config{}); s.MetricsHandler() != nil {
		t.Error("MetricsHandler without MetricsAddr is not nil")
	}
}

// TestOperationLabelsBounded sends more distinct junk operation names than
// the label may take and counts the series /metrics then holds.
func TestOperationLabelsBounded(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	for i := range maxOperationNames + 50 {
		serve(h, post(t, map[string]string{"query": fmt.Sprintf("query Junk%d { __typename }", i)}, mediaJSON))
	}
	body := serve(h, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String()
	series := regexp.MustCompile(`(?m)^papergraph_graphql_request_duration_seconds_count\{operation="([^"]+)"\}`).FindAllStringSubmatch(body, -1)
	if len(series) != maxOperationNames+1 {
		t.Errorf("%d operation series, want %d names and other", len(series), maxOperationNames)
	}
	if !strings.Contains(body, `operation="other"`) {
		t.Error("no other series for the names past the cap")
	}
}

const (
	trustedPaper = `query PaperTitle($id: String!) { paper(id: $id) { title } }`
	trustedType  = `query Probe { __typename }`
)

func sha256ID(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:])
}

func TestTrustedDocuments(t *testing.T) {
	docs := map[string]string{"sha256:" + sha256ID(trustedType): trustedType, sha256ID(trustedPaper): trustedPaper}
	h := sqliteServer(t, Config{TrustedDocuments: docs}).Handler()
	apq := func(doc string) map[string]any {
		return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256ID(doc)}}
	}
	tests := []struct {
		name       string
		body       map[string]any
		accept     string
		wantStatus int
		wantCode   string
		wantData   string
	}{
		{"documentId with prefix", map[string]any{"documentId": "sha256:" + sha256ID(trustedType)}, mediaResponse, 200, "", `{"__typename":"Query"}`},
		{"documentId bare hash", map[string]any{"documentId": sha256ID(trustedType)}, mediaResponse, 200, "", `{"__typename":"Query"}`},
		{"documentId with variables", map[string]any{"documentId": "sha256:" + sha256ID(trustedPaper), "variables": map[string]any{"id": "xyz"}}, mediaResponse, 200, "BAD_USER_INPUT", ""},
		{"APQ hash", map[string]any{"extensions": apq(trustedType)}, mediaResponse, 200, "", `{"__typename":"Query"}`},
		{"APQ hash with its query", map[string]any{"query": trustedType, "extensions": apq(trustedType)}, mediaResponse, 200, "", `{"__typename":"Query"}`},
		{"free-form query", map[string]any{"query": trustedType}, mediaResponse, 400, codePersistedQueryRequired, ""},
		{"free-form query, json", map[string]any{"query": trustedType}, mediaJSON, 200, codePersistedQueryRequired, ""},
		{"APQ registration", map[string]any{"query": "{ a: __typename }", "extensions": apq("{ a: __typename }")}, mediaResponse, 400, codeDocumentNotFound, ""},
		{"query beside another document's id", map[string]any{"query": "{ a: __typename }", "documentId": sha256ID(trustedType)}, mediaResponse, 400, codePersistedQueryRequired, ""},
		{"unknown id", map[string]any{"documentId": "sha256:" + sha256ID("{ nope }")}, mediaResponse, 400, codeDocumentNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, post(t, tt.body, tt.accept))
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %s)", rec.Code, tt.wantStatus, rec.Body.String())
			}
			resp := decode(t, rec)
			if got := resp.errorCode(); got != tt.wantCode {
				t.Errorf("code = %q, want %q (body %s)", got, tt.wantCode, rec.Body.String())
			}
			if tt.wantData != "" && string(resp.Data) != tt.wantData {
				t.Errorf("data = %s, want %s", resp.Data, tt.wantData)
			}
		})
	}

	t.Run("GET documentId", func(t *testing.T) {
		q := url.Values{"documentId": {"sha256:" + sha256ID(trustedType)}}
		req := httptest.NewRequest(http.MethodGet, "/graphql?"+q.Encode(), nil)
		rec := serve(h, req)
		if got := decode(t, rec); rec.Code != 200 || string(got.Data) != `{"__typename":"Query"}` {
			t.Errorf("GET: %d %s, want 200 with data", rec.Code, rec.Body.String())
		}
	})

	t.Run("metrics label only trusted names", func(t *testing.T) {
		serve(h, post(t, map[string]any{"documentId": sha256ID(trustedType), "operationName": "Probe"}, mediaJSON))
		serve(h, post(t, map[string]any{"documentId": sha256ID(trustedType), "operationName": "Junk"}, mediaJSON))
		serve(h, post(t, map[string]any{"query": "query Junk2 { __typename }"}, mediaJSON))
		body := serve(h, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String()
		if !strings.Contains(body, `operation="Probe"`) {
			t.Error("no series for the trusted document Probe")
		}
		if strings.Contains(body, "Junk") {
			t.Error("an untrusted operation name became a label")
		}
	})
}

func TestTrustedDocumentsRefused(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	tests := []struct {
		name string
		docs map[string]string
		want string
	}{
		{"hash mismatch", map[string]string{"sha256:" + sha256ID("{ a: __typename }"): trustedType}, "not the document's sha256"},
		{"does not validate", map[string]string{"q1": "{ nope }"}, "Cannot query field"},
		{"reserved prefix", map[string]string{"md5:abc": trustedType}, "want sha256:HEX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Config{DB: bdb, TrustedDocuments: tt.docs})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestReadTrustedDocuments(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file string
		want       map[string]string
	}{
		{"map", `{"abc": "{ __typename }"}`, map[string]string{"abc": "{ __typename }"}},
		{"apollo manifest", `{"format": "apollo-persisted-query-manifest", "version": 1,
			"operations": [{"id": "def", "name": "Probe", "type": "query", "body": "query Probe { __typename }"}]}`,
			map[string]string{"def": "query Probe { __typename }"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".json")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadTrustedDocuments(path)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	path := filepath.Join(dir, "list.json")
	os.WriteFile(path, []byte(`["{ __typename }"]`), 0o600)
	if _, err := ReadTrustedDocuments(path); err == nil {
		t.Error("a JSON list was read as a manifest")
	}
}

// TestRunMetricsAddr runs the server with a metrics address: /metrics
// answers there, and both listeners stop on cancel.
func TestRunMetricsAddr(t *testing.T) {
	free := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	addr, metricsAddr := free(), free()
	s := sqliteServer(t, Config{Addr: addr, MetricsAddr: metricsAddr})
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()

	get := func(url string) int {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			resp, err := http.Get(url)
			if err == nil {
				resp.Body.Close()
				return resp.StatusCode
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: %v", url, err)
			}
		}
	}
	if code := get("http://" + metricsAddr + "/metrics"); code != http.StatusOK {
		t.Errorf("metrics address /metrics = %d, want 200", code)
	}
	if code := get("http://" + addr + "/metrics"); code != http.StatusNotFound {
		t.Errorf("API address /metrics = %d, want 404", code)
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("Run returned %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if _, err := http.Get("http://" + metricsAddr + "/metrics"); err == nil {
		t.Error("metrics address still answers after shutdown")
	}
}

// TestLongVariableKeyIsCut: an unknown key in an object variable is named
// in the error's path, cut to a length that cannot grow the answer.
func TestLongVariableKeyIsCut(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	key := strings.Repeat("k", 50_000)
	rec := serve(h, post(t, map[string]any{
		"query":     `query($f: PaperFilter) { searchPapers(filter: $f) { totalCount } }`,
		"variables": map[string]any{"f": map[string]any{key: 1}},
	}, mediaResponse))
	var resp struct {
		Errors []struct {
			Path       []string
			Extensions struct{ Code string }
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Errors) != 1 {
		t.Fatalf("status %d, body %.500s: want one error", rec.Code, rec.Body.String())
	}
	if n := rec.Body.Len(); n > 2_000 {
		t.Errorf("answer of %d bytes, want the key cut", n)
	}
	if p := resp.Errors[0].Path; len(p) != 3 || p[0] != "variable" || p[1] != "f" || !strings.HasPrefix(p[2], "kkk") || len(p[2]) > 100 {
		t.Errorf("path %q, want the variable and its key", p)
	}
}
