package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ratelimit"
)

// TestSignedInUsers drives API keys of the database through the HTTP
// server: who is signed in, which requests are refused, whose budget a
// request spends, and where its writes go.
func TestSignedInUsers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		key, row, err := db.CreateAPIKey(ctx, bdb, "notebook", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		revoked, _, err := db.CreateAPIKey(ctx, bdb, "old", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.RevokeAPIKey(ctx, bdb, revoked[:11], time.Now()); err != nil {
			t.Fatal(err)
		}
		const fileKey = "notebook-0123456789abcdef"
		keys, err := ratelimit.LoadKeys(strings.NewReader(fileKey + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		limiter, err := ratelimit.NewMemory(4, 0)
		if err != nil {
			t.Fatal(err)
		}
		h := newTestServer(t, bdb, Config{Writer: bdb, RateLimiter: limiter, APIKeys: keys}).Handler()
		readOnly := newTestServer(t, bdb, Config{}).Handler()

		const follow = `mutation { followCategory(code: "hep-th") { code } }`
		ask := func(h http.Handler, peer, query string, header ...string) (int, string, gqlResponse) {
			t.Helper()
			req := post(t, map[string]string{"query": query}, mediaJSON)
			req.RemoteAddr = peer
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			rec := serve(h, req)
			var resp gqlResponse
			if rec.Code != http.StatusUnauthorized {
				resp = decode(t, rec)
			}
			return rec.Code, rec.Header().Get("X-RateLimit-Remaining"), resp
		}
		steps := []struct {
			name          string
			h             http.Handler
			peer, query   string
			header        []string
			wantStatus    int
			wantRemaining string
			wantCode      string
			wantData      string
		}{
			{"follow", h, "192.0.2.1:1", follow, []string{"Authorization", "Bearer " + key}, 200, "3", "", `{"followCategory":{"code":"hep-th"}}`},
			{"viewer from elsewhere, same budget", h, "198.51.100.7:1", `{ viewer { name following { categories { code } } } }`,
				[]string{"X-API-Key", key}, 200, "2", "", `{"viewer":{"name":"notebook","following":{"categories":[{"code":"hep-th"}]}}}`},
			{"the address's own budget", h, "192.0.2.1:1", `{ viewer { name } }`, nil, 200, "3", "", `{"viewer":null}`},
			{"no key", h, "192.0.2.1:1", follow, nil, 200, "2", "UNAUTHENTICATED", ""},
			{"a file key names a budget, signs nobody in", h, "192.0.2.1:1", follow, []string{"Authorization", "Bearer " + fileKey}, 200, "3", "UNAUTHENTICATED", ""},
			{"revoked key", h, "192.0.2.1:1", `{ __typename }`, []string{"Authorization", "Bearer " + revoked}, 401, "", "", ""},
			{"unknown key of the database's form", readOnly, "192.0.2.1:1", `{ __typename }`, []string{"Authorization", "Bearer pg_" + strings.Repeat("A", 43)}, 401, "", "", ""},
			{"read-only server", readOnly, "192.0.2.1:1", follow, []string{"Authorization", "Bearer " + key}, 200, "", "READ_ONLY", ""},
		}
		for _, s := range steps {
			status, remaining, resp := ask(s.h, s.peer, s.query, s.header...)
			if status != s.wantStatus || remaining != s.wantRemaining || resp.errorCode() != s.wantCode ||
				(s.wantData != "" && string(resp.Data) != s.wantData) {
				t.Errorf("%s: status %d, remaining %q, code %q, data %s; want %d, %q, %q, %s",
					s.name, status, remaining, resp.errorCode(), resp.Data, s.wantStatus, s.wantRemaining, s.wantCode, s.wantData)
			}
		}

		var follows int
		if err := bdb.NewRaw("SELECT COUNT(*) FROM followed_categories WHERE api_key_id = ?", row.ID).Scan(ctx, &follows); err != nil || follows != 1 {
			t.Errorf("followed_categories rows = %d, %v; want 1", follows, err)
		}
		ks, err := db.APIKeys(ctx, bdb)
		if err != nil || ks[0].LastUsedAt.IsZero() {
			t.Errorf("last use of the key used = %v, %v; want it recorded", ks[0].LastUsedAt, err)
		}

		// GraphQL over HTTP: a mutation sent by GET is 405, and changes
		// nothing.
		req := httptest.NewRequest(http.MethodGet, "/graphql?"+url.Values{"query": {`mutation { unfollowCategory(code: "hep-th") { code } }`}}.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", mediaResponse)
		rec := serve(h, req)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "POST" {
			t.Errorf("mutation by GET: status %d, Allow %q; want 405, POST", rec.Code, rec.Header().Get("Allow"))
		}
		if err := bdb.NewRaw("SELECT COUNT(*) FROM followed_categories WHERE api_key_id = ?", row.ID).Scan(ctx, &follows); err != nil || follows != 1 {
			t.Errorf("followed_categories rows after a GET = %d, %v; want 1", follows, err)
		}

		// A signed-in answer changes with the user's mutations: no cache
		// may reuse it unasked.
		req = httptest.NewRequest(http.MethodGet, "/graphql?"+url.Values{"query": {`{ viewer { name } }`}}.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if rec := serve(h, req); rec.Code != 200 || rec.Header().Get("Cache-Control") != "private, no-cache" {
			t.Errorf("viewer by GET: status %d, Cache-Control %q; want 200, private, no-cache", rec.Code, rec.Header().Get("Cache-Control"))
		}
		// A browser front end may send the key.
		req = httptest.NewRequest(http.MethodOptions, "/graphql", nil)
		req.Header.Set("Origin", "http://localhost:3000")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		if got := serve(h, req).Header().Get("Access-Control-Allow-Headers"); !strings.Contains(got, "Authorization") {
			t.Errorf("preflight Access-Control-Allow-Headers = %q, want Authorization among them", got)
		}
	})
}
