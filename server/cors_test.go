package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCORS(t *testing.T) {
	tests := []struct {
		name      string
		origins   []string // server configuration; nil for the default
		method    string
		origin    string
		preflight bool
		wantAllow bool
	}{
		{"preflight from localhost", nil, "OPTIONS", "http://localhost:5173", true, true},
		{"preflight from 127.0.0.1", nil, "OPTIONS", "http://127.0.0.1:3000", true, true},
		{"preflight from ::1", nil, "OPTIONS", "http://[::1]:3000", true, true},
		{"preflight from elsewhere", nil, "OPTIONS", "https://evil.example", true, false},
		{"preflight from a lookalike", nil, "OPTIONS", "http://localhost.evil.example", true, false},
		{"preflight from localhost over https", nil, "OPTIONS", "https://localhost:5173", true, false},
		{"request from localhost", nil, "POST", "http://localhost:5173", false, true},
		{"request from elsewhere", nil, "POST", "https://evil.example", false, false},
		{"exact origin", []string{"https://app.example.org"}, "OPTIONS", "https://app.example.org", true, true},
		{"exact origin, other port", []string{"https://app.example.org"}, "OPTIONS", "https://app.example.org:8443", true, false},
		{"exact origin, case", []string{"https://App.Example.org"}, "POST", "https://app.example.org", false, true},
		{"any port", []string{"https://app.example.org:*"}, "POST", "https://app.example.org:8443", false, true},
		{"any origin", []string{"*"}, "POST", "https://anyone.example", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := sqliteServer(t, Config{CORSOrigins: tt.origins}).Handler()
			req := post(t, map[string]string{"query": "{ __typename }"}, "")
			req.Method = tt.method
			req.Header.Set("Origin", tt.origin)
			if tt.preflight {
				req = httptest.NewRequest(http.MethodOptions, "/graphql", nil)
				req.Header.Set("Origin", tt.origin)
				req.Header.Set("Access-Control-Request-Method", "POST")
				req.Header.Set("Access-Control-Request-Headers", "content-type")
			}
			rec := serve(h, req)

			wantOrigin := ""
			if tt.wantAllow {
				wantOrigin = tt.origin
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != wantOrigin {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, wantOrigin)
			}
			if got := rec.Header().Values("Vary"); len(got) == 0 || got[0] != "Origin" {
				t.Errorf("Vary = %q, want it to start with Origin", got)
			}
			if tt.preflight {
				if rec.Code != http.StatusNoContent {
					t.Errorf("preflight status = %d, want 204", rec.Code)
				}
				wantMethods := ""
				if tt.wantAllow {
					wantMethods = "GET, POST"
				}
				if got := rec.Header().Get("Access-Control-Allow-Methods"); got != wantMethods {
					t.Errorf("Access-Control-Allow-Methods = %q, want %q", got, wantMethods)
				}
				return
			}
			if rec.Code != http.StatusOK {
				t.Errorf("status = %d, want 200: CORS decides what the browser may read, not what the server answers", rec.Code)
			}
		})
	}
}
