package converse

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/smithy-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/tooluse/bedrock/converse/internal/redact"
)

// instrumentationName names the tracer and the meter, as otelhttp names
// its own by its import path.
const instrumentationName = "github.com/tooluse/bedrock/converse"

// The names of the OpenTelemetry GenAI semantic conventions this package
// emits, in one place. They are those of go.opentelemetry.io/otel/semconv
// v1.41.0, the last Go semconv package that carries the gen_ai.* keys; a
// test pins them against it.
const (
	keyOperationName    = attribute.Key("gen_ai.operation.name")
	keyProviderName     = attribute.Key("gen_ai.provider.name")
	keyRequestModel     = attribute.Key("gen_ai.request.model")
	keyRequestStream    = attribute.Key("gen_ai.request.stream")
	keyMaxTokens        = attribute.Key("gen_ai.request.max_tokens")
	keyTemperature      = attribute.Key("gen_ai.request.temperature")
	keyTopP             = attribute.Key("gen_ai.request.top_p")
	keyStopSequences    = attribute.Key("gen_ai.request.stop_sequences")
	keyFinishReasons    = attribute.Key("gen_ai.response.finish_reasons")
	keyTimeToFirstChunk = attribute.Key("gen_ai.response.time_to_first_chunk")
	keyInputTokens      = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens     = attribute.Key("gen_ai.usage.output_tokens")
	keyCacheReadTokens  = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyCacheWriteTokens = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	keyTokenType        = attribute.Key("gen_ai.token.type")
	keyToolName         = attribute.Key("gen_ai.tool.name")
	keyToolCallID       = attribute.Key("gen_ai.tool.call.id")
	keyToolType         = attribute.Key("gen_ai.tool.type")
	keyToolDescription  = attribute.Key("gen_ai.tool.description")
	keyToolArguments    = attribute.Key("gen_ai.tool.call.arguments")
	keyToolResult       = attribute.Key("gen_ai.tool.call.result")
	keyInputMessages    = attribute.Key("gen_ai.input.messages")
	keyOutputMessages   = attribute.Key("gen_ai.output.messages")
	keySystem           = attribute.Key("gen_ai.system_instructions")
	keyConversationID   = attribute.Key("gen_ai.conversation.id")
	keyAgentName        = attribute.Key("gen_ai.agent.name")
	keyGuardrailID      = attribute.Key("aws.bedrock.guardrail.id")
	keyServerAddress    = attribute.Key("server.address")
	keyServerPort       = attribute.Key("server.port")
	keyErrorType        = attribute.Key("error.type")
	// keyCostUSD is the Send's cost in US dollars (Result.CostUSD). The
	// conventions have no cost attribute yet (the proposal,
	// semantic-conventions-genai pull 443, is open), so the name is ours.
	keyCostUSD = attribute.Key("tooluse.converse.cost_usd")

	opChat        = "chat"
	opExecuteTool = "execute_tool"
	opInvokeAgent = "invoke_agent"
	providerName  = "aws.bedrock"
	errorOther    = "_OTHER"

	metricDuration     = "gen_ai.client.operation.duration"
	metricTokenUsage   = "gen_ai.client.token.usage"
	metricFirstChunk   = "gen_ai.client.operation.time_to_first_chunk"
	metricToolDuration = "gen_ai.execute_tool.duration"
)

// The conventions' advisory bucket boundaries: seconds for durations,
// tokens for usage.
var (
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// The kinds of the spans, made once: made at each start they would cost
// an allocation a span, even with the no-op providers.
var (
	internalSpan = trace.WithSpanKind(trace.SpanKindInternal)
	clientSpan   = trace.WithSpanKind(trace.SpanKindClient)
)

// startOptions are the options a span starts with: its kind and the attributes
// the conventions want "at span creation time", so that a sampler sees them.
// Those are operation, provider and model, and the ids of every span of the
// conversation.
func startOptions(kind trace.SpanStartOption, kv ...attribute.KeyValue) []trace.SpanStartOption {
	return []trace.SpanStartOption{kind, trace.WithAttributes(kv...)}
}

// telemetry holds a conversation's tracer and instruments. Everything it
// records goes through the OpenTelemetry API only; with the global no-op
// providers every span is non-recording, and attributes are only built for
// recording spans.
type telemetry struct {
	*instruments
	model     string
	chatName  string // of the model calls' spans: "chat {model}"
	content   bool   // record prompts, tool arguments and results
	agentName string
	// ids are the attributes of every span: the conversation's id and the
	// agent's name, when set.
	ids []attribute.KeyValue
	// The start options of the Send's spans and of the model's chat spans,
	// made with the conversation; those of a tool's spans (toolStart) are
	// made at its first call.
	sendStart, chatStart []trace.SpanStartOption
	toolMu               sync.Mutex
	toolStart            map[string][]trace.SpanStartOption
}

// newTelemetry makes the telemetry of a conversation with model and the
// options o; nil providers mean the global ones, read once here (the
// global providers delegate to whatever is installed later).
func newTelemetry(model string, o *Options) *telemetry {
	tm := o.Telemetry
	tp, mp, content, conversationID, agentName := tm.TracerProvider, tm.MeterProvider, tm.RecordContent, tm.ConversationID, tm.AgentName
	if conversationID == "" && o.Session != nil {
		conversationID = o.Session.ID
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	t := &telemetry{instruments: instrumentsOf(tp, mp), model: model, content: content, agentName: agentName}
	if conversationID != "" {
		t.ids = append(t.ids, keyConversationID.String(conversationID))
	}
	if agentName != "" {
		t.ids = append(t.ids, keyAgentName.String(agentName))
	}
	if last := lastStarts.Load(); t.ids == nil && last != nil && last.instruments == t.instruments && last.model == model {
		t.chatName, t.sendStart, t.chatStart = last.chatName, last.sendStart, last.chatStart
		return t
	}
	t.chatName = opChat + " " + model
	t.sendStart = startOptions(internalSpan, t.attributes(opInvokeAgent, keyRequestModel.String(model))...)
	t.chatStart = t.chatOptions(model)
	if t.ids == nil {
		lastStarts.Store(t)
	}
	return t
}

// lastStarts is the last telemetry made without ids, whose start options
// the next one with the same instruments and model shares. Made for each
// conversation, they were 1 KB of its 200 (BENCHMARKS.md). They are never
// changed.
var lastStarts atomic.Pointer[telemetry]

// attributes are those every span of operation op starts with: its
// operation, the provider, extra, and the conversation's ids.
func (t *telemetry) attributes(op string, extra ...attribute.KeyValue) []attribute.KeyValue {
	kv := append([]attribute.KeyValue{keyOperationName.String(op), keyProviderName.String(providerName)}, extra...)
	return append(kv, t.ids...)
}

// chatOptions are the start options of a chat span calling model.
func (t *telemetry) chatOptions(model string) []trace.SpanStartOption {
	return startOptions(clientSpan, t.attributes(opChat, keyRequestModel.String(model))...)
}

// instruments are the tracer and the instruments a pair of providers made.
type instruments struct {
	tp           trace.TracerProvider
	mp           metric.MeterProvider
	tracer       trace.Tracer
	duration     metric.Float64Histogram
	tokens       metric.Int64Histogram
	firstChunk   metric.Float64Histogram
	toolDuration metric.Float64Histogram
}

// lastInstruments are those of the last providers a conversation was made
// with. A program makes its conversations with the same providers, and
// instruments are safe for concurrent use. Made for each conversation, with
// the prices looked up at each model call, they were 1% of a loopback
// conversation's instructions (BENCHMARKS.md).
var lastInstruments atomic.Pointer[instruments]

// instrumentsOf returns the instruments of tp and mp, made once for as long
// as conversations are made with the same providers.
func instrumentsOf(tp trace.TracerProvider, mp metric.MeterProvider) *instruments {
	if in := lastInstruments.Load(); in != nil && same(in.tp, tp) && same(in.mp, mp) {
		return in
	}
	meter := mp.Meter(instrumentationName)
	in := &instruments{tp: tp, mp: mp, tracer: tp.Tracer(instrumentationName)}
	duration := func(name, desc string) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		return instrument(h, err, metric.Float64Histogram(noop.Float64Histogram{}))
	}
	in.duration = duration(metricDuration, "GenAI operation duration.")
	in.firstChunk = duration(metricFirstChunk, "Time to receive the first chunk of a streamed response.")
	in.toolDuration = duration(metricToolDuration, "Duration of a tool call.")
	tokens, err := meter.Int64Histogram(metricTokenUsage, metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	in.tokens = instrument(tokens, err, metric.Int64Histogram(noop.Int64Histogram{}))
	lastInstruments.Store(in)
	return in
}

// same reports whether a and b are the same provider. A provider of a type
// that cannot be compared is never the same, rather than a panic.
func same(a, b any) bool {
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t != nil && t.Comparable() && a == b
}

// instrument keeps an instrument the meter made, or fallback if it made
// none; its error goes to OpenTelemetry's error handler, as otelhttp does.
func instrument[H comparable](h H, err error, fallback H) H {
	if err != nil {
		otel.Handle(err)
	}
	var none H
	if h == none {
		return fallback
	}
	return h
}

// sendSpan is the span of one Send: the parent of its chat and
// execute_tool spans.
type sendSpan struct {
	span    trace.Span
	content bool // Options.Telemetry.RecordContent
}

// startSend starts the span of a Send, a child of the caller's span in ctx.
// The conventions name an agent loop's operation invoke_agent; the span is
// named "invoke_agent {Options.Telemetry.AgentName}", or "invoke_agent" without one,
// and is INTERNAL as the loop runs in the caller's process.
func (t *telemetry) startSend(ctx context.Context) (context.Context, sendSpan) {
	name := opInvokeAgent
	if t.agentName != "" {
		name += " " + t.agentName
	}
	ctx, span := t.tracer.Start(ctx, name, t.sendStart...)
	return ctx, sendSpan{span: span, content: t.content}
}

// end ends the Send's span with its total usage, its last stop reason and
// its error.
func (s sendSpan) end(res *Result, err error) {
	if s.span.IsRecording() {
		if res != nil {
			if res.StopReason != "" {
				s.span.SetAttributes(keyFinishReasons.StringSlice([]string{string(res.StopReason)}))
			}
			s.span.SetAttributes(usageAttributes(res.Usage)...)
			if res.CostUSD != nil {
				s.span.SetAttributes(keyCostUSD.Float64(*res.CostUSD))
			}
		}
		if err != nil {
			fail(s.span, sendErrorType(err), s.description(err))
		}
	}
	s.span.End()
}

// description is the status description of a failed Send: its error's text.
// The error of an answer that does not match the schema quotes the model's
// answer, which is content. Its text is recorded with
// Options.Telemetry.RecordContent only.
func (s sendSpan) description(err error) string {
	if !s.content && errors.Is(err, ErrInvalidAnswer) {
		return "converse: " + ErrInvalidAnswer.Error() + " (the reason quotes the answer, content recorded only with Options.Telemetry.RecordContent)"
	}
	return err.Error()
}

// abort ends the Send's span if it has not ended: deferred, it ends the
// span of a Send that a panic cut off.
func (s sendSpan) abort() { abort(s.span) }

// errAborted is the error.type of a span whose operation a panic (or
// runtime.Goexit) passing through it cut off: a panic of the caller's
// OnEvent, Approver, hooks or Client, or of the program's own.
const errAborted = "aborted"

// abort ends span, if it has not ended, as cut off: it is deferred where
// the caller's code runs, so that a panic through it leaves no span
// unexported. An ended span records nothing more (IsRecording is false).
func abort(span trace.Span) {
	if span == nil || !span.IsRecording() {
		return
	}
	span.SetAttributes(keyErrorType.String(errAborted))
	span.SetStatus(codes.Error, "cut off by a panic")
	span.End()
}

// usageAttributes are the token counts of a span; the cache counts only
// when Bedrock reported some.
func usageAttributes(u Usage) []attribute.KeyValue {
	kv := []attribute.KeyValue{keyInputTokens.Int(inputTokens(u)), keyOutputTokens.Int(u.OutputTokens)}
	if u.CacheReadInputTokens > 0 {
		kv = append(kv, keyCacheReadTokens.Int(u.CacheReadInputTokens))
	}
	if u.CacheWriteInputTokens > 0 {
		kv = append(kv, keyCacheWriteTokens.Int(u.CacheWriteInputTokens))
	}
	return kv
}

// inputTokens is gen_ai.usage.input_tokens, the billed input tokens: the
// conventions include the cached ones ("This value SHOULD include all types
// of input tokens, including cached tokens"), which Bedrock's inputTokens
// leaves out and counts in cacheReadInputTokens and cacheWriteInputTokens.
func inputTokens(u Usage) int {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens
}

// fail marks a recording span as failed. The description is an error's text,
// redacted. For a Send or a model call it is ours or the SDK's, never a
// tool's. An AWS error body can echo the signed request, session token
// included.
func fail(span trace.Span, errType, description string) {
	span.SetAttributes(keyErrorType.String(errType))
	span.SetStatus(codes.Error, redact.String(description))
}

// sendErrorType is the error.type of a failed Send or model call: the code
// of a Bedrock exception (ThrottlingException, ValidationException...), a
// name of ours for the loop's own errors, or _OTHER.
func sendErrorType(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() != "" {
		return ae.ErrorCode()
	}
	for _, e := range []struct {
		err  error
		name string
	}{
		{context.DeadlineExceeded, "timeout"},
		{context.Canceled, "cancelled"},
		{ErrPaused, "paused"},
		{ErrMaxTurns, "max_turns"},
		{ErrInvalidAnswer, "invalid_answer"},
		{ErrMaxTokens, "max_tokens"},
		{ErrMalformedToolUse, "malformed_tool_use"},
		{ErrMalformedModelOutput, "malformed_model_output"},
		{ErrContextWindowExceeded, "context_window_exceeded"},
		{ErrStreamTruncated, "stream_truncated"},
		{ErrStalled, "stalled"},
		{errHedgeLost, "hedge_lost"},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return errorOther
}

// seconds is the time since start, in the unit of the duration metrics.
func seconds(start time.Time) float64 {
	return time.Since(start).Seconds()
}
