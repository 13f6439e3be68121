package converse

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/wire"
)

// ContextPolicy keeps a conversation's requests inside the model's context
// window. Before each model call, a history estimated over MaxInputTokens
// is trimmed; when Bedrock answers that the input is too long (a
// ValidationException "Input is too long for requested model.", or the
// stop reason model_context_window_exceeded), the history is trimmed and
// the call made once more. A trim goes down to three quarters of the limit,
// so that the next turns fit without one: MaxInputTokens, or after an
// overflow, when smaller, the last request Bedrock accepted (the window
// holds at least that, where the request that overflowed may have grown
// past it by any amount). It goes in this order, until the estimate fits:
//
//  1. the oldest tool results longer than ToolResultBytes are shortened to
//     their head and tail, with a note of what was cut;
//  2. the oldest exchanges are dropped, cutting only before a user message
//     that holds no tool results (a prompt) or taking out a whole
//     assistant toolUse message with the user message of its results,
//     never one without the other, and never the first prompt of a Send's
//     tool loop or the newest exchange;
//  3. with Summarize, the dropped messages are summarised by a model call
//     (with the tool configuration, when they hold tool blocks), and the
//     summary joins the first kept user message as a text block.
//
// The first message stays a user message with content, and the trimmed
// history is the one the Conversation keeps (and saves in its Store). A
// Trimmed event reports each trim. Tokens are estimated from the last
// turn's usage and the JSON of what came after it (a token per four bytes),
// or with CountTokens, by Bedrock's CountTokens API.
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
	// CountTokens counts the tokens of each request with Bedrock's
	// CountTokens API before the call, when the Client has a CountTokens
	// method (a *bedrockruntime.Client has) and the model supports it; an
	// error of CountTokens falls back to the estimate.
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
// Result's). The tokens are the estimates of the request before and after.
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

// tokenCounter is the CountTokens method of *bedrockruntime.Client.
type tokenCounter interface {
	CountTokens(ctx context.Context, params *bedrockruntime.CountTokensInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.CountTokensOutput, error)
}

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

// estimate counts the input tokens of a request of history.
func (c *Conversation) estimate(ctx context.Context, w *window, history []types.Message, cfg *types.ToolConfiguration) int {
	if tc, ok := c.client.(tokenCounter); ok && c.opts.Context.CountTokens {
		out, err := tc.CountTokens(ctx, &bedrockruntime.CountTokensInput{
			ModelId: aws.String(c.modelID),
			Input: &types.CountTokensInputMemberConverse{Value: types.ConverseTokensRequest{
				Messages: history, System: c.opts.System, ToolConfig: cfg,
			}},
		})
		if err == nil && out.InputTokens != nil {
			return int(*out.InputTokens)
		}
		c.logger().Info("converse: CountTokens failed; estimating", "error", err)
	}
	if w.tokens > 0 && w.sent <= len(history) {
		return w.tokens + wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: history[w.sent:]})
	}
	return wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: history, System: c.opts.System, ToolConfig: cfg})
}

// overflowMessages are what Bedrock's ValidationException says of an input
// too large for the model: its own message, and those it passes on from
// Anthropic's models ("prompt is too long: 210000 tokens > 200000
// maximum", "input length and `max_tokens` exceed context limit").
var overflowMessages = []string{"input is too long for requested model", "prompt is too long", "exceed context limit"}

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

// fittedTurn makes turn n's model call on history, trimmed first to the
// policy's window, and once more on a trimmed history if Bedrock reports an
// overflow (unless nothing is left to trim: then Bedrock's answer stands).
// It returns the history the call was made with, which the Conversation
// keeps.
func (c *Conversation) fittedTurn(ctx context.Context, n int, w *window, history []types.Message, cfg *types.ToolConfiguration) ([]types.Message, *turnResult, error) {
	p := c.opts.Context
	if p == nil {
		t, err := c.turn(ctx, n, c.exec, history, cfg)
		return history, t, err
	}
	if p.MaxInputTokens > 0 {
		var err error
		if history, _, err = c.fit(ctx, n, w, history, cfg, p.MaxInputTokens, false); err != nil {
			return history, nil, err
		}
	}
	t, err := c.turn(ctx, n, c.exec, history, cfg)
	if overflowed(err, t) {
		limit := c.estimate(ctx, w, history, cfg)
		if ok := c.admitted(ctx, w, history, cfg); ok > 0 {
			limit = min(limit, ok)
		}
		if p.MaxInputTokens > 0 {
			limit = min(limit, p.MaxInputTokens)
		}
		trimmed, cut, ferr := c.fit(ctx, n, w, history, cfg, limit, true)
		if ferr != nil {
			if t != nil {
				t.discard()
			}
			return trimmed, nil, ferr
		}
		if cut {
			var wasted Usage
			if t != nil {
				t.discard()
				wasted = t.usage
			}
			history = trimmed
			if t, err = c.turn(ctx, n, c.exec, history, cfg); err == nil {
				t.usage = t.usage.Add(wasted)
			}
		}
	}
	if err == nil {
		w.record(history, t.usage)
	}
	return history, t, err
}

// admitted estimates the last request of history that Bedrock accepted:
// the one its last assistant message answers, by its usage when it was
// this Send's last request. The window holds at least that much, so a
// history trimmed below it fits after an overflow, where one trimmed below
// the request that overflowed may not. It is 0 without an answer.
func (c *Conversation) admitted(ctx context.Context, w *window, history []types.Message, cfg *types.ToolConfiguration) int {
	for i := len(history) - 1; i > 0; i-- {
		if history[i].Role != types.ConversationRoleAssistant {
			continue
		}
		if w.tokens > 0 && w.sent == i {
			return w.tokens
		}
		return c.estimate(ctx, w, history[:i], cfg)
	}
	return 0
}

// fit trims history, if it holds more than limit tokens (or after an
// overflow), to three quarters of limit: the room it leaves spares the
// next turns a trim each, which would change the prefix that prompt
// caching reads. It keeps the trimmed history as the Conversation's,
// reports it with a Trimmed event and says whether anything was cut.
func (c *Conversation) fit(ctx context.Context, n int, w *window, history []types.Message, cfg *types.ToolConfiguration, limit int, overflow bool) ([]types.Message, bool, error) {
	before := c.estimate(ctx, w, history, cfg)
	if before <= limit && !overflow {
		return history, false, nil
	}
	budget := limit * 3 / 4
	tr := newTrimmer(history, c.opts.Context.toolResultBytes(), before)
	tr.shorten(budget)
	tr.drop(budget)
	ev := Trimmed{Turn: n, Overflow: overflow, ShortenedResults: tr.shortened, DroppedMessages: tr.dropped, TokensBefore: before}
	if ev.ShortenedResults == 0 && ev.DroppedMessages == 0 {
		return history, false, nil
	}
	if c.opts.Context.Summarize && tr.dropped > 0 {
		summary, u, err := c.summarize(ctx, tr.droppedPrefix(), cfg)
		c.addUsage(u)
		ev.Usage = u
		if err != nil {
			c.logger().Info("converse: the summary of the trimmed messages failed; dropping them", "error", err)
		} else if summary != "" {
			tr.addSummary(summary)
			ev.Summarized = true
		}
	}
	history = tr.history()
	*w = window{} // the trimmed history has no usage yet
	ev.TokensAfter = c.estimate(ctx, w, history, cfg)
	c.keep(history, nil)
	if err := c.save(ctx, n); err != nil {
		return history, true, err
	}
	c.emit(ev)
	return history, true, nil
}

// summaryPrompt asks for the summary of the dropped messages.
const summaryPrompt = "Summarize the conversation so far in a few sentences: what was asked, which tools were called with which results, and what is still open. Reply with the summary only."

// summarize asks the model for a summary of msgs, a conversation's first
// messages, sending the tool configuration (without a forced choice) when
// they hold tool blocks, as Bedrock requires.
func (c *Conversation) summarize(ctx context.Context, msgs []types.Message, cfg *types.ToolConfiguration) (string, Usage, error) {
	msgs = append([]types.Message(nil), msgs...)
	ask := &types.ContentBlockMemberText{Value: summaryPrompt}
	last := msgs[len(msgs)-1]
	switch {
	case last.Role == types.ConversationRoleAssistant:
		msgs = append(msgs, types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{ask}})
	case answersTools(last) && c.model.RejectsTextWithToolResults():
		msgs = append(msgs,
			types.Message{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Noted."}}},
			types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{ask}})
	default:
		msgs[len(msgs)-1] = types.Message{Role: last.Role, Content: append(append([]types.ContentBlock(nil), last.Content...), ask)}
	}
	in := &bedrockruntime.ConverseInput{
		ModelId:         aws.String(c.modelID),
		Messages:        msgs,
		System:          c.opts.System,
		InferenceConfig: c.opts.InferenceConfig,
	}
	if hasToolBlocks(msgs) && cfg != nil {
		in.ToolConfig = &types.ToolConfiguration{Tools: cfg.Tools}
	}
	out, err := c.client.Converse(ctx, in)
	if err != nil {
		return "", Usage{}, fmt.Errorf("summary call: %w", err)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return "", usageOf(out.Usage), errors.New("summary call: the response holds no message")
	}
	return strings.TrimSpace(textOf(msg.Value)), usageOf(out.Usage), nil
}
