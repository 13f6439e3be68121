package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
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

// exitTimeout bounds the export of what is left when converse exits,
// unless OTEL_EXPORTER_OTLP_TIMEOUT (or its _TRACES_ or _METRICS_ form)
// sets another bound: a collector that does not answer costs every run
// that much.
const exitTimeout = 2 * time.Second

// setupTelemetry installs OTLP exporters as the global OpenTelemetry
// providers, which the converse library uses by default, when the standard
// variables ask for them. It installs traces and metrics when
// OTEL_EXPORTER_OTLP_ENDPOINT is set, traces when
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is, metrics when
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is. They export over http/protobuf
// unless OTEL_EXPORTER_OTLP_PROTOCOL (or its _TRACES_ or _METRICS_ form) says
// grpc. OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER none turns that signal
// off, OTEL_SDK_DISABLED=true all of it. The exporters read the endpoints,
// OTEL_EXPORTER_OTLP_HEADERS and the other OTLP variables themselves, and the
// resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (service.name is
// "converse" otherwise). Without these variables nothing is installed and
// nothing is exported.
//
// With traces, the global propagator is W3C trace context and baggage, the
// default of OTEL_PROPAGATORS, so that Lambda tools get the call's
// traceparent in their ClientContext.
//
// The SDK's own errors (a failed export while converse runs) are lines
// on stderr, which redacts them. The returned function flushes and shuts
// the providers down (see exporters.flush); run defers it, so it runs on
// success, on failure and after an interrupt.
func setupTelemetry(ctx context.Context, stderr io.Writer) (func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	traces, metrics, err := signalsWanted()
	if err != nil || (!traces && !metrics) {
		return none, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "converse")),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil {
		return nil, &usageError{fmt.Errorf("OpenTelemetry resource: %w", err)}
	}
	exps := &exporters{stderr: stderr}
	if traces {
		if err := exps.installTraces(ctx, res); err != nil {
			return nil, err
		}
	}
	if metrics {
		if err := exps.installMetrics(ctx, res); err != nil {
			return nil, err
		}
	}
	// Not the log package's default, raw on the process's standard error.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		fmt.Fprintf(stderr, "converse: telemetry: %v\n", err)
	}))
	return exps.flush, nil
}

// signalsWanted reports which signals the environment asks to export:
// none with OTEL_SDK_DISABLED=true.
func signalsWanted() (traces, metrics bool, err error) {
	if disabled, _ := strconv.ParseBool(os.Getenv("OTEL_SDK_DISABLED")); disabled {
		return false, false, nil
	}
	// The general endpoint covers every signal, as OTel's exporters
	// specify; a signal's own variable overrides it (the exporters read
	// both).
	all := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	traces = all || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	metrics = all || os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
	for _, signal := range []struct {
		name string
		on   *bool
	}{{"TRACES", &traces}, {"METRICS", &metrics}} {
		wanted, err := exporterWanted(signal.name)
		if err != nil {
			return false, false, err
		}
		*signal.on = *signal.on && wanted
	}
	return traces, metrics, nil
}

// installTraces makes an OTLP tracer provider of res the global one, with
// the W3C propagator, and keeps its shutdown in e.
func (e *exporters) installTraces(ctx context.Context, res *resource.Resource) error {
	timeout, err := exportTimeout("TRACES")
	if err != nil {
		return err
	}
	exp, err := traceExporter(ctx)
	if err != nil {
		return err
	}
	tp := trace.NewTracerProvider(trace.WithBatcher(exp), trace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	e.shutdowns = append(e.shutdowns, shutdown{tp.Shutdown, timeout})
	return nil
}

// installMetrics makes an OTLP meter provider of res the global one, and
// keeps its shutdown in e.
func (e *exporters) installMetrics(ctx context.Context, res *resource.Resource) error {
	timeout, err := exportTimeout("METRICS")
	if err != nil {
		return err
	}
	exp, err := metricExporter(ctx)
	if err != nil {
		return err
	}
	mp := metric.NewMeterProvider(metric.WithReader(metric.NewPeriodicReader(exp)), metric.WithResource(res))
	otel.SetMeterProvider(mp)
	e.shutdowns = append(e.shutdowns, shutdown{mp.Shutdown, timeout})
	return nil
}

// exporterWanted reads OTEL_{signal}_EXPORTER, the SDK's choice of a
// signal's exporter: none turns the signal off; otlp, the default, is the
// only exporter converse has, and another is a usage error.
func exporterWanted(signal string) (bool, error) {
	name := "OTEL_" + signal + "_EXPORTER"
	switch v := strings.TrimSpace(os.Getenv(name)); v {
	case "", "otlp":
		return true, nil
	case "none":
		return false, nil
	default:
		return false, usagef("%s %q is not supported: otlp or none", name, v)
	}
}

// captureContent reads OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
// the GenAI conventions' switch for recording prompts, answers and tool
// input and output in the spans (converse.Telemetry.RecordContent): off
// unless it is true. A value that is no boolean is a usage error.
func captureContent() (bool, error) {
	const name = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return false, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, usagef("%s %q: want true or false", name, v)
	}
	return on, nil
}

// newConversationID is the gen_ai.conversation.id of a run without
// -session (whose id is the session's): one id for all the prompts of a
// chat, so that its traces are one conversation's.
func newConversationID() string {
	return "converse-" + rand.Text()
}

// exporters are the installed providers, to shut down at exit.
type exporters struct {
	shutdowns []shutdown
	stderr    io.Writer
}

// shutdown flushes and shuts a provider down, in at most timeout.
type shutdown struct {
	shutdown func(context.Context) error
	timeout  time.Duration
}

// flush exports what is left and shuts the providers down, all at once, each
// within its timeout; a failure is a line on stderr. ctx is the command's. If
// it was cancelled before (an interrupted conversation, whose spans matter
// most), the export goes on to its timeout, and a second interrupt exits (see
// main). If it is cancelled during the export (a first Ctrl-C once the
// conversation has ended), the export stops. flush then returns an error
// wrapping context.Canceled, for exit status 130.
func (e *exporters) flush(ctx context.Context) error {
	interrupted := ctx.Err() != nil
	if interrupted {
		ctx = context.WithoutCancel(ctx)
	}
	errs := make([]error, len(e.shutdowns))
	var wg sync.WaitGroup
	for i, s := range e.shutdowns {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, s.timeout)
			defer cancel()
			errs[i] = s.shutdown(ctx)
		})
	}
	wg.Wait()
	if !interrupted && ctx.Err() != nil {
		return fmt.Errorf("interrupted while exporting telemetry: %w", ctx.Err())
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(e.stderr, "converse: exporting telemetry: %v\n", err)
	}
	return nil
}

// exportTimeout is the bound of a signal's export at exit: its
// OTEL_EXPORTER_OTLP_{signal}_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT, in
// milliseconds as the exporters read them, else exitTimeout.
func exportTimeout(signal string) (time.Duration, error) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			continue
		}
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return 0, usagef("%s %q: want a positive number of milliseconds", name, v)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	return exitTimeout, nil
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
