package converse

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/tools"
)

// toolRound runs the calls of the open turn that can run now (not
// answered, not pending), with those started early while the turn
// streamed, and answers them. The results are kept. Once every call of
// the turn is answered, they go to the model in one user message.
func (c sender) toolRound(ctx context.Context, early map[string]*earlyCall) (*Step, error) {
	history, tail := c.open()
	// The calls may run conversations of their own: their usage is the
	// run's too (see Caller.ReportUsage).
	n := c.run.nested(c.accounts, &c.opts)
	var run []int
	var calls []toolCall
	for i, tc := range tail.calls {
		if tail.results[i] == nil && !tail.pending[i] {
			tc.answer, tail.answers[i] = tail.answers[i], nil
			tc.decided, tail.decided[i] = tail.decided[i], nil
			n.resumeNested(tc.id, tail.nested[i])
			tail.nested[i] = nil
			run, calls = append(run, i), append(calls, tc)
		}
	}
	results, pauses := c.exec.executeAsking(context.WithValue(ctx, nestedKey{}, n), c.run.turn, calls, early)
	n.countInto(c.run)
	for k, err := range pauses {
		if err != nil {
			results[k] = c.run.ask(tail, run[k], err)
		}
	}
	return c.keepResults(ctx, history, tail, run, results)
}

// maxQuestions bounds the questions one call asks in a run, as the MCP
// SDK bounds its retries: an Approver that always answers must not keep a
// tool that always asks going for ever.
const maxQuestions = 10

// tooManyQuestions answers a call that asked more than maxQuestions.
var tooManyQuestions = fmt.Sprintf("Error: the tool asked the user more than %d questions in this call; it was not run again", maxQuestions)

// ask leaves the call i of tail pending, for Options.Approver to answer,
// or for Resume, and returns nil: with the question its tool asked (a
// *tools.InputRequiredError), or with the pending calls of its nested
// conversation (a *PausedError). Past maxQuestions it returns the call's
// error result instead.
func (r *run) ask(tail *openTurn, i int, pause error) types.ContentBlock {
	id := tail.calls[i].id
	var inner *PausedError
	if errors.As(pause, &inner) {
		// Its nested conversation asked its own Approver already.
		tail.pending[i], tail.inner[i], tail.nested[i] = true, slices.Clone(inner.Pending), inner.State
		tail.handed[i] = false
		return nil
	}
	var asks *tools.InputRequiredError
	errors.As(pause, &asks)
	if r.questions == nil {
		r.questions = map[string]int{}
	}
	if r.questions[id]++; r.questions[id] > maxQuestions {
		return errorResult(id, tooManyQuestions, tail.status)
	}
	tail.pending[i], tail.questions[i] = true, &asks.Question
	tail.handed[i] = false // handed again once answered
	r.asked = false
	return nil
}

// approve asks Options.Approver to decide the pending calls of the open
// turn, one at a time, and returns the calls to run: those that need no
// approval and those approved. A call it pauses stays pending. An error
// of Approver ends the run with it, the calls it did not decide pending.
func (c sender) approve(ctx context.Context) (*Step, error) {
	r := c.run
	r.asked = true
	history, tail := c.open()
	for i, tc := range tail.calls {
		if !tail.pending[i] || tail.inner[i] != nil {
			// A nested conversation's calls were put to its Approver,
			// by default this one (see Caller.Approver).
			continue
		}
		call := tail.pendingCall(i)
		c.events.observe(ApprovalRequested{Turn: r.turn, Call: call})
		d, err := c.opts.Approver(ctx, call)
		if err == nil {
			d.ID = tc.id
			err = checkVerdict(d)
		}
		if err == nil {
			err = fits(d, call.Question)
		}
		if err != nil {
			c.endStep(history, tail, nil)
			return c.run.fail(history, fmt.Errorf("approve %s (%s): %w", tc.name, tc.id, err))
		}
		c.events.observe(ApprovalDecided{Turn: r.turn, Call: call, Decision: d})
		tail.decide(ctx, c.exec, i, d)
	}
	return c.startCalls(ctx, history, tail, nil)
}
