package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/extra/bunotel"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceStatements returns bdb with a span per SQL statement, a child of
// the request's span, when tp is set (Config.TracerProvider).
func traceStatements(bdb *bun.DB, tp trace.TracerProvider) *bun.DB {
	if tp == nil {
		return bdb
	}
	return bdb.WithQueryHook(bunotel.NewQueryHook(bunotel.WithTracerProvider(tp), bunotel.WithDBName("papergraph")))
}

// traceRequests wraps h with a span per HTTP request when tp is set,
// continuing a trace the client's traceparent header started.
func traceRequests(h http.Handler, tp trace.TracerProvider) http.Handler {
	if tp == nil {
		return h
	}
	return otelhttp.NewHandler(h, "papergraph",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
		otelhttp.WithSpanNameFormatter(spanName),
	)
}

// spanName names a request's span by its method and route, not its full
// path, whose ids would make a name per paper.
func spanName(_ string, r *http.Request) string {
	route := r.URL.Path
	if i := strings.IndexByte(strings.TrimPrefix(route, "/"), '/'); i >= 0 {
		route = route[:i+1] + "/…"
	}
	return r.Method + " " + route
}

// nameOperation puts the GraphQL operation's name and type on the
// request's span, if it is being traced.
func nameOperation(ctx context.Context, name string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("graphql.operation.name", name)}
	if graphql.HasOperationContext(ctx) {
		if op := graphql.GetOperationContext(ctx).Operation; op != nil {
			attrs = append(attrs, attribute.String("graphql.operation.type", string(op.Operation)))
		}
	}
	span.SetAttributes(attrs...)
}
