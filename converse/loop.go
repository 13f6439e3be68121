package converse

import (
	"context"
	"fmt"
	"slices"
)

// sender is Send's driver of a Conversation's steps, which Send, Resume,
// Stop and Structured use. It makes the model calls and token counts the
// steps ask for, asks Options.Approver, runs the calls, reports the steps'
// events and saves their state. Another engine drives the same steps
// through the step API (see Step).
type sender struct{ *Conversation }

// loop drives a Send or Resume from its first step to its end (see Step).
// It reports each step's events, saves its state, and makes each model
// call and token count a step asks for. It asks Options.Approver to decide
// the calls that need it, and runs the tool calls. It ends when a step
// holds the Result, an error ends the run, or calls stay pending (a pause).
func (c sender) loop(ctx context.Context, step *Step, err error) (*Result, error) {
	if c.run == nil { // refused before the run began
		return nil, err
	}
	res := c.run.res
	defer func() { c.run = nil }()
	var turn *turnResult // the last model call, whose early calls may still run
	defer func() { turn.discard() }()
	for {
		// A step's events are reported, and its state saved, before its
		// model call or calls are made.
		c.events.flush()
		if serr := c.save(ctx); serr != nil && err == nil {
			res.History, err = slices.Clone(c.kept()), serr
		}
		if err != nil {
			break
		}
		if step.Result != nil {
			if step.unrun {
				c.opts.logger().Warn("converse: the final answer asks for tool calls, which are not run: its stop reason is not tool_use",
					"turn", c.run.turn, "stopReason", res.StopReason, "model", res.Model)
			}
			break
		}
		switch {
		case step.ModelCall != nil:
			turn.discard()
			var callErr error
			req := step.ModelCall
			turn, callErr = c.caller.call(ctx, req)
			if req.Summary && callErr != nil {
				c.opts.logger().Info("converse: the summary of the trimmed messages failed; dropping them", "error", fmt.Errorf("summary call: %w", callErr))
			}
			step, err = c.handleResponse(ctx, req, turn, callErr)
		case step.CountTokens != nil:
			out, countErr := c.countTokens(ctx, step.CountTokens)
			step, err = c.handleCount(ctx, step.CountTokens, out, countErr)
		case len(step.Pending) > 0 && c.opts.Approver != nil && !c.run.asked:
			step, err = c.approve(ctx)
		case len(step.Calls) > 0:
			step, err = c.toolRound(ctx, turn.earlyCalls())
		default:
			res.History = slices.Clone(c.kept())
			return res, &PausedError{Pending: step.Pending}
		}
	}
	return res, err
}

// save is the driver's: it saves the state that steps left unsaved in
// Options.Session, if set, and reports it. Send, Resume and Stop save after
// every step, before its model call or its tool calls are made, so a crash
// loses at most the step in progress. Cancellation does not stop the save:
// what happened must be kept.
func (c sender) save(ctx context.Context) error {
	s := c.opts.Session
	if s == nil || !c.unsaved {
		return nil
	}
	st := c.State()
	if err := s.Store.Save(context.WithoutCancel(ctx), s.ID, st); err != nil {
		return fmt.Errorf("converse: turn %d: save session %q: %w", c.savedTurn, s.ID, err)
	}
	c.mu.Lock()
	c.revision, c.storeData = st.Revision, st.StoreData
	c.mu.Unlock()
	c.unsaved = false
	c.events.observe(StateSaved{SessionID: s.ID, Turn: c.savedTurn, Messages: len(st.Messages), Pending: len(st.Pending)})
	return nil
}
