package converse

import (
	"context"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// chatSpan times one model call (Converse or ConverseStream, the SDK's
// retries included) and records it as a span and as metrics. It is a
// value, kept by the caller: only what the SDK's middleware shares, the
// endpoint, is allocated, and only when something records it.
type chatSpan struct {
	t      *telemetry
	model  string // the model called
	span   trace.Span
	start  time.Time
	chunk  bool      // the first chunk of a stream has arrived
	server *endpoint // set by options; nil when nothing records the endpoint
}

// endpoint is where the SDK sent a model call: server.address and
// server.port, once the SDK has resolved them.
type endpoint struct {
	mu  sync.Mutex
	set attribute.Set
}

// startChat starts the span of a model call, named "chat {model}" and of
// kind CLIENT, with the request's attributes.
func (t *telemetry) startChat(ctx context.Context, stream bool, in *bedrockruntime.ConverseInput) (context.Context, chatSpan) {
	model, name, start := t.model, t.chatName, t.chatStart
	if id := aws.ToString(in.ModelId); id != model { // PrepareTurn's or a fallback
		model, name, start = id, opChat+" "+id, t.chatOptions(id)
	}
	ctx, span := t.tracer.Start(ctx, name, start...)
	s := chatSpan{t: t, model: model, span: span, start: time.Now()}
	if !span.IsRecording() {
		return ctx, s
	}
	if stream {
		span.SetAttributes(keyRequestStream.Bool(true))
	}
	if ic := in.InferenceConfig; ic != nil {
		if ic.MaxTokens != nil {
			span.SetAttributes(keyMaxTokens.Int(int(*ic.MaxTokens)))
		}
		if ic.Temperature != nil {
			span.SetAttributes(keyTemperature.Float64(decimal(*ic.Temperature)))
		}
		if ic.TopP != nil {
			span.SetAttributes(keyTopP.Float64(decimal(*ic.TopP)))
		}
		if len(ic.StopSequences) > 0 {
			span.SetAttributes(keyStopSequences.StringSlice(ic.StopSequences))
		}
	}
	if g := in.GuardrailConfig; g != nil && g.GuardrailIdentifier != nil {
		span.SetAttributes(keyGuardrailID.String(*g.GuardrailIdentifier))
	}
	if t.content {
		span.SetAttributes(keyInputMessages.String(messagesJSON(in.Messages, "")))
		if len(in.System) > 0 {
			span.SetAttributes(keySystem.String(systemJSON(in.System)))
		}
	}
	return ctx, s
}

// decimal is the float64 of the decimal f was written as: 0.7, not the
// 0.699999988079071 of float64(f), so that a query for a temperature of
// 0.7 finds it.
func decimal(f float32) float64 {
	d, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return d
}

// options are the SDK options of the call: a middleware that records the
// endpoint the SDK resolved as server.address and server.port. That is where
// the request really goes: a region's endpoint, a FIPS or VPC endpoint,
// BaseEndpoint. None when nothing would use them.
func (s *chatSpan) options() []func(*bedrockruntime.Options) {
	if !s.span.IsRecording() && !s.t.duration.Enabled(context.Background()) {
		return nil
	}
	e := &endpoint{}
	s.server = e
	return []func(*bedrockruntime.Options){func(o *bedrockruntime.Options) {
		o.APIOptions = append(o.APIOptions, e.addMiddleware)
	}}
}

func (e *endpoint) addMiddleware(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("converse.telemetry.server",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if req, ok := in.Request.(*smithyhttp.Request); ok && req.URL != nil {
				e.resolved(req.URL)
			}
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

func (e *endpoint) resolved(u *url.URL) {
	host := u.Hostname()
	if host == "" {
		return
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 443
		if u.Scheme == "http" {
			port = 80
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.set = attribute.NewSet(keyServerAddress.String(host), keyServerPort.Int(port))
}

// attributes are server.address and server.port; none before the SDK has
// resolved the endpoint, or when nothing records it (e is nil).
func (e *endpoint) attributes() []attribute.KeyValue {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.set.ToSlice()
}

// chunked notes the arrival of a stream's chunk; the first one sets the
// span's gen_ai.response.time_to_first_chunk and is recorded by the
// gen_ai.client.operation.time_to_first_chunk histogram.
func (s *chatSpan) chunked() {
	if s.chunk {
		return
	}
	s.chunk = true
	d := seconds(s.start)
	if s.span.IsRecording() {
		s.span.SetAttributes(keyTimeToFirstChunk.Float64(d))
	}
	if ctx := context.Background(); s.t.firstChunk.Enabled(ctx) {
		s.t.firstChunk.Record(ctx, d, metric.WithAttributeSet(s.metricAttributes("")))
	}
}

// abort ends the span if it has not ended: deferred, it ends the span of a
// call that a panic (of the caller's Client) cut off.
func (s *chatSpan) abort() { abort(s.span) }

// endConverse ends the span of a Converse call.
func (s *chatSpan) endConverse(out *bedrockruntime.ConverseOutput, err error) {
	if err != nil || out == nil {
		s.end(nil, err)
		return
	}
	t := &turnResult{stop: out.StopReason, usage: usageOf(out.Usage)}
	if msg, ok := out.Output.(*types.ConverseOutputMemberMessage); ok {
		t.message = msg.Value
	}
	s.end(t, nil)
}

// end ends the span with the call's answer, or its error, and records the
// call's duration and tokens.
func (s *chatSpan) end(t *turnResult, err error) {
	d := seconds(s.start)
	errType := ""
	if err != nil {
		errType = sendErrorType(err)
	}
	if s.span.IsRecording() {
		s.span.SetAttributes(s.server.attributes()...)
		if t != nil {
			s.span.SetAttributes(keyFinishReasons.StringSlice([]string{string(t.stop)}))
			s.span.SetAttributes(usageAttributes(t.usage)...)
			if s.t.content {
				s.span.SetAttributes(keyOutputMessages.String(messagesJSON([]types.Message{t.message}, t.stop)))
			}
		}
		if err != nil {
			fail(s.span, errType, err.Error())
		}
	}
	s.span.End()
	// Measurements are made only for instruments that take them: building
	// their attribute sets is most of what telemetry costs.
	ctx := context.Background()
	if s.t.duration.Enabled(ctx) {
		s.t.duration.Record(ctx, d, metric.WithAttributeSet(s.metricAttributes(errType)))
	}
	if t != nil && s.t.tokens.Enabled(ctx) {
		s.t.tokens.Record(ctx, int64(inputTokens(t.usage)), metric.WithAttributeSet(s.metricAttributes("", keyTokenType.String("input"))))
		s.t.tokens.Record(ctx, int64(t.usage.OutputTokens), metric.WithAttributeSet(s.metricAttributes("", keyTokenType.String("output"))))
	}
}

// metricAttributes are the attributes of the call's measurements.
func (s *chatSpan) metricAttributes(errType string, extra ...attribute.KeyValue) attribute.Set {
	kv := append(s.server.attributes(), keyOperationName.String(opChat), keyProviderName.String(providerName), keyRequestModel.String(s.model))
	if errType != "" {
		kv = append(kv, keyErrorType.String(errType))
	}
	return attribute.NewSet(append(kv, extra...)...)
}
