package converse

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/tooluse/bedrock/converse/internal/redact"
	"github.com/tooluse/bedrock/tools"
)

// The error.type of a failed tool call, a small fixed vocabulary. The last
// four name calls the conversation answers without running them. They are a
// repeat of a toolUseId in the turn, a call an approver denied, one cut off by
// a crash (or a failed save) and answered on Resume, and one of a stopped
// task.
const (
	toolErrUnknown     = "unknown_tool"
	toolErrInput       = "invalid_input"
	toolErrTool        = "tool_error"
	toolErrPanic       = "panic"
	toolErrTimeout     = "timeout"
	toolErrCancelled   = "cancelled"
	toolErrOutput      = "output_error"
	toolErrDuplicate   = "duplicate_id"
	toolErrDenied      = "denied"
	toolErrInterrupted = "interrupted"
	toolErrStopped     = "stopped"
)

// toolSpan is the span of one tool call, from its start to its answer.
// The zero value, for a call that has none, does nothing.
type toolSpan struct {
	t     *telemetry
	span  trace.Span
	start time.Time
	name  string
}

// startTool starts the span of call c, named "execute_tool {name}" and of
// kind INTERNAL, as a child of the turn's context: the calls of a turn are
// siblings. The context it returns carries the span, for the tool.
func (e *Executor) startTool(ctx context.Context, c toolCall) (context.Context, toolSpan) {
	t := e.telemetry()
	ctx, span := t.tracer.Start(ctx, opExecuteTool+" "+c.name, t.toolOptions(c.name)...)
	if span.IsRecording() {
		span.SetAttributes(keyToolCallID.String(c.id))
		if tool, ok := e.lookup(c.name); ok && tool.Description() != "" {
			span.SetAttributes(keyToolDescription.String(tool.Description()))
		}
		if t.content {
			span.SetAttributes(keyToolArguments.String(redact.String(string(c.input))))
		}
	}
	return ctx, toolSpan{t: t, span: span, start: time.Now(), name: c.name}
}

// toolOptions are the start options of the spans of the tool name's
// calls, made at its first.
func (t *telemetry) toolOptions(name string) []trace.SpanStartOption {
	t.toolMu.Lock()
	defer t.toolMu.Unlock()
	opts, ok := t.toolStart[name]
	if !ok {
		if t.toolStart == nil {
			t.toolStart = map[string][]trace.SpanStartOption{}
		}
		opts = startOptions(internalSpan, t.toolAttributes(name)...)
		t.toolStart[name] = opts
	}
	return opts
}

// toolAttributes are those of every span and duration of the tool name's
// calls.
func (t *telemetry) toolAttributes(name string) []attribute.KeyValue {
	return append([]attribute.KeyValue{keyOperationName.String(opExecuteTool), keyToolName.String(name),
		keyToolType.String("function")}, t.ids...)
}

// end ends the span with the call's outcome and records its duration. The
// status description is the error type, never the text: an error a tool
// returned is untrusted, and is only read where a panic is recovered.
func (s toolSpan) end(out outcome, limit int) {
	if s.span == nil {
		return
	}
	errType, result := "", ""
	if out.err != nil {
		errType = toolErrorType(out.err)
	}
	if s.t.content && s.span.IsRecording() {
		result = resultText(out, limit)
	}
	s.finish(errType, result)
}

// traceUnrun traces the call c, which the conversation answered with result
// without running it, as failed with errType.
func (e *Executor) traceUnrun(ctx context.Context, c toolCall, errType, result string) {
	_, s := e.startTool(ctx, c)
	s.finish(errType, result)
}

// finish ends the span, failed with errType unless it is empty, with the
// call's result when content is recorded, and records the call's duration.
func (s toolSpan) finish(errType, result string) {
	if s.span.IsRecording() {
		if errType != "" {
			s.span.SetAttributes(keyErrorType.String(errType))
			s.span.SetStatus(codes.Error, errType)
		}
		if s.t.content {
			s.span.SetAttributes(keyToolResult.String(redact.String(result)))
		}
	}
	s.span.End()
	if ctx := context.Background(); s.t.toolDuration.Enabled(ctx) {
		kv := s.t.toolAttributes(s.name)
		if errType != "" {
			kv = append(kv, keyErrorType.String(errType))
		}
		s.t.toolDuration.Record(ctx, seconds(s.start), metric.WithAttributeSet(attribute.NewSet(kv...)))
	}
}

// resultText is what the model is answered for a call, cut to limit bytes.
func resultText(out outcome, limit int) string {
	if out.limit > 0 {
		limit = out.limit
	}
	if out.err == nil {
		text, _ := truncate(out.output, limit)
		return text
	}
	msg := out.text
	if msg == "" {
		msg = errorText(out.err)
	}
	text, _ := truncate(msg, limit)
	return text
}

// toolErrorType names the failure of a call. The error may wrap one a tool
// returned, whose Is or Unwrap methods are untrusted: a panic in them makes
// the call a tool_error.
func toolErrorType(err error) (name string) {
	defer func() {
		if recover() != nil {
			name = toolErrTool
		}
	}()
	for _, e := range []struct {
		err  error
		name string
	}{
		{ErrDuplicateID, toolErrDuplicate},
		{ErrUnknownTool, toolErrUnknown},
		{tools.ErrInvalidInput, toolErrInput},
		{ErrToolPanic, toolErrPanic},
		{ErrToolOutput, toolErrOutput},
		{tools.ErrOutputTooLarge, toolErrOutput},
		{context.DeadlineExceeded, toolErrTimeout},
		{context.Canceled, toolErrCancelled},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return toolErrTool
}

// telemetry is the Executor's telemetry: its Conversation's, or for an
// Executor used alone, one made from the global providers.
func (e *Executor) telemetry() *telemetry {
	e.telOnce.Do(func() {
		if e.tel == nil {
			e.tel = newTelemetry("", &Options{})
		}
	})
	return e.tel
}
