package converse

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/citation"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
)

// handleResponse is HandleResponse, with the answer decoded: a failed
// call is recovered from if it can be (see recover); a reply is accepted,
// classified, and acted on.
func (c *Conversation) handleResponse(ctx context.Context, req *ModelCall, t *turnResult, err error) (*Step, error) {
	c.run.await = nil
	if req.Summary {
		return c.summarized(ctx, aws.ToString(req.Input.ModelId), t, err)
	}
	if step, done, err := c.rescue(ctx, req, t, err); done {
		return step, err
	}
	a := c.accept(ctx, req, t)
	switch a.classify(c.run, c.opts.maxTurns()) {
	case replyFailed:
		c.events.emit(a.turnEnd)
		return c.run.fail(a.attempted, stopError(t.stop, a.reply))
	case replyToCorrect:
		return c.correct(ctx, a.attempted, t.stop, a.turnEnd)
	case replyFinal:
		return c.finalAnswer(ctx, a)
	case replyOverLimit:
		return c.overTurns(ctx, a)
	}
	return c.openRound(ctx, a, t.calls)
}

// rescue handles a failed model call, or a call that overflowed the
// context window: with Options.Context, the history is trimmed and the turn
// asked again; a fallback model is tried; otherwise the run fails. done is
// false when there is a reply to accept.
func (c *Conversation) rescue(ctx context.Context, req *ModelCall, t *turnResult, err error) (step *Step, done bool, _ error) {
	r := c.run
	history := c.kept()
	if c.opts.Context != nil && !r.retried && overflowed(err, t) {
		again := func(ctx context.Context) (*Step, error) { return c.handleResponse(ctx, req, t, err) }
		if step := c.countFirst(history, again); step != nil {
			return step, true, nil
		}
		r.retried = true
		if t != nil {
			// The call that overflowed was billed: counted now, for the
			// budget of the retry and in case it fails, and reported in the
			// retry's TurnEnd.
			r.wasted = t.usage
			r.wastedUSD = r.count(c.accounts, aws.ToString(req.Input.ModelId), t.usage)
		}
		if step, cut, ferr := c.fit(ctx, history, c.overflowLimit(history), true); ferr != nil || cut {
			return step, true, ferr
		}
	}
	if err == nil {
		return nil, false, nil
	}
	if step, ferr := c.fallback(ctx, req, err); step != nil || ferr != nil {
		return step, true, ferr
	}
	if overflowed(err, t) { // Bedrock's ValidationException: say it is the window
		err = fmt.Errorf("%w: %w", ErrContextWindowExceeded, err)
	}
	step, err = c.run.fail(history, err)
	return step, true, err
}

// accepted is a model call's reply as the conversation takes it: echoed
// as Bedrock takes it back, re-encoded for the conversation's model,
// checked against a structured answer's shape.
type accepted struct {
	t         *turnResult
	reply     types.Message
	attempted []types.Message // the history with the reply
	answered  bool            // a structured answer was found in it
	turnEnd   TurnEnd
}

// accept takes the reply of t, the answer to req: it fills in the
// Result, counts the call's usage and makes the turn's TurnEnd.
func (c *Conversation) accept(ctx context.Context, req *ModelCall, t *turnResult) *accepted {
	r := c.run
	history := c.kept()
	if c.opts.Context != nil {
		r.win.record(history, t.usage)
	}
	model := aws.ToString(req.Input.ModelId)
	reply := message.Echo(t.message)
	if model != c.modelID && models.Parse(model).Provider != c.model.Provider {
		reply = reencode([]types.Message{reply}, models.Parse(model), c.model, c.modelID)[0]
	}
	if c.model.RejectsReasoningHistory() {
		reply.Content = slices.DeleteFunc(reply.Content, message.IsReasoning)
	}
	a := &accepted{t: t, reply: reply}
	a.answered = r.shape != nil && r.shape.accept(ctx, &a.reply, t.stop)
	a.attempted = append(history, a.reply)
	res := r.res
	// The text is the model's as it came, blank blocks between cited
	// sentences included, which the history cannot keep; a structured
	// answer's is the answer accept made of the reply.
	said := t.message
	if r.shape != nil {
		said = a.reply
	}
	res.Message, res.Text, res.Citations, res.StopReason = a.reply, message.Text(said), citation.FromMessage(said), t.stop
	res.Turns, res.Response, res.Model = r.turn, t.resp, model
	cost := r.count(c.accounts, model, t.usage).plus(r.wastedUSD)
	// A fallback that answered keeps the next turns until its cool-down;
	// the turn's own model answering ends it.
	c.sticky = stickyFallback{}
	if r.tried > 0 {
		c.sticky = stickyFallback{model: planned(r.plan, c.modelID), tried: r.tried, until: c.opts.now().Add(fallbackCooldown)}
	}
	a.turnEnd = TurnEnd{Turn: r.turn, Model: model, StopReason: t.stop, Usage: t.usage.Add(r.wasted), CostUSD: cost.value(), Duration: t.took, Response: t.resp}
	r.wasted, r.wastedUSD = Usage{}, dollars{}
	return a
}

// replyKind is what a reply asks of the conversation.
type replyKind int

const (
	replyFailed    replyKind = iota // a stop reason that fails the run
	replyToCorrect                  // a structured answer that breaks its schema
	replyFinal                      // a final answer
	replyOverLimit                  // calls past the turn limit
	replyCalls                      // calls to run
)

// classify says what the reply asks for. A tool_use turn with only server
// tool calls, which Bedrock answered itself, leaves the client nothing to
// answer: it is final (an empty user message would be rejected).
func (a *accepted) classify(r *run, maxTurns int) replyKind {
	stop := a.t.stop
	switch {
	case stopError(stop, a.reply) != nil:
		return replyFailed
	case a.answered:
		return replyFinal
	case stop != types.StopReasonToolUse || !message.HasToolUse(a.reply):
		if r.shape != nil {
			return replyToCorrect
		}
		return replyFinal
	case r.turn >= maxTurns:
		return replyOverLimit
	}
	return replyCalls
}

// finalAnswer ends the run with the reply as its answer. The reply is kept
// before TurnEnd (see History).
func (c *Conversation) finalAnswer(ctx context.Context, a *accepted) (*Step, error) {
	r := c.run
	step := &Step{Result: r.res, unrun: !a.answered && a.t.stop != types.StopReasonToolUse && message.HasToolUse(a.reply)}
	kept, final := keepable(a.attempted)
	r.res.History = final
	if r.shape != nil {
		r.shape.fillResult(r.res)
	}
	c.endStep(kept, nil, a.turnEnd)
	if a.answered { // the final tool's call is reported after its turn
		r.shape.traceAnswer(ctx, c.exec, c.events.emit, r.turn)
	}
	return step, nil
}

// overTurns ends the run at the turn limit: the reply is not kept, and
// the task is stopped.
func (c *Conversation) overTurns(ctx context.Context, a *accepted) (*Step, error) {
	c.events.emit(a.turnEnd)
	history := a.attempted[:len(a.attempted)-1]
	if sh := c.run.shape; sh != nil {
		return c.run.fail(a.attempted, sh.failure(a.t.stop, true, c.opts.maxTurns()))
	}
	return c.stopRun(ctx, history, nil, a.attempted, fmt.Errorf("%w (%d model calls): raise Options.MaxTurns", ErrMaxTurns, c.opts.maxTurns()))
}

// openRound opens the tool round of the reply's calls (calls, if the
// stream already read them): repaired if asked, a structured answer's
// final call answered, those that need it pending for a decision, the
// others started.
func (c *Conversation) openRound(ctx context.Context, a *accepted, calls []toolCall) (*Step, error) {
	r := c.run
	if calls == nil {
		calls = toolCalls(a.reply.Content)
	}
	if c.opts.RepairCall != nil {
		calls = repairCalls(ctx, c.opts.RepairCall, c.exec, a.reply, calls) // rewrites the blocks of attempted's reply
	}
	tail := newOpenTurn(c.exec, c.opts.ApprovalPolicy, calls)
	tail.turn = r.turn
	r.shape.answerFinal(ctx, c.exec, c.events.emit, r.turn, tail)
	if tail.paused() && c.opts.Approver != nil {
		// Nothing starts before Options.Approver decides: the approved
		// calls then run with the others.
		c.endStep(a.attempted, tail, a.turnEnd)
		return &Step{Pending: tail.pendingCalls()}, nil
	}
	return c.startCalls(ctx, a.attempted, tail, a.turnEnd)
}

// keepable is what a history ending with a final answer keeps, and what
// the Result shows. The client's toolUse blocks of a final answer (a turn
// that did not end in tool_use) are dropped, as nothing answers them. A
// server tool's blocks stay, answered in the message. A final answer left
// with no content, or reasoning alone, is not kept. Bedrock rejects empty
// messages, and newer Claude models reject an assistant message of
// reasoning alone, as a prefill. The prompt it answered is not kept
// either, so that the caller can send another. After tool results the
// conversation stays interrupted.
func keepable(history []types.Message) (kept, final []types.Message) {
	last := &history[len(history)-1]
	if message.HasToolUse(*last) {
		answer := types.Message{Role: last.Role}
		for _, b := range last.Content {
			if !message.ClientCall(b) {
				answer.Content = append(answer.Content, b)
			}
		}
		// A copy: the attempt stays as the model sent it, to be checked
		// again (a structured Send's correction) or reported on error.
		history = append(slices.Clip(history[:len(history)-1]), answer)
		last = &history[len(history)-1]
	}
	kept = history
	if slices.IndexFunc(last.Content, notReasoning) < 0 { // empty, or reasoning alone
		kept = history[:len(history)-1]
		if !message.AnswersTools(kept[len(kept)-1]) {
			kept = kept[:len(kept)-1]
		}
	}
	if len(kept) < len(history) {
		return kept, slices.Clone(history) // the next Send writes over what was dropped
	}
	return kept, slices.Clip(history)
}

func notReasoning(b types.ContentBlock) bool { return !message.IsReasoning(b) }

// replyOf reads a Converse output.
func replyOf(out *bedrockruntime.ConverseOutput) (*turnResult, error) {
	if out == nil {
		return nil, errors.New("the response holds no message")
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, errors.New("the response holds no message")
	}
	return &turnResult{message: msg.Value, stop: out.StopReason, usage: usageOf(out.Usage), resp: responseOf(out)}, nil
}
