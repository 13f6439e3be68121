package converse

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/tooluse/bedrock/tools"
)

// TestTelemetryNames pins the names this package emits to those of the
// GenAI semantic conventions in semconv v1.41.0, the last Go semconv
// version that carries them. gen_ai.execute_tool.duration came later, with
// the conventions' own repository, and is pinned to its spelling there.
func TestTelemetryNames(t *testing.T) {
	for _, tc := range []struct{ ours, want attribute.Key }{
		{keyOperationName, semconv.GenAIOperationNameKey},
		{keyProviderName, semconv.GenAIProviderNameKey},
		{keyRequestModel, semconv.GenAIRequestModelKey},
		{keyRequestStream, semconv.GenAIRequestStreamKey},
		{keyMaxTokens, semconv.GenAIRequestMaxTokensKey},
		{keyTemperature, semconv.GenAIRequestTemperatureKey},
		{keyTopP, semconv.GenAIRequestTopPKey},
		{keyStopSequences, semconv.GenAIRequestStopSequencesKey},
		{keyFinishReasons, semconv.GenAIResponseFinishReasonsKey},
		{keyTimeToFirstChunk, semconv.GenAIResponseTimeToFirstChunkKey},
		{keyInputTokens, semconv.GenAIUsageInputTokensKey},
		{keyOutputTokens, semconv.GenAIUsageOutputTokensKey},
		{keyCacheReadTokens, semconv.GenAIUsageCacheReadInputTokensKey},
		{keyCacheWriteTokens, semconv.GenAIUsageCacheCreationInputTokensKey},
		{keyTokenType, semconv.GenAITokenTypeKey},
		{keyToolName, semconv.GenAIToolNameKey},
		{keyToolCallID, semconv.GenAIToolCallIDKey},
		{keyToolType, semconv.GenAIToolTypeKey},
		{keyToolDescription, semconv.GenAIToolDescriptionKey},
		{keyToolArguments, semconv.GenAIToolCallArgumentsKey},
		{keyToolResult, semconv.GenAIToolCallResultKey},
		{keyInputMessages, semconv.GenAIInputMessagesKey},
		{keyOutputMessages, semconv.GenAIOutputMessagesKey},
		{keySystem, semconv.GenAISystemInstructionsKey},
		{keyServerAddress, semconv.ServerAddressKey},
		{keyServerPort, semconv.ServerPortKey},
		{keyErrorType, semconv.ErrorTypeKey},
		{keyGuardrailID, semconv.AWSBedrockGuardrailIDKey},
		{keyConversationID, semconv.GenAIConversationIDKey},
		{keyAgentName, semconv.GenAIAgentNameKey},
	} {
		assert.Equal(t, tc.want, tc.ours)
	}
	for _, tc := range []struct{ ours, want attribute.KeyValue }{
		{keyOperationName.String(opChat), semconv.GenAIOperationNameChat},
		{keyOperationName.String(opExecuteTool), semconv.GenAIOperationNameExecuteTool},
		{keyOperationName.String(opInvokeAgent), semconv.GenAIOperationNameInvokeAgent},
		{keyProviderName.String(providerName), semconv.GenAIProviderNameAWSBedrock},
		{keyTokenType.String("input"), semconv.GenAITokenTypeInput},
		{keyTokenType.String("output"), semconv.GenAITokenTypeOutput},
		{keyToolType.String("function"), semconv.GenAIToolTypeKey.String("function")},
		{keyErrorType.String(errorOther), semconv.ErrorTypeOther},
	} {
		assert.Equal(t, tc.want, tc.ours)
	}
	assert.Equal(t, genaiconv.ClientOperationDuration{}.Name(), metricDuration)
	assert.Equal(t, genaiconv.ClientOperationDuration{}.Unit(), "s")
	assert.Equal(t, genaiconv.ClientTokenUsage{}.Name(), metricTokenUsage)
	assert.Equal(t, genaiconv.ClientTokenUsage{}.Unit(), "{token}")
	assert.Equal(t, genaiconv.ClientOperationTimeToFirstChunk{}.Name(), metricFirstChunk)
	assert.Equal(t, "gen_ai.execute_tool.duration", metricToolDuration)
}

// TestTelemetryExecutorDuplicate traces a call answered as a duplicate by
// Execute: it never runs, but has its span.
func TestTelemetryExecutorDuplicate(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reg, err := tools.NewRegistry(tools.Calculator())
	require.NoError(t, err)
	e := &Executor{Registry: reg, tel: newTelemetry("m", &Options{Telemetry: Telemetry{TracerProvider: tp}})}
	call := func() types.ContentBlock {
		return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("d"), Name: aws.String("calculator"),
			Input: document.NewLazyDocument(map[string]any{"a": 1, "b": 2})}}
	}
	require.Len(t, e.Execute(context.Background(), []types.ContentBlock{call(), call()}), 2)
	var got []string
	for _, s := range spans.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == keyErrorType {
				got = append(got, kv.Value.AsString())
			}
		}
	}
	assert.Len(t, spans.Ended(), 2)
	assert.Equal(t, []string{"duplicate_id"}, got)
}

// conversationTelemetry is the telemetry of BenchmarkConversation's
// conversation (one Send, three model calls, four tool calls), with e's
// registry holding the calculator; it starts eight spans.
func conversationTelemetry(ctx context.Context, e *Executor, out outcome) {
	tel := e.telemetry()
	sctx, send := tel.startSend(ctx)
	for range 3 {
		_, chat := tel.startChat(sctx, false, &bedrockruntime.ConverseInput{ModelId: aws.String(tel.model)})
		chat.options()
		chat.end(&turnResult{stop: types.StopReasonToolUse}, nil)
	}
	for range 4 {
		_, span := e.startTool(sctx, toolCall{id: "t", name: "calculator"})
		span.end(out, 10)
	}
	send.end(&Result{}, nil)
}

// TestTelemetryNoopAllocations: with the global providers and no SDK set
// up, the telemetry of a conversation allocates nothing beyond its spans'
// names and what the global tracer's Start of its eight spans does.
func TestTelemetryNoopAllocations(t *testing.T) {
	reg, err := tools.NewRegistry(tools.Calculator())
	require.NoError(t, err)
	e := &Executor{Registry: reg, tel: newTelemetry("m", &Options{})}
	ctx := context.Background()
	out := outcome{output: []byte("1")}
	c := toolCall{name: "calculator"}
	starts := testing.AllocsPerRun(100, func() {
		e.tel.tracer.Start(ctx, opInvokeAgent)
		for range 3 {
			e.tel.tracer.Start(ctx, e.tel.chatName)
		}
		for range 4 {
			e.tel.tracer.Start(ctx, opExecuteTool+" "+c.name)
		}
	})
	assert.Equal(t, starts, testing.AllocsPerRun(100, func() { conversationTelemetry(ctx, e, out) }))
}

// BenchmarkTelemetryOverhead is conversationTelemetry with the global
// providers, none set up: what a program that did not set up
// OpenTelemetry pays per conversation. Compare with BenchmarkConversation.
func BenchmarkTelemetryOverhead(b *testing.B) {
	reg, err := tools.NewRegistry(tools.Calculator())
	require.NoError(b, err)
	e := &Executor{Registry: reg, tel: newTelemetry("m", &Options{})}
	ctx := context.Background()
	out := outcome{output: []byte("1")} // the tool's, not the telemetry's
	for b.Loop() {
		conversationTelemetry(ctx, e, out)
	}
}

// unhashableTracers is a TracerProvider of a type that cannot be compared.
type unhashableTracers struct {
	trace.TracerProvider
	_ []int
}

// TestInstrumentsAreShared: conversations made with the same providers
// share one tracer and one set of instruments; other providers get their
// own, and a provider that cannot be compared is not a panic.
func TestInstrumentsAreShared(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider()
	with := func(tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
		return newTelemetry("m", &Options{Telemetry: Telemetry{TracerProvider: tp, MeterProvider: mp}})
	}
	first := with(tp, mp)
	assert.Same(t, first.instruments, with(tp, mp).instruments, "same providers")
	assert.NotSame(t, first.instruments, with(sdktrace.NewTracerProvider(), mp).instruments, "another tracer provider")
	assert.NotSame(t, first.instruments, with(tp, sdkmetric.NewMeterProvider()).instruments, "another meter provider")
	odd := unhashableTracers{TracerProvider: tp}
	assert.NotPanics(t, func() { with(odd, mp) })
	assert.NotSame(t, with(odd, mp).instruments, with(odd, mp).instruments, "a provider that cannot be compared")
}
