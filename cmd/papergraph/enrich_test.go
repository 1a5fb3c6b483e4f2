package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/papergraph/papergraph/db/dbtest"
)

// TestEnrichCommand runs enrich against APIs that know none of the papers:
// the first run stops at its cap, the second asks only what is left, and
// the e-mail address and key come from the environment.
func TestEnrichCommand(t *testing.T) {
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Setenv("PAPERGRAPH_MAILTO", "lead@example.org")
			t.Setenv("PAPERGRAPH_S2_KEY", "s2-key")
			var asked []string
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked = append(asked, r.Method+" "+r.URL.Path)
				switch {
				case r.URL.Path == "/works" && r.URL.Query().Get("mailto") == "lead@example.org":
					w.Write([]byte(`{"meta":{"next_cursor":null},"results":[]}`))
				case r.URL.Path == "/paper/batch" && r.Header.Get("x-api-key") == "s2-key":
					w.Write([]byte(`[null,null,null,null]`))
				default:
					http.Error(w, "unexpected", http.StatusBadRequest)
				}
			}))
			defer api.Close()
			dsn := dbtest.New(t, kind)
			ctx := context.Background()
			var out, errOut bytes.Buffer
			if err := run(ctx, []string{"import", "--db", dsn, "paperscape", "../../ingest/testdata/paperscape.csv"}, &out, &errOut); err != nil {
				t.Fatalf("import: %v\n%s", err, errOut.String())
			}
			enrich := []string{"enrich", "--db", dsn, "--openalex-url", api.URL, "--s2-url", api.URL, "--delay", "0"}
			for _, tt := range []struct {
				args  []string
				asked string
				out   string
			}{
				{[]string{"--max-requests", "1"}, "GET /works",
					"enrich: 1 request; asked about: openalex-works 4; read 0, inserted 0, updated 0, unchanged 0, malformed 0\n" +
						"enrich: stopped at --max-requests; run it again to go on\n"},
				{nil, "POST /paper/batch",
					"enrich: 1 request; asked about: s2-papers 4; read 0, inserted 0, updated 0, unchanged 0, malformed 0\n"},
				{nil, "", "enrich: 0 requests; asked about: nothing; read 0, inserted 0, updated 0, unchanged 0, malformed 0\n"},
			} {
				out.Reset()
				asked = nil
				if err := run(ctx, append(enrich, tt.args...), &out, &errOut); err != nil {
					t.Fatalf("enrich %q: %v\n%s", tt.args, err, errOut.String())
				}
				if got := strings.Join(asked, ", "); got != tt.asked || out.String() != tt.out {
					t.Errorf("enrich %q asked %q and printed\n%s\nwant %q and\n%s", tt.args, got, out.String(), tt.asked, tt.out)
				}
			}
		})
	}
}

func TestEnrichCommandLineErrors(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		want    error
		message string
	}{
		{[]string{"enrich", "extra"}, errUsage, "takes no arguments"},
		{[]string{"enrich", "--refresh", "10ms"}, errUsage, "--refresh"},
		{[]string{"enrich", "-h"}, errHelp, "PAPERGRAPH_S2_KEY"},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tt.args, &out, &errOut)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error()+errOut.String(), tt.message) {
			t.Errorf("run(%q) = %v (%s), want %v mentioning %q", tt.args, err, errOut.String(), tt.want, tt.message)
		}
	}
}
