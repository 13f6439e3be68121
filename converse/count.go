package converse

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// tokenCount is the count of a turn's request that a step asked its
// driver for (see ContextPolicy.CountTokens), and, once answered, the
// tokens it counted.
type tokenCount struct {
	history []types.Message // the request's messages
	req     *bedrockruntime.CountTokensInput
	then    func(context.Context) (*Step, error) // the step that goes on; nil once answered
	tokens  int                                  // 0 when the count failed
}

// of reports whether n counts a request of history: the same messages, not
// only equal ones, since the history changes only by a step's new slice or
// by growing.
func (n *tokenCount) of(history []types.Message) bool {
	return n != nil && len(n.history) == len(history) && len(history) > 0 && &n.history[0] == &history[0]
}

// tokens is the size of the turn's request on history: its count, when the
// driver obtained one, or else its estimate.
func (c *Conversation) tokens(history []types.Message) int {
	r := c.run
	if n := r.counted; n.of(history) && n.tokens > 0 {
		return n.tokens
	}
	return c.input.estimate(&r.win, history, r.cfg)
}

// countFirst is the step that asks the driver to count the tokens of the
// turn's request on history, once for each history, if the ContextPolicy
// counts them. The step then goes on with then. It is nil when the policy
// does not count, or when history's count is in hand.
func (c *Conversation) countFirst(history []types.Message, then func(context.Context) (*Step, error)) *Step {
	r := c.run
	if !c.opts.Context.CountTokens || r.counted.of(history) {
		return nil
	}
	r.counted = &tokenCount{history: history, req: c.input.request(history, r.cfg), then: then}
	return &Step{CountTokens: r.counted.req}
}

// sizeTurn trims the turn's history to the ContextPolicy's MaxInputTokens,
// if it has one, after counting its tokens if the policy counts them, and
// returns the turn's step.
func (c *Conversation) sizeTurn(ctx context.Context) (*Step, error) {
	if p := c.opts.Context; p != nil && p.MaxInputTokens > 0 {
		history := c.kept()
		if step := c.countFirst(history, c.sizeTurn); step != nil {
			return step, nil
		}
		step, _, err := c.fit(ctx, history, p.MaxInputTokens, false)
		if step != nil || err != nil {
			return step, err
		}
	}
	return c.turnStep(ctx)
}

// HandleCount takes the answer to req, the CountTokens of the last Step:
// Bedrock's CountTokens output, or the error of the call. A driver whose
// client cannot count hands it an error. A failed count (an error, or no
// InputTokens) leaves the step to the estimate, as a count is only a
// better size. It returns the next step, as the step that asked for the
// count would have. A count for any other request (one answered already,
// or of an earlier step) is ErrStaleStep, and changes nothing.
func (c *Conversation) HandleCount(ctx context.Context, req *bedrockruntime.CountTokensInput, out *bedrockruntime.CountTokensOutput, err error) (*Step, error) {
	return stepping(c, true, func() (*Step, error) { return c.handleCount(ctx, req, out, err) })
}

// handleCount is HandleCount.
func (c *Conversation) handleCount(ctx context.Context, req *bedrockruntime.CountTokensInput, out *bedrockruntime.CountTokensOutput, err error) (*Step, error) {
	n := c.run.counted
	if n == nil || n.then == nil || req == nil || req != n.req {
		return nil, fmt.Errorf("converse: HandleCount: %w: the count is not the one the last step asked for", ErrStaleStep)
	}
	then := n.then
	n.then = nil
	if err == nil && out != nil && out.InputTokens != nil {
		n.tokens = int(*out.InputTokens)
	}
	return then(ctx)
}

// tokenCounter is the CountTokens method of *bedrockruntime.Client.
type tokenCounter interface {
	CountTokens(ctx context.Context, params *bedrockruntime.CountTokensInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.CountTokensOutput, error)
}

// errNoCounter answers a count for a client without a CountTokens method.
var errNoCounter = errors.New("converse: the client has no CountTokens method")

// countTokens makes a step's count, as Send's driver: with the client's
// CountTokens, if it has one. A failed call is logged, as the step then
// estimates; a client without the method is not, as it never counts.
func (c sender) countTokens(ctx context.Context, in *bedrockruntime.CountTokensInput) (*bedrockruntime.CountTokensOutput, error) {
	counter, ok := c.client.(tokenCounter)
	if !ok {
		return nil, errNoCounter
	}
	out, err := counter.CountTokens(ctx, in)
	if err == nil && out.InputTokens == nil {
		err = errors.New("converse: CountTokens answered no inputTokens")
	}
	if err != nil {
		c.opts.logger().Info("converse: CountTokens failed; estimating", "error", err)
	}
	return out, err
}
