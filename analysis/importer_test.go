package analysis_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/analysis"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// addPapers stores papers with the given arXiv ids, each with a title and
// an abstract, and returns their ids.
func addPapers(t *testing.T, bdb bun.IDB, arxivIDs ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, a := range arxivIDs {
		p := &db.Paper{ArxivID: a, Title: "Title of " + a, Abstract: "We study " + a + " and find it interesting."}
		if _, err := bdb.NewInsert().Model(p).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		out[a] = p.ID
	}
	return out
}

const goodLine = `{"arxiv_id":"%s","summary":"A summary.","novelty":"Something new.","paper_type":"theory",` +
	`"research_field":"string theory","significance_score":6,"keywords":["strings","duality"],` +
	`"model":"hand-written fixture","prompt_version":"fixture-1"%s}`

func line(id, extra string) string {
	return strings.Replace(strings.Replace(goodLine, "%s", id, 1), "%s", extra, 1)
}

// TestImport: good records are written, bad ones reported with file and
// line and skipped, and a rerun writes nothing.
func TestImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ids := addPapers(t, bdb, "hep-th/9201001", "hep-th/9201002", "1501.00001")
		lines := []string{
			line("hep-th/9201001", `,"analysed_at":"2026-12-01T10:00:00Z"`),
			`{"arxiv_id": "hep-th/9201002", "summary": "cut short`,
			strings.Replace(line("hep-th/9201002", ""), `"significance_score":6`, `"significance_score":12`, 1),
			"",
			line("hep-th/9912999", ""),
			strings.Replace(line("1501.00001v2", ""), `"theory"`, `"poem"`, 1),
			line("not an id", ""),
			line("1501.00001v2", ""),
			strings.Replace(line("hep-th/9201002", ""), `"keywords"`, `"colour":"red","keywords"`, 1),
		}
		path := filepath.Join(t.TempDir(), "analyses.jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
		var bad []string
		o := analysis.ImportOptions{Paths: []string{path}, Now: func() time.Time { return at },
			Bad: func(e *ingest.RecordError) { bad = append(bad, e.Error()) }}
		sum, err := analysis.Import(t.Context(), bdb, o)
		if err != nil {
			t.Fatal(err)
		}
		if sum != (analysis.ImportSummary{Read: 2, Written: 2, Bad: 6}) {
			t.Errorf("summary %+v, want 2 read, 2 written, 6 bad", sum)
		}
		wantBad := []string{":2: malformed analysis: not JSON", ":3: malformed analysis: at '/significance_score'",
			":5: no paper with arXiv id hep-th/9912999", ":6: malformed analysis: at '/paper_type'", ":7: arxiv_id: not an arXiv id",
			":9: malformed analysis: at '': additional properties 'colour' not allowed"}
		if len(bad) != len(wantBad) {
			t.Fatalf("bad records %q, want %d", bad, len(wantBad))
		}
		// Unknown papers are found when their batch is written, after the
		// batch's malformed lines are reported.
		for _, w := range wantBad {
			if !slices.ContainsFunc(bad, func(b string) bool { return strings.HasPrefix(b, path+w) }) {
				t.Errorf("bad records %q, none starts %q", bad, path+w)
			}
		}
		got, err := db.AnalysesByPaperIDs(t.Context(), bdb, []int64{ids["hep-th/9201001"], ids["hep-th/9201002"], ids["1501.00001"]})
		if err != nil {
			t.Fatal(err)
		}
		a, b := got[ids["hep-th/9201001"]], got[ids["1501.00001"]]
		if len(got) != 2 || a == nil || b == nil {
			t.Fatalf("analyses %v, want those of hep-th/9201001 and 1501.00001", got)
		}
		if a.Summary != "A summary." || a.PaperType != "theory" || a.SignificanceScore != 6 || strings.Join(a.Keywords, ",") != "strings,duality" ||
			a.Model != "hand-written fixture" || a.PromptVersion != "fixture-1" || !a.AnalysedAt.Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)) ||
			a.AbstractHash != db.AbstractHash("Title of hep-th/9201001", "We study hep-th/9201001 and find it interesting.") {
			t.Errorf("hep-th/9201001: %+v", a)
		}
		if !b.AnalysedAt.Equal(at) {
			t.Errorf("1501.00001 analysed at %v, want the import's time %v", b.AnalysedAt, at)
		}

		o.Now = func() time.Time { return at.Add(time.Hour) }
		if sum, err = analysis.Import(t.Context(), bdb, o); err != nil || sum.Written != 0 || sum.Unchanged != 2 {
			t.Errorf("rerun: %+v, %v; want nothing written, 2 unchanged", sum, err)
		}
		got, _ = db.AnalysesByPaperIDs(t.Context(), bdb, []int64{ids["1501.00001"]})
		if b := got[ids["1501.00001"]]; b == nil || !b.AnalysedAt.Equal(at) {
			t.Errorf("rerun changed 1501.00001: %+v", b)
		}
	})
}

// TestImportMissingFile: a file that cannot be opened is an error naming
// it, without the path twice.
func TestImportMissingFile(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		_, err := analysis.Import(t.Context(), bdb, analysis.ImportOptions{Paths: []string{"no-such.jsonl"}})
		if err == nil || err.Error() != "no-such.jsonl: no such file or directory" {
			t.Errorf("err = %v", err)
		}
	})
}
