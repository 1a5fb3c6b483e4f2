package server

import (
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestLimits checks that operations over the depth or node limit are
// refused with their code and limit, before a single SQL statement runs,
// and that operations within the limits are let through.
func TestLimits(t *testing.T) {
	tests := []struct {
		name        string
		query       string
		wantCode    string
		wantMessage string
		cfg         Config // Config{MaxDepth: 6, MaxNodes: 3} when zero
	}{
		{
			name:        "too deep",
			query:       `{ paper(id: "x") { authors { researcher { coauthors { nodes { researcher { name } } } } } } }`,
			wantCode:    codeDepthLimit,
			wantMessage: "operation has depth 7, which exceeds the limit of 6",
		},
		{
			name: "too deep through fragments",
			query: `{ paper(id: "x") { ...P } }
				fragment P on Paper { authors { ... on Authorship { researcher { ...R } } } }
				fragment R on Researcher { coauthors { nodes { researcher { name } } } }`,
			wantCode:    codeDepthLimit,
			wantMessage: "operation has depth 7, which exceeds the limit of 6",
		},
		{
			name:        "too many objects",
			query:       `{ a: paper(id: "a") { title } b: paper(id: "b") { title } c: paper(id: "c") { title } d: paper(id: "d") { title } }`,
			wantCode:    codeNodeLimit,
			wantMessage: "the answer could hold 4 objects, over the node limit of 3",
		},
		{
			name:  "introspection is not counted for depth",
			cfg:   Config{MaxDepth: 6},
			query: `{ __schema { types { fields { type { ofType { ofType { ofType { name } } } } } } } }`,
		},
	}
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		statements := &db.StatementCounter{}
		bdb = bdb.WithQueryHook(statements)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if tt.cfg.MaxDepth == 0 {
					tt.cfg = Config{MaxDepth: 6, MaxNodes: 3}
				}
				h := newTestServer(t, bdb, tt.cfg).Handler()
				before := statements.Count()
				rec := serve(h, post(t, map[string]string{"query": tt.query}, mediaResponse))
				resp := decode(t, rec)
				if got := resp.errorCode(); got != tt.wantCode {
					t.Fatalf("extensions.code = %q, want %q (body %s)", got, tt.wantCode, rec.Body.String())
				}
				if tt.wantCode == "" {
					return
				}
				if rec.Code != 400 {
					t.Errorf("status = %d, want 400", rec.Code)
				}
				if got := resp.Errors[0].Message; !strings.Contains(got, tt.wantMessage) {
					t.Errorf("message = %q, want %q", got, tt.wantMessage)
				}
				if d := string(resp.Data); d != "" && d != "null" {
					t.Errorf("data = %s, want none", d)
				}
				if n := statements.Count() - before; n != 0 {
					t.Errorf("%d SQL statements ran, want 0", n)
				}
			})
		}
	})
}
