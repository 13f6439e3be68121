package converse

import (
	"context"
	"slices"
)

// loop drives a Send or Resume from its first step to its end (see Step).
// It saves each step's state and makes each model call and token count a
// step asks for.
// It asks Options.Approver to decide the calls that need it, and runs the
// tool calls. It ends when a step holds the Result, an error ends the run,
// or calls stay pending (a pause).
func (c *Conversation) loop(ctx context.Context, step *Step, err error) (*Result, error) {
	if c.run == nil { // refused before the run began
		return nil, err
	}
	res := c.run.res
	defer func() { c.run = nil }()
	var turn *turnResult // the last model call, whose early calls may still run
	defer func() { turn.discard() }()
	for {
		// A step's state is saved before its model call or calls are made.
		if serr := c.save(ctx); serr != nil && err == nil {
			res.History, err = slices.Clone(c.kept()), serr
		}
		if err != nil || step.Result != nil {
			break
		}
		switch {
		case step.ModelCall != nil:
			turn.discard()
			var callErr error
			turn, callErr = c.caller.call(ctx, step.ModelCall)
			step, err = c.handleResponse(ctx, step.ModelCall, turn, callErr)
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
