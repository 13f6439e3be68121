package converse

import (
	"context"
	"slices"
)

// loop drives a Send or Resume from its first step to its end (see Step):
// it makes each model call a step asks for, asks Options.Approver to decide
// the calls that need it, and runs the tool calls, until a step holds the
// Result, an error ends the run, or calls stay pending (a pause). Each
// step ends at a boundary the steps themselves keep and save.
func (c *Conversation) loop(ctx context.Context, step *Step, err error) (*Result, error) {
	if c.run == nil { // refused before the run began
		return nil, err
	}
	res := c.run.res
	defer func() { c.run = nil }()
	var turn *turnResult // the last model call, whose early calls may still run
	defer func() { turn.discard() }()
	for err == nil && step.Result == nil {
		switch {
		case step.Request != nil:
			turn.discard()
			var callErr error
			turn, callErr = c.callModel(ctx, step.Request)
			step, err = c.handleResponse(ctx, step.Request, turn, callErr)
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
