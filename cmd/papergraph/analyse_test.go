package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/papergraph/papergraph/analysis/analysistest"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// The ingest package's Kaggle fixture and two of its papers.
const (
	kaggleFixture = "../../ingest/testdata/kaggle.jsonl"
	analysisLine  = `{"arxiv_id":"%s","summary":"%s","novelty":"A new calculation.","paper_type":"theory",` +
		`"research_field":"QCD phenomenology","significance_score":5,"keywords":["diphoton"],` +
		`"model":"hand-written fixture","prompt_version":"fixture-1"}`
)

// TestImportAnalysis: import analysis writes the good lines after the
// papers of the same run, reports a broken one with its file and line,
// exits with errors, and a rerun writes nothing new.
func TestImportAnalysis(t *testing.T) {
	path := filepath.Join(t.TempDir(), "analyses.jsonl")
	lines := []string{fmt.Sprintf(analysisLine, "0704.0001", "Diphoton production at the Tevatron and the LHC."),
		`{"arxiv_id":"0704.0002",`, fmt.Sprintf(analysisLine, "0704.0002v1", "Sparsity-certifying graph decompositions.")}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			dsn := dbtest.New(t, kind)
			var out, errOut bytes.Buffer
			err := run(context.Background(), []string{"import", "--db", dsn, "kaggle", kaggleFixture, "+", "analysis", path}, &out, &errOut)
			if err != errReported {
				t.Errorf("import: %v, want errors reported\n%s", err, errOut.String())
			}
			if !strings.Contains(out.String(), "analysis: read 2, written 2, unchanged 0, malformed 1") ||
				!strings.Contains(out.String(), "kaggle: derived figures by step") {
				t.Errorf("import printed %q, want the papers derived and 2 analyses written", out.String())
			}
			if want := "skipped " + path + ":2: malformed analysis: not JSON"; !strings.HasPrefix(errOut.String(), want) {
				t.Errorf("import reported %q, want %q", errOut.String(), want)
			}
			bdb := dbtest.Open(t, dsn)
			var summaries []string
			if err := bdb.NewRaw("SELECT a.summary FROM paper_analyses a JOIN papers p ON p.id = a.paper_id ORDER BY p.arxiv_id").
				Scan(t.Context(), &summaries); err != nil {
				t.Fatal(err)
			}
			if strings.Join(summaries, "|") != "Diphoton production at the Tevatron and the LHC.|Sparsity-certifying graph decompositions." {
				t.Errorf("analyses %q", summaries)
			}
			out.Reset()
			errOut.Reset()
			_ = run(context.Background(), []string{"import", "--db", dsn, "analysis", path}, &out, &errOut)
			if !strings.Contains(out.String(), "analysis: read 2, written 0, unchanged 2, malformed 1") {
				t.Errorf("rerun printed %q, want nothing written", out.String())
			}
		})
	}
}

// TestAnalyseCommand: papergraph analyse asks the endpoint about every
// paper with an abstract, reports a rejected answer with its paper,
// prints the tokens spent, and a rerun asks only about the rejected one.
func TestAnalyseCommand(t *testing.T) {
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			dsn := dbtest.New(t, kind)
			runOK(t, "import", "--db", dsn, "--no-embed", "kaggle", kaggleFixture)
			bdb := dbtest.Open(t, dsn)
			var papers int
			if err := bdb.NewRaw("SELECT count(*) FROM papers WHERE abstract IS NOT NULL").Scan(t.Context(), &papers); err != nil || papers < 3 {
				t.Fatalf("%d papers with abstracts (%v)", papers, err)
			}
			var rejectedTitle string
			if err := bdb.NewRaw("SELECT title FROM papers WHERE arxiv_id = '0704.0002'").Scan(t.Context(), &rejectedTitle); err != nil {
				t.Fatal(err)
			}
			script := &analysistest.Server{Script: func(title string, _ int) analysistest.Reply {
				if title == rejectedTitle {
					return analysistest.Reply{Content: "Sure! Here is the analysis you asked for."}
				}
				return analysistest.Reply{Content: `{"summary":"S.","novelty":"N.","paper_type":"method","research_field":"F",` +
					`"significance_score":4,"keywords":[]}`}
			}}
			srv := httptest.NewServer(script)
			defer srv.Close()
			args := []string{"analyse", "--db", dsn, "--llm-url", srv.URL + "/v1", "--llm-model", "m", "--rate", "6000/min"}
			var out, errOut bytes.Buffer
			if err := run(context.Background(), args, &out, &errOut); err != errReported {
				t.Errorf("analyse: %v, want errors reported\n%s", err, errOut.String())
			}
			want := fmt.Sprintf("analyses (m, prompt %s): analysed %d papers, 0 current, 1 answers rejected", "analysis-1", papers-1)
			tokens := fmt.Sprintf("tokens spent: %d prompt + %d completion", papers*analysistest.PromptTokens, papers*analysistest.CompletionTokens)
			if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), tokens) {
				t.Errorf("analyse printed %q, want %q and %q", out.String(), want, tokens)
			}
			if !strings.Contains(errOut.String(), "rejected the answer for 0704.0002: malformed analysis: not JSON") {
				t.Errorf("analyse reported %q, want 0704.0002's answer rejected", errOut.String())
			}
			if n, err := bdb.NewSelect().Model((*db.PaperAnalysis)(nil)).Count(t.Context()); err != nil || n != int64(papers-1) {
				t.Errorf("%d analyses (%v), want %d", n, err, papers-1)
			}
			out.Reset()
			_ = run(context.Background(), args, &out, &errOut)
			if !strings.Contains(out.String(), fmt.Sprintf("analysed 0 papers, %d current, 1 answers rejected", papers-1)) ||
				script.Total() != papers+1 {
				t.Errorf("rerun printed %q after %d requests, want only the rejected paper asked again", out.String(), script.Total())
			}
		})
	}
}

// TestAnalyseCommandLine: flags that make no sense are usage errors.
func TestAnalyseCommandLine(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	for _, args := range [][]string{
		{"analyse", "--llm-model", "m"},
		{"analyse", "--llm-url", srv.URL},
		{"analyse", "--llm-url", srv.URL, "--llm-model", "m", "--rate", "fast"},
		{"analyse", "--llm-url", srv.URL, "--llm-model", "m", "--since", "last week"},
		{"analyse", "--llm-url", srv.URL, "--llm-model", "m", "--concurrency", "0"},
		{"analyse", "--llm-url", srv.URL, "--llm-model", "m", "papers"},
		{"import", "analysis"},
	} {
		var out, errOut bytes.Buffer
		full := append([]string{args[0], "--db", dbtest.New(t, "sqlite")}, args[1:]...)
		if err := run(context.Background(), full, &out, &errOut); !isUsage(err) {
			t.Errorf("%q = %v, want a usage error", args, err)
		}
	}
}
