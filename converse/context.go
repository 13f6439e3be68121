package converse

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/trim"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// ContextPolicy keeps a conversation's requests inside the model's context
// window. Before each model call, a history estimated over MaxInputTokens is
// trimmed. Bedrock may answer that the input is too long (a
// ValidationException "Input is too long for requested model.", or the stop
// reason model_context_window_exceeded). Then the history is trimmed and the
// call made once more. A trim goes down to three quarters of the limit, so
// that the next turns fit without one. The limit is MaxInputTokens. After an
// overflow it is the last request Bedrock accepted, when smaller. The window
// holds at least that, where the request that overflowed may have grown past
// it by any amount. It goes in this order, until the estimate fits:
//
//  1. the oldest tool results longer than ToolResultBytes are shortened to
//     their head and tail, with a note of what was cut;
//  2. the oldest exchanges are dropped, cutting only before a user message
//     that holds no tool results (a prompt) or taking out a whole
//     assistant toolUse message with the user message of its results,
//     never one without the other, and never the Send's prompt (a
//     structured Send's correction is no prompt to cut at), the newest
//     exchange, or the assistant message that opened the current tool
//     loop when it holds a reasoning block (with extended thinking, Claude
//     wants it first in a request that continues the loop);
//  3. with Summarize, the dropped messages are summarised by a model call
//     (with the tool configuration, when they hold tool blocks), and the
//     summary joins the first kept user message as a text block.
//
// The first message stays a user message with content, and the trimmed history
// is the one the Conversation keeps (and saves in its Store). A Trimmed event
// reports each trim. Tokens are estimated from the last turn's usage and the
// JSON of what came after it: a token per four bytes, an image by its size, a
// PDF by its pages. With CountTokens the request to size is counted by
// Bedrock's CountTokens API.
type ContextPolicy struct {
	// MaxInputTokens is the most input tokens a request may hold: the
	// model's context window less the room its answer needs. 0 trims only
	// when Bedrock reports an overflow.
	MaxInputTokens int
	// ToolResultBytes is the length past which the text of a tool result
	// may be shortened, to that many bytes: its head and tail around a note
	// of the bytes cut; 0 means 4096. Images and documents in it stay.
	ToolResultBytes int
	// Summarize summarises the dropped messages with a model call.
	Summarize bool
	// CountTokens counts the tokens of a turn's request with Bedrock's
	// CountTokens API, where it is sized: before the call, against
	// MaxInputTokens, and before a request Bedrock found too long is
	// trimmed. The count is a request of the step (Step.CountTokens) that
	// its driver makes, once for each history. Send makes it when the Client
	// has a CountTokens method (a *bedrockruntime.Client has) and the model
	// supports it. A failed count, or none, falls back to the estimate. The
	// other sizes are estimated: the trimmed request's (Trimmed.TokensAfter)
	// and that of the last request Bedrock accepted.
	CountTokens bool
}

func (p *ContextPolicy) toolResultBytes() int {
	if p.ToolResultBytes <= 0 {
		return 4096
	}
	return p.ToolResultBytes
}

// Trimmed reports a history trimmed to fit the model's context window,
// before the model call of Turn; Overflow says it was after Bedrock reported
// the input too long. ShortenedResults tool results were shortened and
// DroppedMessages messages dropped (Summarized: into a summary, whose
// model call used Usage, counted in the Conversation's usage but not in a
// Result's). TokensBefore is the request's count (ContextPolicy.CountTokens)
// or estimate, TokensAfter the trimmed request's estimate.
type Trimmed struct {
	Turn             int
	Overflow         bool
	ShortenedResults int
	DroppedMessages  int
	Summarized       bool
	Usage            Usage
	TokensBefore     int
	TokensAfter      int
}

func (Trimmed) event() {}

// window follows a Send's requests for its ContextPolicy: the size of the
// last one, by its usage.
type window struct {
	sent   int // the messages of the last request
	tokens int // its input tokens, by its usage; 0 if unknown
}

// record notes the usage of the request of history.
func (w *window) record(history []types.Message, u Usage) {
	w.sent, w.tokens = len(history), u.InputTokens+u.CacheReadInputTokens+u.CacheWriteInputTokens
}

// inputCounter estimates the input tokens of a conversation's requests for
// its ContextPolicy, and builds the requests that count them.
type inputCounter struct {
	modelID string
	system  []types.SystemContentBlock // Options.Request's
}

// newInputCounter is the inputCounter of a conversation with the model
// modelID and the options o.
func newInputCounter(modelID string, o *Options) *inputCounter {
	return &inputCounter{modelID: modelID, system: o.Request.System}
}

// request is the CountTokens request of a request of history.
func (n *inputCounter) request(history []types.Message, cfg *types.ToolConfiguration) *bedrockruntime.CountTokensInput {
	return &bedrockruntime.CountTokensInput{
		ModelId: aws.String(n.modelID),
		Input: &types.CountTokensInputMemberConverse{Value: types.ConverseTokensRequest{
			Messages: history, System: n.system, ToolConfig: cfg,
		}},
	}
}

// estimate estimates the input tokens of a request of history.
func (n *inputCounter) estimate(w *window, history []types.Message, cfg *types.ToolConfiguration) int {
	if w.tokens > 0 && w.sent <= len(history) {
		return w.tokens + wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: history[w.sent:]})
	}
	return wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: history, System: n.system, ToolConfig: cfg})
}

// overflowMessages are what Bedrock's ValidationException says of an input
// too large for the model, matched in lower case:
//   - its own message, "Input is too long for requested model." (also for
//     Llama 4 far over its window: NousResearch/hermes-agent pull 98726);
//   - those it passes on from Anthropic's models, "prompt is too long:
//     203470 tokens > 200000 maximum" (strands-agents/harness-sdk issue
//     1712, pull 1663) and "input length and `max_tokens` exceed context
//     limit: 196395 + 64000 > 204698" (RooCodeInc/Roo-Code issue 3713);
//   - the OpenAI-style "This model's maximum context length is 202752
//     tokens. However, you requested ..." of the models Bedrock serves
//     through Mantle (GLM, MiniMax: strands-agents/harness-sdk issue 3969,
//     pull 3973) and of Llama 4 Maverick a little over its window
//     (hermes-agent pull 98726);
//   - "too many total text bytes", in the list of strands-agents'
//     Bedrock provider since its first version and reported from
//     endpoints wrapping Bedrock (harness-sdk issue 1528); no whole
//     message of it was found.
var overflowMessages = []string{
	"input is too long for requested model",
	"prompt is too long",
	"exceed context limit",
	"maximum context length is",
	"too many total text bytes",
}

// overflowed reports Bedrock's answers to an input too large for the model.
func overflowed(err error, t *turnResult) bool {
	if err == nil {
		return t.stop == types.StopReasonModelContextWindowExceeded
	}
	var ve *types.ValidationException
	if !errors.As(err, &ve) {
		return false
	}
	msg := strings.ToLower(ve.ErrorMessage())
	return slices.ContainsFunc(overflowMessages, func(m string) bool { return strings.Contains(msg, m) })
}

// overflowLimit is what a history must be trimmed below after Bedrock reported
// it too long. It is the least of its size (see tokens), the last request
// Bedrock accepted and the policy's MaxInputTokens. The window holds at least
// the last request accepted, where the request that overflowed may have grown
// past it by any amount.
func (c *Conversation) overflowLimit(history []types.Message) int {
	r := c.run
	limit := c.tokens(history)
	if ok := c.input.admitted(&r.win, history, r.cfg); ok > 0 {
		limit = min(limit, ok)
	}
	if maxInput := c.opts.Context.MaxInputTokens; maxInput > 0 {
		limit = min(limit, maxInput)
	}
	return limit
}

// admitted estimates the last request of history that Bedrock accepted:
// the one its last assistant message answers, by its usage when it was
// this Send's last request. The window holds at least that much, so a
// history trimmed below it fits after an overflow, where one trimmed below
// the request that overflowed may not. It is 0 without an answer.
func (n *inputCounter) admitted(w *window, history []types.Message, cfg *types.ToolConfiguration) int {
	for i := len(history) - 1; i > 0; i-- {
		if history[i].Role != types.ConversationRoleAssistant {
			continue
		}
		if w.tokens > 0 && w.sent == i {
			return w.tokens
		}
		return n.estimate(w, history[:i], cfg)
	}
	return 0
}

// fit trims history, if it holds more than limit tokens (or after an
// overflow), to three quarters of limit. The room it leaves spares the next
// turns a trim each, which would change the prefix that prompt caching reads.
// It reports whether anything was cut, and returns the step that follows a
// cut: the summary call, when the policy summarises what was dropped, or else
// the turn's call on the trimmed history, which is kept. Trimming never calls
// the model itself.
func (c *Conversation) fit(ctx context.Context, history []types.Message, limit int, overflow bool) (*Step, bool, error) {
	r := c.run
	before := c.tokens(history)
	if before <= limit && !overflow {
		return nil, false, nil
	}
	budget := limit * 3 / 4
	tr := trim.New(history, c.opts.Context.toolResultBytes(), before)
	tr.Shorten(budget)
	tr.Drop(budget, sendPrompt(history))
	pt := &pendingTrim{tr: tr, ev: Trimmed{Turn: r.turn, Overflow: overflow, ShortenedResults: tr.Shortened(), DroppedMessages: tr.Dropped(), TokensBefore: before}}
	if tr.Shortened() == 0 && tr.Dropped() == 0 {
		return nil, false, nil
	}
	if c.opts.Context.Summarize && tr.Dropped() > 0 {
		r.trim = pt
		step, err := c.budgeted(ctx, c.summaryRequest(tr.DroppedPrefix()))
		return step, true, err
	}
	step, err := c.trimmed(ctx, pt)
	return step, true, err
}

// sendPrompt is the index in history of the prompt of the Send in progress,
// which a trim keeps. It is the last user message holding no tool results that
// is not a structured answer's correction. A correction is a user text message
// too, but answers the model within the Send's loop. It is 0 when there is
// none.
func sendPrompt(history []types.Message) int {
	for i := len(history) - 1; i > 0; i-- {
		m := history[i]
		if message.HoldsPrompt(m) && !isCorrection(m) {
			return i
		}
	}
	return 0
}

// trimmed ends a trim: the trimmed history is kept and reported, and the
// turn's call is made on it.
func (c *Conversation) trimmed(ctx context.Context, pt *pendingTrim) (*Step, error) {
	r := c.run
	history := pt.tr.Messages()
	r.win = window{} // the trimmed history has no usage yet
	pt.ev.TokensAfter = c.input.estimate(&r.win, history, r.cfg)
	c.endStep(history, nil, nil)
	c.events.emit(pt.ev)
	return c.turnStep(ctx)
}

// summaryPrompt asks for the summary of the dropped messages.
const summaryPrompt = "Summarize the conversation so far in a few sentences: what was asked, which tools were called with which results, and what is still open. Reply with the summary only."

// summaryRequest asks the model for a summary of msgs, a conversation's first
// messages. It is built as every turn's request is (guardrail, metadata,
// inference settings, cache points). It has the tools (without a forced
// choice) when msgs hold tool blocks, as Bedrock requires. It has no output
// format: the summary is text.
func (c *Conversation) summaryRequest(msgs []types.Message) *ModelCall {
	msgs = withPrompt(msgs, []types.ContentBlock{&types.ContentBlockMemberText{Value: summaryPrompt}}, c.model)
	var cfg *types.ToolConfiguration
	if r := c.run; message.HasToolBlocks(msgs) && r.cfg != nil {
		cfg = &types.ToolConfiguration{Tools: r.cfg.Tools}
	}
	in := c.request(msgs, cfg, nil, nil, c.model)
	in.OutputConfig = nil
	return &ModelCall{Turn: c.run.turn, Summary: true, Input: in}
}

// summarized finishes the trim waiting for a summary with the summary
// call's answer: the summary joins the first kept user message, or, if
// the call failed, the dropped messages are dropped without one.
func (c *Conversation) summarized(ctx context.Context, model string, t *turnResult, err error) (*Step, error) {
	r := c.run
	pt := r.trim
	if pt == nil {
		return nil, errors.New("converse: HandleResponse: the request is no summary this conversation asked for")
	}
	r.trim = nil
	if t != nil {
		c.accounts.count(&r.spent, model, t.usage)
		pt.ev.Usage = t.usage
	}
	if err != nil { // the driver that made the call has its error: the messages go without a summary
		return c.trimmed(ctx, pt)
	}
	if summary := strings.TrimSpace(message.Text(t.message)); summary != "" {
		pt.tr.AddSummary(summary)
		pt.ev.Summarized = true
	}
	return c.trimmed(ctx, pt)
}
