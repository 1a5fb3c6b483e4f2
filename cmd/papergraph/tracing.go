package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// tracerProvider exports traces over OTLP/HTTP to endpoint (a URL such as
// http://collector:4318), or to the one the standard OTEL_EXPORTER_OTLP_*
// variables name when endpoint is empty; with neither, tracing is off
// and it returns nil. The returned function flushes and stops it.
func tracerProvider(ctx context.Context, endpoint string) (trace.TracerProvider, func(), error) {
	var opts []otlptracehttp.Option
	switch {
	case endpoint != "":
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, fmt.Errorf("%w: --otlp-endpoint %q: want an http(s) URL such as http://collector:4318", errUsage, endpoint)
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
	case os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "":
		return nil, func() {}, nil
	}
	exporter, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: --otlp-endpoint: %v", errUsage, err)
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the name.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "papergraph")),
		resource.WithFromEnv(), resource.WithHost())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	return tp, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tp.Shutdown(ctx) //nolint:errcheck // spans lost at exit are not worth failing the exit for
	}, nil
}
