package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/demo"
	"github.com/papergraph/papergraph/ingest"
)

// askQuestions are questions of the demo set's fields, in plain words.
var askQuestions = []string{
	"What is the source of axions?",
	"How do black holes lose information?",
	"What is the entropy of a black hole?",
	"Why is the cosmological constant small?",
	"How are magnetic monopoles quantized?",
	"What are the dualities of string theory?",
	"How are acoustic emission sources located?",
}

// BenchmarkAsk asks the demo set askQuestions in turn through the whole
// server, without a model (the passages alone: the server's own work), on
// each database, and reports the median and 90th percentile request:
//
//	PAPERGRAPH_TEST_POSTGRES=postgres://… go test ./server -run '^$' -bench BenchmarkAsk -benchtime 100x
func BenchmarkAsk(b *testing.B) {
	for _, kind := range dbtest.Kinds() {
		b.Run(kind, func(b *testing.B) {
			bdb := dbtest.Open(b, dbtest.NewMigrated(b, kind))
			jobs := demo.Imports()
			for i, o := range jobs {
				o.SkipDerive = i < len(jobs)-1
				if _, err := ingest.Import(b.Context(), bdb, o); err != nil {
					b.Fatalf("import %s: %v", o.Format.Name, err)
				}
			}
			s, err := New(Config{DB: bdb, Logger: discardLogger()})
			if err != nil {
				b.Fatal(err)
			}
			h := s.Handler()
			bodies := make([][]byte, len(askQuestions))
			for i, q := range askQuestions {
				bodies[i], _ = json.Marshal(map[string]any{"query": askPassagesDoc, "variables": map[string]any{"question": q, "first": 5}})
			}
			var took []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(bodies[i%len(bodies)]))
				req.Header.Set("Content-Type", mediaJSON)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				took = append(took, time.Since(start))
				if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) || !bytes.Contains(rec.Body.Bytes(), []byte(`"number":1`)) {
					b.Fatalf("%q: status %d: %.300s", askQuestions[i%len(bodies)], rec.Code, rec.Body)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
		})
	}
}
