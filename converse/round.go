package converse

import (
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/tools"
)

// startCalls marks the calls of tail that can run (not answered, not
// pending) started, ends the step, and returns them to run; with none, the
// round is closed if every call is answered, or paused.
func (c *Conversation) startCalls(ctx context.Context, history []types.Message, tail *openTurn, ev Event) (*Step, error) {
	var calls, waiting []Call
	if tail.handed == nil {
		tail.handed = make([]bool, len(tail.calls))
	}
	for i := range tail.calls {
		switch {
		case tail.results[i] != nil || tail.pending[i]:
		case tail.handed[i]:
			waiting = append(waiting, tail.handedCall(i))
		default:
			calls = append(calls, tail.handedCall(i))
			tail.handed[i] = true
		}
	}
	if unanswered(tail) == 0 {
		if ev != nil { // the reply's calls are all answered already
			c.endStep(history, tail, ev)
		}
		return c.closeRound(ctx, history, tail)
	}
	if len(calls) > 0 && !tail.started {
		// The round's calls count before it starts, those pending with the
		// rest, so that no decision can pass a limit in the middle of it.
		if err := c.accounts.startRound(&c.run.spent, unanswered(tail)); err != nil {
			c.endStep(history, tail, ev)
			return c.stopRun(ctx, history, tail, nil, err)
		}
	}
	if len(calls) > 0 {
		tail.started = true
	}
	c.endStep(history, tail, ev)
	step := &Step{Calls: calls, Waiting: waiting}
	if len(calls) > 0 && c.opts.Budget != nil {
		step.round = c.run.nested(c.accounts, &c.opts)
	}
	if tail.paused() {
		step.Pending = tail.pendingCalls()
	}
	return step, nil
}

// handedCall is the call i of t as a Step hands it out, with the answer
// to the question it asked, if any.
func (t *openTurn) handedCall(i int) Call {
	c := t.calls[i].public()
	c.Answer = t.answers[i]
	return c
}

// keepResults keeps the results of the calls of tail at the indexes run,
// and closes the round when every call is answered.
func (c *Conversation) keepResults(ctx context.Context, history []types.Message, tail *openTurn, run []int, results []types.ContentBlock) (*Step, error) {
	for k, i := range run {
		tail.results[i] = results[k]
	}
	if slices.Contains(tail.results, nil) {
		return c.startCalls(ctx, history, tail, nil)
	}
	return c.closeRound(ctx, history, tail)
}

// closeRound sends the results of an open turn, all answered, in one user
// message, and starts the next turn.
func (c *Conversation) closeRound(ctx context.Context, history []types.Message, tail *openTurn) (*Step, error) {
	history = append(history, tail.message(history))
	c.endStep(history, nil, nil)
	if err := ctx.Err(); err != nil {
		return c.run.fail(history, err)
	}
	return c.nextTurn(ctx)
}

// withStatus returns results with the status field as the executor sends
// it: an engine may have run the calls with other settings.
func (e *Executor) withStatus(results []types.ContentBlock) []types.ContentBlock {
	if e.sendsStatus() {
		return results
	}
	out := make([]types.ContentBlock, len(results))
	for i, b := range results {
		if r, ok := b.(*types.ContentBlockMemberToolResult); ok && r.Value.Status != "" {
			v := r.Value
			v.Status = ""
			b = &types.ContentBlockMemberToolResult{Value: v}
		}
		out[i] = b
	}
	return out
}

// CallResult is what came of a call of a Step that Executor.Run ran, for
// AnswerCalls: its toolResult block, or the Question its tool asked
// instead, and the usage of the model calls made for it.
type CallResult struct {
	// ID is the call's toolUseId.
	ID string
	// Result is the call's toolResult block
	// (*types.ContentBlockMemberToolResult); nil when Question is set.
	Result types.ContentBlock
	// Question, if not nil, is what the call's tool asked the user (see
	// tools.InputRequiredError): the call waits for the answer, and then
	// runs again with it.
	Question *tools.Question
	// Usage is what the call's tool reported with Caller.ReportUsage (a nested
	// conversation's usage, say), summed.
	Usage Usage
	// CostUSD is what Usage cost; nil when a report's cost is unknown, or
	// nothing was reported.
	CostUSD *float64
}

// reported reports whether r carries usage to count.
func (r CallResult) reported() bool { return r.Usage != (Usage{}) || r.CostUSD != nil }

// cost is r's CostUSD as the accounts count it.
func (r CallResult) cost() dollars {
	if r.CostUSD == nil {
		return dollars{unknown: true}
	}
	return dollars{usd: *r.CostUSD}
}

// Run runs one call, as Execute runs the calls of a message, for an engine
// that runs each call of a Step on its own. It returns the call's
// toolResult block, or the Question its tool asked (a
// *tools.InputRequiredError). Either comes with the usage its tool
// reported (see Caller.ReportUsage). A call's Answer reaches its tool through tools.AnswerOf.
// In Run, the Caller has no Budget and no Session.
func (e *Executor) Run(ctx context.Context, call Call) CallResult {
	tc := toolCall{id: call.ID, name: call.Tool, input: call.Input, answer: call.Answer}
	if len(tc.input) == 0 {
		tc.input = []byte("{}")
	}
	n := &nestedRound{a: &accounts{}}
	results, pauses := e.executeAsking(context.WithValue(ctx, nestedKey{}, n), 0, []toolCall{tc}, nil)
	// A report after this, of a call abandoned at its timeout, counts nowhere.
	u, d := n.usage()
	out := CallResult{ID: call.ID, Result: results[0], Usage: u}
	var asks *tools.InputRequiredError
	switch {
	case errors.As(pauses[0], &asks):
		out.Question = &asks.Question
	case pauses[0] != nil:
		// A nested conversation paused: the step API cannot pause it (see
		// package agenttool), so the call's answer is the error.
		out.Result = e.finish(0, tc, outcome{err: pauses[0]})
	}
	if u != (Usage{}) || d.usd != 0 {
		out.CostUSD = d.value()
	}
	return out
}

// Executor returns the Executor the conversation runs its calls with: its
// registry and Options.Tools, with the status field and media rules of its
// model, its telemetry and its events. An engine driving the steps runs a
// Step's Calls with it (Executor.Run), in any process that builds the
// conversation with the same model, registry and options.
func (c *Conversation) Executor() *Executor { return c.exec }
