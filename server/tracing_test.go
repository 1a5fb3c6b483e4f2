package server

import (
	"net/http"
	"testing"

	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// TestTraces: with a TracerProvider, a request makes a span named by its
// route with the GraphQL operation on it, continuing the client's trace,
// and each SQL statement a span under it.
func TestTraces(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		sum, err := ingest.Import(t.Context(), bdb, ingest.Options{Format: ingest.Paperscape, Paths: []string{"testdata/pscp.csv"}})
		if err != nil || !sum.OK() {
			t.Fatalf("import: %+v, %v", sum, err)
		}
		spans := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
		defer tp.Shutdown(t.Context()) //nolint:errcheck // an in-memory exporter
		h := newTestServer(t, bdb, Config{TracerProvider: tp}).Handler()

		const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		req := post(t, map[string]string{
			"query":         `query PaperPage { paper(id: "hep-th/9201001") { title authors { researcher { name } } } }`,
			"operationName": "PaperPage",
		}, mediaJSON)
		req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
		rec := serve(h, req)
		if resp := decode(t, rec); rec.Code != http.StatusOK || len(resp.Errors) > 0 {
			t.Fatalf("status %d, errors %+v", rec.Code, resp.Errors)
		}

		var request sdktrace.ReadOnlySpan
		got := spans.GetSpans().Snapshots()
		for _, s := range got {
			if s.Name() == "POST /graphql" {
				request = s
			}
		}
		if request == nil {
			t.Fatalf("no span named POST /graphql among %d", len(got))
		}
		if id := request.SpanContext().TraceID().String(); id != traceID {
			t.Errorf("request span in trace %s, want the client's %s", id, traceID)
		}
		attrs := map[attribute.Key]string{}
		for _, kv := range request.Attributes() {
			attrs[kv.Key] = kv.Value.Emit()
		}
		if attrs["graphql.operation.name"] != "PaperPage" || attrs["graphql.operation.type"] != "query" {
			t.Errorf("request span attributes %v, want graphql.operation.name PaperPage and type query", attrs)
		}
		statements := 0
		for _, s := range got {
			if s.Parent().SpanID() == request.SpanContext().SpanID() && s.Name() == "SELECT" {
				statements++
			}
		}
		if statements == 0 {
			t.Errorf("no SQL statement span under the request's; spans: %d", len(got))
		}
	})
}
