package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// The demo set's Kaggle sample: 200 papers with abstracts.
const kaggleSample = "../../demo/data/kaggle-arxiv-sample.jsonl.gz"

// TestImportEmbeds: an import ends by embedding every paper with the
// built-in model; papergraph embed then finds nothing to do; --retrain
// learns the model again from the same papers, the same model, and
// keeps its vectors; --no-embed leaves the papers without vectors.
func TestImportEmbeds(t *testing.T) {
	for _, kind := range dbtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.New(t, kind)
			out := runOK(t, "import", "--db", dsn, "kaggle", kaggleSample)
			if !strings.Contains(out, "embeddings (builtin, ") || !strings.Contains(out, "embedded 200 papers, 0 unchanged") {
				t.Errorf("import printed %q, want 200 papers embedded", out)
			}
			if !strings.Contains(out, "topics: built ") || !strings.Contains(out, " topics from 200 papers") {
				t.Errorf("import printed %q, want topics built from its 200 papers", out)
			}
			bdb := dbtest.Open(t, dsn)
			if n, err := db.CountPaperVectors(ctx, bdb, "builtin"); err != nil || n != 200 {
				t.Errorf("%d vectors after the import (%v), want 200", n, err)
			}
			if out := runOK(t, "embed", "--db", dsn); !strings.Contains(out, "embedded 0 papers, 200 unchanged") ||
				!strings.Contains(out, "topics: filed 0 new or changed papers") {
				t.Errorf("embed printed %q, want nothing to embed or file", out)
			}
			if out := runOK(t, "topics", "--db", dsn, "--rebuild"); !strings.Contains(out, " topics from 200 papers") {
				t.Errorf("topics --rebuild printed %q, want topics built from 200 papers", out)
			}
			if out := runOK(t, "embed", "--db", dsn, "--retrain"); !strings.Contains(out, "learned from 200 papers") ||
				!strings.Contains(out, "embedded 0 papers, 200 unchanged") {
				t.Errorf("embed --retrain printed %q, want the model learned again and its vectors kept", out)
			}

			skipped := dbtest.New(t, kind)
			if out := runOK(t, "import", "--db", skipped, "--no-embed", "kaggle", kaggleSample); strings.Contains(out, "embeddings") {
				t.Errorf("import --no-embed printed %q", out)
			}
			if n, err := db.CountPaperVectors(ctx, dbtest.Open(t, skipped), "builtin"); err != nil || n != 0 {
				t.Errorf("%d vectors after import --no-embed (%v), want none", n, err)
			}
		})
	}
}

// TestEmbedCommandLine: flags that make no sense are usage errors.
func TestEmbedCommandLine(t *testing.T) {
	dsn := dbtest.New(t, "sqlite")
	for _, args := range [][]string{
		{"embed", "--db", dsn, "--embeddings-url", "http://127.0.0.1:1/v1"},
		{"embed", "--db", dsn, "--retrain", "--embeddings-url", "http://127.0.0.1:1/v1", "--embeddings-model", "m"},
		{"embed", "--db", dsn, "papers"},
		{"import", "--db", dsn, "--embeddings-url", "http://127.0.0.1:1/v1", "kaggle", kaggleSample},
	} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, &out, &errOut); !isUsage(err) {
			t.Errorf("%q = %v, want a usage error", args, err)
		}
	}
}

func isUsage(err error) bool { return err != nil && strings.HasPrefix(err.Error(), errUsage.Error()) }

func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("%q: %v\n%s", args, err, errOut.String())
	}
	return out.String()
}
