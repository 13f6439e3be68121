package converse_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// BenchmarkConversationTelemetry is BenchmarkConversation's 3-turn tool
// conversation (Converse, loopback) with the telemetry of each kind. global
// sets no provider: it gets the global no-op ones, as a program that did not
// set up OpenTelemetry does. noop has explicit no-op providers. sdk has the
// SDK, recording every span in memory and aggregating every metric.
func BenchmarkConversationTelemetry(b *testing.B) {
	srv := bedrocktest.NewServer(benchModel(2))
	defer srv.Close()
	client := srv.Client()
	reg := benchRegistry(b)
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	sdkTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	sdkMP := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer func() { _ = sdkTP.Shutdown(ctx); _ = sdkMP.Shutdown(ctx) }()
	for _, tc := range []struct {
		name string
		tp   trace.TracerProvider
		mp   metric.MeterProvider
	}{
		{"global", nil, nil},
		{"noop", tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()},
		{"sdk", sdkTP, sdkMP},
	} {
		b.Run("telemetry="+tc.name, func(b *testing.B) {
			cpu := benchCPU()
			for b.Loop() {
				conv := converse.New(client, claude, reg, func(o *converse.Options) {
					o.Telemetry.TracerProvider, o.Telemetry.MeterProvider = tc.tp, tc.mp
				})
				if _, err := conv.Send(ctx, "Add things."); err != nil {
					b.Fatal(err)
				}
				spans.Reset()
			}
			benchReportCPU(b, cpu)
		})
	}
}
