package ingest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db"
)

// BenchmarkDeriveAll recomputes every researcher's derived tables in a
// copy of the SQLite archive at PAPERGRAPH_BENCH_DB (say, one that
// papergraph-bench synth's corpus was imported into), step by step, and
// reports each step's time, as a first import's derive does them:
//
//	PAPERGRAPH_BENCH_DB=c75k.db go test ./ingest -run '^$' -bench DeriveAll -benchtime 1x -benchmem -memprofile mem.out
func BenchmarkDeriveAll(b *testing.B) {
	src := os.Getenv("PAPERGRAPH_BENCH_DB")
	if src == "" {
		b.Skip("PAPERGRAPH_BENCH_DB is not set")
	}
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "archive.db")
		copyFile(b, src, path)
		bdb, err := db.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bdb.ExecContext(ctx, "INSERT INTO derive_queue (researcher_id) SELECT id FROM researchers WHERE id NOT IN (SELECT researcher_id FROM derive_queue)"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for _, s := range deriveSteps {
			start := time.Now()
			if _, err := s.run(ctx, bdb); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(time.Since(start).Seconds(), s.name+"-s")
		}
		b.StopTimer()
		bdb.Close()
		b.StartTimer()
	}
}

func copyFile(b *testing.B, from, to string) {
	b.Helper()
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}
