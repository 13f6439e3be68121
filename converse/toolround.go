package converse

import (
	"context"
	"fmt"
)

// toolRound runs the calls of the open turn that can run now (not
// answered, not pending), with those started early while the turn
// streamed, and answers them: the results are kept, and once every call
// of the turn is answered they go to the model in one user message.
func (c *Conversation) toolRound(ctx context.Context, early map[string]*earlyCall) (*Step, error) {
	history, tail := c.open()
	var run []int
	var calls []toolCall
	for i, tc := range tail.calls {
		if tail.results[i] == nil && !tail.pending[i] {
			run, calls = append(run, i), append(calls, tc)
		}
	}
	// The calls may run conversations of their own: their usage is the
	// run's too (see ReportUsage).
	n := c.nested()
	results := c.exec.execute(context.WithValue(ctx, nestedKey{}, n), c.run.turn, calls, early)
	n.countInto(c.run)
	return c.keepResults(ctx, history, tail, run, results)
}

// approve asks Options.Approver to decide the pending calls of the open
// turn, one at a time, and returns the calls to run: those that need no
// approval and those approved. A call it pauses stays pending. An error
// of Approve ends the run with it, the calls it did not decide pending.
func (c *Conversation) approve(ctx context.Context) (*Step, error) {
	r := c.run
	r.asked = true
	history, tail := c.open()
	for i, tc := range tail.calls {
		if !tail.pending[i] {
			continue
		}
		c.emit(ApprovalRequested{Turn: r.turn, Call: tc.public()})
		d, err := c.opts.Approver(ctx, tc.public())
		if err == nil {
			d.ID = tc.id
			err = checkVerdict(d)
		}
		if err != nil {
			c.endStep(history, tail, nil)
			return c.run.fail(history, fmt.Errorf("approve %s (%s): %w", tc.name, tc.id, err))
		}
		c.emit(ApprovalDecided{Turn: r.turn, Call: tc.public(), Decision: d})
		tail.decide(ctx, c.exec, i, d)
	}
	return c.startCalls(ctx, history, tail, nil)
}
