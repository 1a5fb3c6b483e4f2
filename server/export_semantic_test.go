package server

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/vector"
)

// hashedIndex is a built index of every arXiv paper's title and abstract
// by vector.HashedWords.
func hashedIndex(t *testing.T, bdb bun.IDB, dim int) *vector.Live {
	t.Helper()
	var rows []struct {
		ID              int64
		Title, Abstract string
	}
	if err := bdb.NewRaw("SELECT id, title, abstract FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id").Scan(t.Context(), &rows); err != nil {
		t.Fatal(err)
	}
	live := vector.NewLive(vector.HashedEmbedder(dim))
	<-live.Start(t.Context(), func(_ context.Context, fn func(int64, []float32) error) error {
		for _, r := range rows {
			if err := fn(r.ID, vector.HashedWords(r.Title+" "+r.Abstract, dim)); err != nil {
				return err
			}
		}
		return nil
	}, dim, vector.Options{})
	return live
}

// TestSearchExportModes checks the mode parameter of the search export
// and the feed: a title with a misspelt word exports its paper first
// with mode=semantic and mode=hybrid (the default), and nothing with
// mode=keyword; a bad mode is a 400 naming it, and a semantic export with
// no index a 503 saying why.
func TestSearchExportModes(t *testing.T) {
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		var title, arxivID string
		if err := bdb.NewRaw("SELECT title, arxiv_id FROM papers WHERE arxiv_id IS NOT NULL AND title <> '' ORDER BY citation_count DESC, id LIMIT 1").Scan(t.Context(), &title, &arxivID); err != nil {
			t.Fatal(err)
		}
		query := "query=" + strings.ReplaceAll(title+" xyzzyplugh", " ", "+")
		h := newTestServer(t, bdb, Config{Vectors: hashedIndex(t, bdb, 128)}).Handler()
		get := func(h http.Handler, path string) *httptest.ResponseRecorder {
			return serve(h, httptest.NewRequest(http.MethodGet, path, nil))
		}
		for _, c := range []struct {
			mode  string
			first string
		}{{"&mode=semantic", arxivID}, {"", arxivID}, {"&mode=HYBRID", arxivID}, {"&mode=keyword", ""}} {
			rec := get(h, "/export/search?format=jsonl&"+query+c.mode)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: status %d: %s", c.mode, rec.Code, rec.Body)
			}
			ids := exportRows(t, "jsonl", rec.Body.Bytes())
			if (c.first == "") != (len(ids) == 0) || (c.first != "" && ids[0] != c.first) {
				t.Errorf("mode %q: exported %d papers starting %v, want %q first", c.mode, len(ids), ids[:min(3, len(ids))], c.first)
			}
		}
		rec := get(h, "/feeds/latest.atom?mode=semantic&"+query)
		var feed struct {
			Entries []struct{ ID string } `xml:"entry"`
		}
		if err := xml.Unmarshal(rec.Body.Bytes(), &feed); rec.Code != http.StatusOK || err != nil || len(feed.Entries) == 0 {
			t.Errorf("semantic feed: status %d, %d entries, %v", rec.Code, len(feed.Entries), err)
		}
		if rec := get(h, "/export/search?query=gauge&mode=fuzzy"); rec.Code != http.StatusBadRequest || !strings.HasPrefix(rec.Body.String(), "mode: ") {
			t.Errorf("mode=fuzzy: status %d, %q; want 400 naming mode", rec.Code, rec.Body)
		}
		plain := newTestServer(t, bdb, Config{}).Handler()
		rec = get(plain, "/export/search?query=gauge&mode=semantic")
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "SEMANTIC_UNAVAILABLE") || !strings.Contains(rec.Body.String(), "no paper has an embedding") {
			t.Errorf("semantic export without an index: status %d, %s", rec.Code, rec.Body)
		}
	})
}
