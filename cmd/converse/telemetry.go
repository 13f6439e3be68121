package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace"
)

// flushTimeout bounds the export of what is left when converse exits.
const flushTimeout = 5 * time.Second

// setupTelemetry installs OTLP exporters as the global OpenTelemetry
// providers, which the converse library uses by default, when the standard
// variables ask for them: traces when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, metrics when
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set, over http/protobuf unless
// OTEL_EXPORTER_OTLP_PROTOCOL (or its _TRACES_ or _METRICS_ form) says
// grpc. OTEL_SDK_DISABLED=true turns it all off. The exporters read the
// endpoints, OTEL_EXPORTER_OTLP_HEADERS and the other OTLP variables
// themselves, and the resource OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES (service.name is "converse" otherwise). Without
// these variables nothing is installed and nothing is exported.
//
// With traces, the global propagator is W3C trace context and baggage, the
// default of OTEL_PROPAGATORS, so that Lambda tools get the call's
// traceparent in their ClientContext.
//
// The returned function flushes and shuts the providers down; run defers
// it, so it runs on success, on failure and after an interrupt.
func setupTelemetry(ctx context.Context) (func(stderr io.Writer), error) {
	none := func(io.Writer) {}
	if disabled, _ := strconv.ParseBool(os.Getenv("OTEL_SDK_DISABLED")); disabled {
		return none, nil
	}
	traces := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	metrics := os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
	if !traces && !metrics {
		return none, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "converse")),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil {
		return nil, &usageError{fmt.Errorf("OpenTelemetry resource: %w", err)}
	}
	var shutdowns []func(context.Context) error
	if traces {
		exp, err := traceExporter(ctx)
		if err != nil {
			return nil, err
		}
		tp := trace.NewTracerProvider(trace.WithBatcher(exp), trace.WithResource(res))
		otel.SetTracerProvider(tp)
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
		shutdowns = append(shutdowns, tp.Shutdown)
	}
	if metrics {
		exp, err := metricExporter(ctx)
		if err != nil {
			return nil, err
		}
		mp := metric.NewMeterProvider(metric.WithReader(metric.NewPeriodicReader(exp)), metric.WithResource(res))
		otel.SetMeterProvider(mp)
		shutdowns = append(shutdowns, mp.Shutdown)
	}
	return func(stderr io.Writer) {
		// Not the command's context: after an interrupt it is cancelled,
		// and the spans of the interrupted conversation matter most.
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		var errs []error
		for _, shutdown := range shutdowns {
			errs = append(errs, shutdown(ctx))
		}
		if err := errors.Join(errs...); err != nil {
			fmt.Fprintf(stderr, "converse: exporting telemetry: %v\n", err)
		}
	}, nil
}

// protocol is the OTLP protocol of a signal: its own variable, else the
// general one, else http/protobuf.
func protocol(signal string) (string, error) {
	p := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	if p == "" {
		p = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p = strings.TrimSpace(p); p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return p, nil
	}
	return "", &usageError{fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q is not supported: use http/protobuf or grpc", p)}
}

func traceExporter(ctx context.Context) (trace.SpanExporter, error) {
	p, err := protocol("TRACES")
	if err != nil {
		return nil, err
	}
	if p == "grpc" {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

func metricExporter(ctx context.Context) (metric.Exporter, error) {
	p, err := protocol("METRICS")
	if err != nil {
		return nil, err
	}
	if p == "grpc" {
		return otlpmetricgrpc.New(ctx)
	}
	return otlpmetrichttp.New(ctx)
}
