package server

import (
	"bytes"
	"compress/gzip"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	graphiqlassets "github.com/papergraph/papergraph/graphiql"
	"github.com/papergraph/papergraph/ingest"
)

// paperscapeDB is a fresh SQLite database holding testdata/pscp.csv's
// three papers, as the demo set would: hep-th/9201001 (ExampleQuery's) and
// its authors among them.
func paperscapeDB(t *testing.T) *bun.DB {
	t.Helper()
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{"testdata/pscp.csv"}})
	if err != nil || !sum.OK() {
		t.Fatalf("import: %+v, %v", sum, err)
	}
	return bdb
}

// TestGraphiQLOpensOnExample checks that the page hands the bundle
// ExampleQuery and the endpoint.
func TestGraphiQLOpensOnExample(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	page := serve(h, httptest.NewRequest(http.MethodGet, "/", nil)).Body.String()
	m := regexp.MustCompile(`data-query="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("page %s has no data-query", page)
	}
	if got := html.UnescapeString(m[1]); got != ExampleQuery {
		t.Errorf("data-query = %q, want ExampleQuery", got)
	}
}

func TestGraphiQLFiles(t *testing.T) {
	h := sqliteServer(t, Config{}).Handler()
	script, _ := fs.ReadFile(graphiqlassets.Files, graphiqlassets.Script)
	fonts, _ := fs.Glob(graphiqlassets.Files, "fonts/*.woff2")
	if len(fonts) == 0 {
		t.Fatal("no fonts embedded; the test checks nothing")
	}
	font, _ := fs.ReadFile(graphiqlassets.Files, fonts[0])
	tests := []struct {
		name, target, acceptEncoding string
		wantStatus                   int
		wantType, wantEncoding       string
		want                         []byte // the body, decoded
	}{
		{"script gzipped", graphiqlassets.Script, "gzip, deflate, br", 200, "text/javascript; charset=utf-8", "gzip", script},
		{"script plain", graphiqlassets.Script, "", 200, "text/javascript; charset=utf-8", "", script},
		{"script, gzip refused", graphiqlassets.Script, "gzip;q=0, identity", 200, "text/javascript; charset=utf-8", "", script},
		{"font never gzipped", fonts[0], "gzip", 200, "font/woff2", "", font},
		{"unknown file", "graphiql-0000.js", "gzip", 404, "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, graphiqlFiles+tt.target, nil)
			req.Header.Set("Accept-Encoding", tt.acceptEncoding)
			rec := serve(h, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if tt.want == nil {
				return
			}
			if got := rec.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
			}
			if got := rec.Header().Get("Content-Encoding"); got != tt.wantEncoding {
				t.Errorf("Content-Encoding = %q, want %q", got, tt.wantEncoding)
			}
			if got, want := rec.Header().Get("Cache-Control"), "public, max-age=31536000, immutable"; got != want {
				t.Errorf("Cache-Control = %q, want %q", got, want)
			}
			var body io.Reader = rec.Body
			if tt.wantEncoding == "gzip" {
				zr, err := gzip.NewReader(rec.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			}
			if got, _ := io.ReadAll(body); !bytes.Equal(got, tt.want) {
				t.Errorf("body is %d bytes decoded, want the embedded file's %d", len(got), len(tt.want))
			}
		})
	}

	off := sqliteServer(t, Config{DisableGraphiQL: true}).Handler()
	if rec := serve(off, httptest.NewRequest(http.MethodGet, graphiqlFiles+graphiqlassets.Script, nil)); rec.Code != http.StatusNotFound {
		t.Errorf("--graphiql=false: GET the script = %d, want 404", rec.Code)
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"deflate, gzip;q=0.5", true},
		{"GZIP", true},
		{"*", true},
		{"br", false},
		{"gzip;q=0", false},
		{"gzip; q=0.0, br", false},
		{"identity, *;q=0.1", true},
	}
	for _, tt := range tests {
		if got := acceptsGzip(tt.header); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}
