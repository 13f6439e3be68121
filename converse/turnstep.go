package converse

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
)

// nextTurn starts the next turn: the history is trimmed to the
// ContextPolicy's limit, which may take a summary call first, and the
// turn's request built.
func (c *Conversation) nextTurn(ctx context.Context) (*Step, error) {
	r := c.run
	if r.resumed {
		r.turn, r.resumed = 0, false
	}
	r.turn++
	r.retried, r.wasted, r.wastedUSD, r.asked, r.plan, r.tried, r.counted = false, Usage{}, dollars{}, false, nil, 0, nil
	history := c.kept()
	// A forced tool choice holds only for the first turn answering a
	// prompt: after the tool results, the model may answer. A structured
	// Send's final tool and its choice are added to the request, for the
	// turn's model (see shape.path).
	r.cfg = c.cfg
	if r.turn > 1 || !message.HoldsPrompt(history[len(history)-1]) {
		r.cfg = unforced(r.cfg)
	}
	r.cfg = coverHistory(r.cfg, history)
	if c.opts.PrepareTurn != nil {
		t, err := c.opts.prepareTurn(ctx, c.modelID, r.turn, r.cfg, history)
		if err == nil && t.Stop {
			r.turn--
			if err := c.stop(ctx, history, nil, byUser); err != nil {
				return c.run.fail(history, err)
			}
			r.res.History = slices.Clone(history)
			return &Step{Result: r.res}, nil
		}
		if err == nil {
			r.plan = t
			r.cfg, err = offered(c.exec, t, r.cfg, history)
		}
		if err != nil {
			return c.run.fail(history, err)
		}
	}
	return c.sizeTurn(ctx)
}

// turnStep is the step of the turn's model call, on the kept history,
// to the turn's model or the fallback model tried now, within the budget.
func (c *Conversation) turnStep(ctx context.Context) (*Step, error) {
	r := c.run
	t := r.plan
	if r.tried == 0 {
		r.tried = c.sticky.from(planned(t, c.modelID), c.opts.now())
	}
	if r.tried > 0 {
		fallback := TurnPlan{ModelID: c.opts.ModelCalls.fallback()[r.tried-1], System: c.opts.Request.System, InferenceConfig: c.opts.Request.InferenceConfig}
		if t != nil {
			fallback = *t
			fallback.ModelID = c.opts.ModelCalls.fallback()[r.tried-1]
		}
		t = &fallback
	}
	m := c.model
	if t != nil && t.ModelID != c.modelID {
		m = models.Parse(t.ModelID)
	}
	in := c.request(c.kept(), r.cfg, r.shape, t, m)
	if t != nil && in.ToolConfig != nil {
		if err := c.opts.checkChoice(m, t.ModelID, in.ToolConfig.ToolChoice); err != nil {
			return c.run.fail(c.kept(), err)
		}
	}
	stream := c.opts.Stream != nil && (in.ToolConfig == nil || m.SupportsStreamingToolUse())
	return c.budgeted(ctx, &ModelCall{Turn: r.turn, Input: in, stream: stream, mode: c.opts.Stream.guardrailMode()})
}

// planned is the model a turn's plan t calls: PrepareTurn's, or else
// model, New's.
func planned(t *TurnPlan, model string) string {
	if t != nil {
		return t.ModelID
	}
	return model
}

// fallbackCooldown is how long turns keep to the fallback model that
// answered before they try their own model again.
const fallbackCooldown = time.Minute

// stickyFallback is the fallback model that last answered for a turn's
// own model: the turns until a cool-down go to it at once, rather than
// each waiting for their own model to fail again.
type stickyFallback struct {
	model string    // the turn's own model
	tried int       // the Options.ModelCalls.Fallback index that answered, from 1
	until time.Time // the end of the cool-down
}

// from is the fallback to start a turn of model with at now: 0 for the
// model itself.
func (s stickyFallback) from(model string, now time.Time) int {
	if s.tried > 0 && s.model == model && now.Before(s.until) {
		return s.tried
	}
	return 0
}

// fallback is the step of the turn's call to the next of
// Options.ModelCalls.Fallback, if err, of the call of req, is one to fall back
// on and one is left; nil otherwise.
func (c *Conversation) fallback(ctx context.Context, req *ModelCall, err error) (*Step, error) {
	r := c.run
	if req.Summary || r.tried >= len(c.opts.ModelCalls.fallback()) || !fallsBack(err) {
		return nil, nil
	}
	r.tried++
	from, to := aws.ToString(req.Input.ModelId), c.opts.ModelCalls.fallback()[r.tried-1]
	c.events.emit(ModelFallback{Turn: r.turn, From: from, To: to, Err: err})
	return c.turnStep(ctx)
}

// fallsBack reports whether a model call's error is one that another
// model may not have: throttling, a model not ready, timed out or stalled,
// the service unavailable; never once a tool of the turn started.
func fallsBack(err error) bool {
	var (
		throttling  *types.ThrottlingException
		notReady    *types.ModelNotReadyException
		unavailable *types.ServiceUnavailableException
		timeout     *types.ModelTimeoutException
		started     startedError
	)
	if errors.As(err, &started) {
		return false
	}
	return errors.As(err, &throttling) || errors.As(err, &notReady) || errors.As(err, &unavailable) ||
		errors.As(err, &timeout) || errors.Is(err, ErrStalled)
}
