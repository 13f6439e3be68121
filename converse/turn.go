package converse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/cachepoint"
	"github.com/tooluse/bedrock/converse/internal/media"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
)

// request is the one place a model call's request is built, for Converse
// and (through streamRequest) ConverseStream alike, turns and summaries
// alike, so that an option set once reaches every call. sh, if not nil,
// shapes a structured Send's turns; t, if not nil, is the turn as
// Options.PrepareTurn or a fallback changed it, whose model is m, for
// which the history is re-encoded.
func (c *Conversation) request(history []types.Message, cfg *types.ToolConfiguration, sh *shape, t *TurnPlan, m models.Model) *bedrockruntime.ConverseInput {
	in := c.opts.Request // a copy: the loop fills in its own fields
	modelID := c.modelID
	if t != nil {
		modelID, in.System, in.InferenceConfig = t.ModelID, t.System, t.InferenceConfig
		if modelID != c.modelID {
			history = reencode(history, c.model, m, modelID)
		}
	}
	in.ModelId, in.Messages, in.ToolConfig = aws.String(modelID), media.Request(m, history), cfg
	sh.apply(&in, m, c.opts.thinks(m))
	if p := c.opts.Cache; p != nil {
		cachepoint.Place(m, p.TTL, &in)
	}
	return &in
}

// checkTemplate rejects an Options.Request, r, that sets a field the loop
// owns.
func checkTemplate(r *bedrockruntime.ConverseInput) error {
	for _, f := range []struct {
		name string
		set  bool
	}{{"ModelId", r.ModelId != nil}, {"Messages", r.Messages != nil}, {"ToolConfig", r.ToolConfig != nil}} {
		if f.set {
			name := f.name
			return fmt.Errorf("converse: Options.Request.%s is the loop's to fill in: leave it unset (the model is New's, the messages the history's, the tool configuration the registry's)", name)
		}
	}
	return nil
}

// streamRequest is in as a ConverseStream request: every field copied, the
// guardrail configuration in its stream form with mode as its processing
// mode (empty: Bedrock's default, synchronous).
func streamRequest(in *bedrockruntime.ConverseInput, mode types.GuardrailStreamProcessingMode) *bedrockruntime.ConverseStreamInput {
	out := &bedrockruntime.ConverseStreamInput{}
	copyShared(in, out, true)
	if g := in.GuardrailConfig; g != nil {
		out.GuardrailConfig = &types.GuardrailStreamConfiguration{
			GuardrailIdentifier:  g.GuardrailIdentifier,
			GuardrailVersion:     g.GuardrailVersion,
			Trace:                g.Trace,
			StreamProcessingMode: mode,
		}
	}
	return out
}

// converseRequest is in as a Converse request, streamRequest's inverse:
// every field copied, the guardrail without its stream processing mode.
func converseRequest(in *bedrockruntime.ConverseStreamInput) *bedrockruntime.ConverseInput {
	out := &bedrockruntime.ConverseInput{}
	copyShared(out, in, false)
	if g := in.GuardrailConfig; g != nil {
		out.GuardrailConfig = &types.GuardrailConfiguration{
			GuardrailIdentifier: g.GuardrailIdentifier,
			GuardrailVersion:    g.GuardrailVersion,
			Trace:               g.Trace,
		}
	}
	return out
}

// copyShared copies the fields conv and stream share (see streamFields),
// into stream if toStream, into conv otherwise.
func copyShared(conv *bedrockruntime.ConverseInput, stream *bedrockruntime.ConverseStreamInput, toStream bool) {
	c, s := reflect.ValueOf(conv).Elem(), reflect.ValueOf(stream).Elem()
	for _, f := range streamFields() {
		if toStream {
			s.Field(f.stream).Set(c.Field(f.converse))
		} else {
			c.Field(f.converse).Set(s.Field(f.stream))
		}
	}
}

// streamFields pairs each exported field of ConverseStreamInput with the
// ConverseInput field of the same name and type. A field the SDK adds to both
// then reaches ConverseStream with no code of ours. The guardrail, of another
// type, is converted by streamRequest.
var streamFields = sync.OnceValue(func() []struct{ converse, stream int } {
	var pairs []struct{ converse, stream int }
	ct, st := reflect.TypeFor[bedrockruntime.ConverseInput](), reflect.TypeFor[bedrockruntime.ConverseStreamInput]()
	for i := range st.NumField() {
		sf := st.Field(i)
		if cf, ok := ct.FieldByName(sf.Name); ok && sf.IsExported() && cf.Type == sf.Type {
			pairs = append(pairs, struct{ converse, stream int }{cf.Index[0], i})
		}
	}
	return pairs
})

// turnResult is one model call's answer.
type turnResult struct {
	message types.Message
	stop    types.StopReason
	usage   Usage
	tokens  *types.TokenUsage // usage as Bedrock sent it, from a stream
	resp    Response
	took    time.Duration         // the model call, when the conversation made it
	calls   []toolCall            // the tool calls, when decoded while streaming
	started map[string]*earlyCall // calls started early while streaming
	cancel  context.CancelFunc    // stops the early calls
}

// discard abandons the calls started early in the turn, if any: the turn
// did not end in tool_use, or its tool round is over.
func (t *turnResult) discard() {
	if t != nil && t.cancel != nil {
		t.cancel()
	}
}

// earlyCalls are the calls the turn started while it streamed.
func (t *turnResult) earlyCalls() map[string]*earlyCall {
	if t == nil {
		return nil
	}
	return t.started
}

// caller makes a conversation's model calls, as Send makes them. It calls
// through its client, in chat spans, the text of a reply reported as it
// arrives. It applies Options.ModelCalls' deadlines, retries and hedging, and
// Options.Stream's EarlyToolStart, calls started while a turn streams.
type caller struct {
	client Client
	tel    *telemetry
	stream *StreamPolicy
	policy *CallPolicy
	early  *Executor   // starts calls while a turn streams; nil unless EarlyToolStart (and no ApprovalPolicy)
	text   bool        // Text events are wanted: OnEvent is set
	emit   func(Event) // the conversation's
	log    *slog.Logger
}

// newCaller is the caller of a conversation with client, tel, o and exec,
// whose events go to emit.
func newCaller(client Client, tel *telemetry, o *Options, exec *Executor, emit func(Event)) *caller {
	m := &caller{client: client, tel: tel, stream: o.Stream, policy: o.ModelCalls, text: o.OnEvent != nil, emit: emit, log: o.logger()}
	if s := o.Stream; s != nil && s.EarlyToolStart && o.ApprovalPolicy == nil {
		m.early = exec
	}
	return m
}

// call makes the model call of req, with ConverseStream when req
// streams; a streaming conversation whose model cannot stream tool use
// falls back to Converse, with a StreamFallback event. A call that stalled
// or whose stream was cut is made again, after a ModelRetry event, as
// CallPolicy.Retries says. The turn is timed.
func (m *caller) call(ctx context.Context, req *ModelCall) (t *turnResult, err error) {
	began := time.Now()
	defer func() {
		if t != nil {
			t.took = time.Since(began)
		}
	}()
	if !req.stream && m.stream != nil && !req.Summary {
		reason := fmt.Sprintf("model %s does not support tool use in streaming mode; using Converse", aws.ToString(req.Input.ModelId))
		m.log.Info("converse: "+reason, "turn", req.Turn)
		m.emit(StreamFallback{Turn: req.Turn, Reason: reason})
	}
	for n := 0; ; n++ {
		a := m.hedged(ctx, req)
		if a.err == nil {
			if m.text && !req.stream && !req.Summary {
				textEvents(req.Turn, a.t.message, m.emit)
			}
			return a.t, nil
		}
		wait, ok := m.policy.retryWait(ctx, req, n, a)
		if !ok {
			if a.started {
				return nil, startedError{a.err}
			}
			return nil, a.err
		}
		m.log.Info("converse: retrying a model call", "turn", req.Turn, "retry", n+1, "error", a.err)
		m.emit(ModelRetry{Turn: req.Turn, Model: aws.ToString(req.Input.ModelId), Retry: n + 1, Err: a.err, Wait: wait, Superseded: a.shown})
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// startedError is the error of a turn's call that failed once a tool of
// the turn had started: it is neither retried nor sent to a fallback model.
type startedError struct{ error }

func (e startedError) Unwrap() error { return e.error }

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// request makes one request of req's call; first is called at its first
// content, and reports false when the other request of a hedged call was
// first, which ends this one with errHedgeLost.
func (m *caller) request(ctx context.Context, req *ModelCall, first func() bool) attempt {
	if req.stream {
		return m.streamTurn(ctx, req, first)
	}
	out, err := m.converse(ctx, req.Input)
	if err == nil && !first() {
		err = errHedgeLost
	}
	if err != nil {
		return attempt{err: err}
	}
	t, err := replyOf(out)
	return attempt{t: t, err: err}
}

// converse makes the Converse call of in.
func (m *caller) converse(ctx context.Context, in *bedrockruntime.ConverseInput) (*bedrockruntime.ConverseOutput, error) {
	if m.client == nil {
		return nil, errNoClient
	}
	return m.tel.converse(ctx, m.client, in, m.policy.firstToken())
}

// errNoClient is the error of a model call of a conversation made without
// a client.
var errNoClient = errors.New("converse: the conversation has no client to call the model with")

// Converse makes a model call with Converse as Send makes it: through
// the conversation's client, in a chat span with its metrics (see the
// package doc). An engine driving the steps (see Step) makes a Request's
// Input with it in the process that holds the client and the telemetry,
// such as a Temporal activity; its output goes to HandleResponse.
func (c *Conversation) Converse(ctx context.Context, in *bedrockruntime.ConverseInput) (*bedrockruntime.ConverseOutput, error) {
	return c.caller.converse(ctx, in)
}

// CallModel makes a model call with Converse as Send makes it, without a
// Conversation. It calls through client, in a chat span with its metrics, by
// the Options.Telemetry optFns set. It keeps within the FirstToken deadline of
// the Options.ModelCalls they set (which fails it with ErrStalled). An engine
// driving the steps makes a ModelCall's call with it where the client is, such
// as a Temporal activity. The error is the client's.
func CallModel(ctx context.Context, client Client, in *bedrockruntime.ConverseInput, optFns ...func(*Options)) (*bedrockruntime.ConverseOutput, error) {
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	return newTelemetry(aws.ToString(in.ModelId), &o).converse(ctx, client, in, o.ModelCalls.firstToken())
}

// converse makes the Converse call of in through client in a chat span,
// cancelled with ErrStalled if it has no answer within deadline (0: none).
func (t *telemetry) converse(ctx context.Context, client Client, in *bedrockruntime.ConverseInput, deadline time.Duration) (*bedrockruntime.ConverseOutput, error) {
	chatCtx, chat := t.startChat(ctx, false, in)
	defer chat.abort()
	callCtx, cancel := context.WithCancelCause(chatCtx)
	defer cancel(nil)
	if timer := stallTimer(deadline, cancel, "no answer"); timer != nil {
		defer timer.Stop()
	}
	out, err := client.Converse(callCtx, in, chat.options()...)
	err = ownEnd(callCtx, err)
	chat.endConverse(out, err)
	return out, err
}

// textEvents reports the text of a reply that did not stream to emit.
func textEvents(turn int, msg types.Message, emit func(Event)) {
	for _, b := range msg.Content {
		if t, ok := message.BlockText(b); ok {
			emit(Text{Turn: turn, Text: t})
		}
	}
}

// streamTurn makes one request of a model call with ConverseStream: text
// deltas go to OnEvent as they arrive, and the events are assembled into
// the message Converse would have returned. first is called at its first
// content (see request).
func (m *caller) streamTurn(ctx context.Context, req *ModelCall, first func() bool) attempt {
	n := req.Turn
	t := &turnResult{}
	h := streamHooks{first: first}
	var shown strings.Builder
	if m.text {
		h.text = func(text string) {
			shown.WriteString(text)
			m.emit(Text{Turn: n, Text: text})
		}
	}
	if m.early != nil {
		early := newEarlyStarter(ctx, n, m.early) // its calls are the chat span's siblings, under ctx
		t.started, t.cancel = early.started, early.cancel
		h.call = early.maybeStart
	}
	err := m.streamCall(ctx, req.StreamInput(), req.Input, t, h)
	a := attempt{err: err, shown: shown.String(), started: len(t.started) > 0}
	if err == nil {
		a.t = t
	}
	return a
}

// streamCall makes the ConverseStream call of in, whose Converse form ci the
// chat span describes. It reads its events into t with h (h.event is the
// span's), with a decoder of the call's own, under the deadlines of
// Options.ModelCalls. On an error, t's early calls are discarded.
func (m *caller) streamCall(ctx context.Context, in *bedrockruntime.ConverseStreamInput, ci *bedrockruntime.ConverseInput, t *turnResult, h streamHooks) (err error) {
	chatCtx, chat := m.tel.startChat(ctx, true, ci)
	streamCtx, closeStream := context.WithCancelCause(chatCtx)
	defer closeStream(nil)
	dog := m.policy.watch(closeStream)
	defer dog.stop()
	defer func() {
		err = ownEnd(streamCtx, err)
		if err != nil {
			t.discard()
			chat.end(nil, err)
			return
		}
		chat.end(t, nil)
	}()
	out, err := m.client.ConverseStream(streamCtx, in, append(chat.options(), ownProtocol)...)
	if err != nil {
		return err
	}
	stream := out.GetStream()
	defer stream.Close()
	h.event = func(content bool) {
		chat.chunked()
		dog.event(content)
	}
	return readStream(streamCtx, stream, t, h)
}

// streamHooks are what readStream calls as a stream's events arrive, each
// optional. event is called for every event (content false for messageStart).
// first is called at the first content (false ends the stream with
// errHedgeLost). text is called for every text delta, call for every client
// call whose block is complete.
type streamHooks struct {
	event func(content bool)
	first func() bool
	text  func(string)
	call  func(toolCall)
}

// readStream reads stream to its end into t: the message Converse would
// have returned, its stop reason, usage and metadata. A stream that ends
// without messageStop is ErrStreamTruncated.
func readStream(ctx context.Context, stream *bedrockruntime.ConverseStreamEventStream, t *turnResult, h streamHooks) error {
	var asm assembler
	stopped, begun := false, false
	for {
		var ev types.ConverseStreamOutput
		var ok bool
		select {
		case ev, ok = <-stream.Events():
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			break
		}
		_, starting := ev.(*types.ConverseStreamOutputMemberMessageStart)
		if h.event != nil {
			h.event(!starting)
		}
		if !starting && !begun {
			begun = true
			if h.first != nil && !h.first() {
				return errHedgeLost
			}
		}
		switch e := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			asm.start(e.Value.ContentBlockIndex, e.Value.Start)
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			if text := asm.delta(e.Value.ContentBlockIndex, e.Value.Delta); text != "" && h.text != nil {
				h.text(text)
			}
		case *types.ConverseStreamOutputMemberContentBlockStop:
			if call, ok := asm.stop(e.Value.ContentBlockIndex); ok && h.call != nil {
				h.call(call)
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			t.stop, stopped = e.Value.StopReason, true
			t.resp.AdditionalModelResponseFields = e.Value.AdditionalModelResponseFields
		case *types.ConverseStreamOutputMemberMetadata:
			t.usage, t.tokens = usageOf(e.Value.Usage), e.Value.Usage
			t.resp.addMetadata(e.Value)
		}
	}
	if err := stream.Err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !stopped {
		return ErrStreamTruncated
	}
	t.message, t.calls = asm.message()
	return nil
}

// AssembleStream reads the events of a ConverseStream call to their end and
// returns what Converse would have returned. That is the message assembled
// from its blocks (text, tool input, reasoning, citations, a server tool's
// blocks). With it come the stop reason, usage, metrics, trace and the
// additional model response fields. It is for an engine driving the steps (see
// Step) that makes a ModelCall's stream call (ModelCall.StreamInput) with a
// client of its own; its output goes to HandleResponse. A stream that ends
// before messageStop is ErrStreamTruncated, and an exception event the SDK's
// typed error (see Classify). It closes the stream.
//
// A client shared by concurrent streams shares their event decoder (see
// Conversation.ConverseStream, which gives each call its own).
func AssembleStream(ctx context.Context, out *bedrockruntime.ConverseStreamOutput) (*bedrockruntime.ConverseOutput, error) {
	if out == nil {
		return nil, errors.New("converse: AssembleStream: no stream")
	}
	stream := out.GetStream()
	defer stream.Close()
	var t turnResult
	if err := readStream(ctx, stream, &t, streamHooks{}); err != nil {
		return nil, err
	}
	return t.output(), nil
}

// output is t as Converse returns it.
func (t *turnResult) output() *bedrockruntime.ConverseOutput {
	r := t.resp
	return &bedrockruntime.ConverseOutput{
		Output:     &types.ConverseOutputMemberMessage{Value: t.message},
		StopReason: t.stop, Usage: t.tokens, Metrics: r.Metrics, Trace: r.Trace,
		ServiceTier: r.ServiceTier, PerformanceConfig: r.PerformanceConfig,
		AdditionalModelResponseFields: r.AdditionalModelResponseFields,
	}
}

// ConverseStream makes a model call with ConverseStream as Send makes it, and
// returns the Converse output its events assemble into (see AssembleStream).
// It calls through the conversation's client, with a decoder of the call's
// own, in a chat span with its metrics, as Converse is. An engine driving the
// steps makes with it a ModelCall whose Stream reports true, from its
// StreamInput; its output goes to HandleResponse.
func (c *Conversation) ConverseStream(ctx context.Context, in *bedrockruntime.ConverseStreamInput) (*bedrockruntime.ConverseOutput, error) {
	if c.client == nil {
		return nil, errNoClient
	}
	var t turnResult
	if err := c.caller.streamCall(ctx, in, converseRequest(in), &t, streamHooks{}); err != nil {
		return nil, err
	}
	return t.output(), nil
}
