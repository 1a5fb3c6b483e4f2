package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/embed"
	"github.com/papergraph/papergraph/ingest"
)

// embedReport is what embed measures: the built-in model's learning and
// the embedding of every paper, on an archive imported without them.
type embedReport struct {
	Synthetic     bool          `json:"synthetic"`
	Papers        int64         `json:"papers"`
	Database      string        `json:"database"`
	ImportS       float64       `json:"importSeconds,omitempty"`
	LearnDocs     int           `json:"learnDocs"`
	Words         int           `json:"words"`
	Dim           int           `json:"dim"`
	LearnS        float64       `json:"learnSeconds"`
	LearnHeapMB   float64       `json:"learnPeakHeapMB"`
	EmbedS        float64       `json:"embedSeconds"`
	EmbedHeapMB   float64       `json:"embedPeakHeapMB"`
	ModelBytes    int           `json:"modelBytes"`
	VectorBytes   int64         `json:"vectorBytes"`
	BytesPerPaper float64       `json:"bytesPerPaper"`
	FileGrowth    int64         `json:"sqliteFileGrowthBytes,omitempty"`
	Quality       *queryQuality `json:"quality,omitempty"`
}

func cmdEmbed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed", stderr)
	corpus := fs.String("corpus", "", "the directory synth wrote; its papers are imported into a new SQLite database in it")
	dsn := fs.String("db", "", "measure on this database, already imported, instead of --corpus")
	queries := fs.String("queries", "", "also measure how often the vectors alone rank each query's paper in the top 10:\n"+
		"a TSV `FILE` of arXiv id and natural-language query (testdata/demo-queries.tsv, for the demo set)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*corpus == "") == (*dsn == "") || fs.NArg() > 0 {
		return errors.New("embed needs one of --corpus DIR and --db DSN, and no other arguments")
	}
	var r embedReport
	if *corpus != "" {
		man, err := readManifest(*corpus)
		if err != nil {
			return err
		}
		r.Synthetic = man.Synthetic
		*dsn = filepath.Join(*corpus, fmt.Sprintf("embed-bench-%d.db", time.Now().UnixNano()))
		defer func(path string) {
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				os.Remove(p)
			}
		}(*dsn)
	}
	bdb, err := db.Open(*dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	if err := db.Migrate(ctx, bdb); err != nil {
		return err
	}
	if *corpus != "" {
		start := time.Now()
		o := ingest.Options{Format: ingest.Kaggle, Paths: []string{filepath.Join(*corpus, papersFile)}}
		if _, err := ingest.Import(ctx, bdb, o); err != nil {
			return err
		}
		r.ImportS = time.Since(start).Seconds()
	}
	if err := measureEmbed(ctx, bdb, *dsn, *corpus != "", &r); err != nil {
		return err
	}
	if *queries != "" {
		qs, err := readQueries(*queries)
		if err != nil {
			return err
		}
		if r.Quality, err = measureQueries(ctx, bdb, qs); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "embed: %d queries: the paper in the top 10 for %.0f%%, MRR %.2f\n",
			r.Quality.Queries, 100*r.Quality.Top10, r.Quality.MRR)
	}
	r.Database = "SQLite"
	if db.IsPostgres(bdb) {
		r.Database = "PostgreSQL"
	}
	fmt.Fprintf(stderr, "embed: %d papers (%s): learned %d words × %d dims from %d papers in %.1fs (peak heap %.0f MB); "+
		"embedded in %.1fs (peak heap %.0f MB); %.0f B/paper, model %.1f MB\n",
		r.Papers, r.Database, r.Words, r.Dim, r.LearnDocs, r.LearnS, r.LearnHeapMB, r.EmbedS, r.EmbedHeapMB,
		r.BytesPerPaper, float64(r.ModelBytes)/(1<<20))
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// measureEmbed learns the built-in model and embeds every paper, timing
// each and sampling the heap's peak. On a fresh database (one the bench
// imported) the disk a paper takes is the file's growth; on another, whose
// free pages the vectors may reuse, the rows' bytes.
func measureEmbed(ctx context.Context, bdb *bun.DB, dsn string, fresh bool, r *embedReport) error {
	var err error
	if r.Papers, err = db.CountPapers(ctx, bdb); err != nil {
		return err
	}
	// Every paper is embedded: vectors an earlier run left would stand, a
	// model learned again from the same archive being the same model.
	if _, err := bdb.NewDelete().Model((*db.PaperEmbedding)(nil)).Where("model = ?", embed.BuiltinName).Exec(ctx); err != nil {
		return err
	}
	before := fileSize(ctx, bdb, dsn)
	var m *embed.Model
	r.LearnS, r.LearnHeapMB, err = heapPeak(func() error {
		m, _, err = embed.Builtin(ctx, bdb, embed.BuiltinOptions{Retrain: true})
		return err
	})
	if err != nil {
		return err
	}
	var sum embed.SyncSummary
	r.EmbedS, r.EmbedHeapMB, err = heapPeak(func() error {
		sum, err = embed.Sync(ctx, bdb, m, embed.SyncOptions{})
		return err
	})
	if err != nil {
		return err
	}
	if sum.Embedded != r.Papers {
		return fmt.Errorf("embedded %d papers of %d", sum.Embedded, r.Papers)
	}
	data, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	r.LearnDocs, r.Words, r.Dim, r.ModelBytes = m.Docs(), m.Words(), m.Dim(), len(data)
	// A vector's bytes and its row's other columns: paper id, model name,
	// hash, text revision and generation.
	r.VectorBytes = r.Papers * int64(4*m.Dim()+8+len(embed.BuiltinName)+8+8+8)
	r.BytesPerPaper = float64(r.VectorBytes) / float64(max(r.Papers, 1))
	if fresh && before > 0 {
		r.FileGrowth = fileSize(ctx, bdb, dsn) - before
		r.BytesPerPaper = float64(r.FileGrowth-int64(r.ModelBytes)) / float64(max(r.Papers, 1))
	}
	return nil
}

// heapPeak runs fn, returning its time and the Go heap's highest (in MB)
// sampled while it ran.
func heapPeak(fn func() error) (float64, float64, error) {
	runtime.GC()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapAlloc)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	err := fn()
	elapsed := time.Since(start).Seconds()
	close(done)
	<-sampled
	return elapsed, float64(peak) / (1 << 20), err
}

// fileSize is the size of a SQLite database's file, its WAL written
// back first (0 for a PostgreSQL DSN or a file not there).
func fileSize(ctx context.Context, bdb *bun.DB, dsn string) int64 {
	if db.IsPostgresDSN(dsn) {
		return 0
	}
	if _, err := bdb.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return 0
	}
	var n int64
	for _, p := range []string{dsn, dsn + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}
