package converse

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// request is the one place a model call's request is built, for Converse
// and (through streamRequest) ConverseStream alike, turns and summaries
// alike, so that an option set once reaches every call. sh, if not nil,
// shapes a structured Send's turns.
func (c *Conversation) request(history []types.Message, cfg *types.ToolConfiguration, sh *shape) *bedrockruntime.ConverseInput {
	o := &c.opts
	in := &bedrockruntime.ConverseInput{
		ModelId:                           aws.String(c.modelID),
		Messages:                          history,
		System:                            o.System,
		InferenceConfig:                   o.InferenceConfig,
		AdditionalModelRequestFields:      o.AdditionalModelRequestFields,
		AdditionalModelResponseFieldPaths: o.AdditionalModelResponseFieldPaths,
		GuardrailConfig:                   o.GuardrailConfig,
		OutputConfig:                      o.OutputConfig,
		PerformanceConfig:                 o.PerformanceConfig,
		PromptVariables:                   o.PromptVariables,
		RequestMetadata:                   o.RequestMetadata,
		ServiceTier:                       o.ServiceTier,
		ToolConfig:                        cfg,
	}
	sh.apply(in)
	if o.PromptCache {
		placeCachePoints(c.model, o.CacheTTL, in)
	}
	return in
}

// streamRequest is in as a ConverseStream request: every field copied, the
// guardrail configuration in its stream form with mode as its processing
// mode (empty: Bedrock's default, synchronous).
func streamRequest(in *bedrockruntime.ConverseInput, mode types.GuardrailStreamProcessingMode) *bedrockruntime.ConverseStreamInput {
	out := &bedrockruntime.ConverseStreamInput{
		ModelId:                           in.ModelId,
		Messages:                          in.Messages,
		System:                            in.System,
		InferenceConfig:                   in.InferenceConfig,
		AdditionalModelRequestFields:      in.AdditionalModelRequestFields,
		AdditionalModelResponseFieldPaths: in.AdditionalModelResponseFieldPaths,
		OutputConfig:                      in.OutputConfig,
		PerformanceConfig:                 in.PerformanceConfig,
		PromptVariables:                   in.PromptVariables,
		RequestMetadata:                   in.RequestMetadata,
		ServiceTier:                       in.ServiceTier,
		ToolConfig:                        in.ToolConfig,
	}
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

// turnResult is one model call's answer.
type turnResult struct {
	message types.Message
	stop    types.StopReason
	usage   Usage
	resp    Response
	calls   []toolCall          // the tool calls, when decoded while streaming
	started map[string]*pending // calls started early while streaming
	cancel  context.CancelFunc  // stops the early calls
}

// discard abandons the calls started early in the turn, if any: the turn
// did not end in tool_use, or its tool round is over.
func (t *turnResult) discard() {
	if t != nil && t.cancel != nil {
		t.cancel()
	}
}

// earlyCalls are the calls the turn started while it streamed.
func (t *turnResult) earlyCalls() map[string]*pending {
	if t == nil {
		return nil
	}
	return t.started
}

// callModel makes the model call of req, with ConverseStream when req
// streams; a streaming conversation whose model cannot stream tool use
// falls back to Converse, with a Fallback event.
func (c *Conversation) callModel(ctx context.Context, req *Request) (*turnResult, error) {
	if req.stream {
		return c.streamTurn(ctx, req)
	}
	if c.opts.Stream && !req.Summary {
		reason := fmt.Sprintf("model %s does not support tool use in streaming mode; using Converse", c.modelID)
		c.logger().Info("converse: "+reason, "turn", req.Turn)
		c.emit(Fallback{Turn: req.Turn, Reason: reason})
	}
	chatCtx, chat := c.tel.startChat(ctx, false, req.Input)
	out, err := c.client.Converse(chatCtx, req.Input, chat.options()...)
	chat.endConverse(out, err)
	if err != nil {
		return nil, err
	}
	t, err := replyOf(out)
	if err == nil && !req.Summary {
		c.emitText(req.Turn, t.message)
	}
	return t, err
}

// emitText reports the text of a reply that did not stream.
func (c *Conversation) emitText(turn int, msg types.Message) {
	if c.opts.OnEvent == nil {
		return
	}
	for _, b := range msg.Content {
		if t, ok := blockText(b); ok {
			c.emit(Text{Turn: turn, Text: t})
		}
	}
}

// streamTurn makes one model call with ConverseStream: text deltas go to
// OnEvent as they arrive, and the events are assembled into the message
// Converse would have returned.
func (c *Conversation) streamTurn(ctx context.Context, req *Request) (res *turnResult, err error) {
	n := req.Turn
	chatCtx, chat := c.tel.startChat(ctx, true, req.Input) // early calls are its siblings, under ctx
	defer func() { chat.end(res, err) }()
	streamCtx, closeStream := context.WithCancel(chatCtx)
	defer closeStream()
	out, err := c.client.ConverseStream(streamCtx, req.StreamInput(), append(chat.options(), ownProtocol)...)
	if err != nil {
		return nil, err
	}
	stream := out.GetStream()
	defer stream.Close()

	t := &turnResult{}
	var asm assembler
	var early *earlyStarter
	if c.opts.EarlyToolStart && c.opts.NeedsApproval == nil {
		early = newEarlyStarter(ctx, n, c.exec)
		t.started, t.cancel = early.started, early.cancel
	}
	stopped := false
	for {
		var ev types.ConverseStreamOutput
		var ok bool
		select {
		case ev, ok = <-stream.Events():
		case <-ctx.Done():
			t.discard()
			return nil, ctx.Err()
		}
		if !ok {
			break
		}
		chat.chunked()
		switch e := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			asm.start(e.Value.ContentBlockIndex, e.Value.Start)
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			if text := asm.delta(e.Value.ContentBlockIndex, e.Value.Delta); text != "" && c.opts.OnEvent != nil {
				c.emit(Text{Turn: n, Text: text})
			}
		case *types.ConverseStreamOutputMemberContentBlockStop:
			if call, ok := asm.stop(e.Value.ContentBlockIndex); ok && early != nil {
				early.maybeStart(call)
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			t.stop, stopped = e.Value.StopReason, true
			t.resp.AdditionalModelResponseFields = e.Value.AdditionalModelResponseFields
		case *types.ConverseStreamOutputMemberMetadata:
			t.usage = usageOf(e.Value.Usage)
			t.resp.addMetadata(e.Value)
		}
	}
	if err := stream.Err(); err != nil {
		t.discard()
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		t.discard()
		return nil, err
	}
	if !stopped {
		t.discard()
		return nil, ErrStreamTruncated
	}
	t.message, t.calls = asm.message()
	return t, nil
}
