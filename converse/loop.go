package converse

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// loop calls the model on history, which ends with a user message, runs the
// tool calls it asks for, and calls it again until it stops asking. It
// keeps the conversation at every step boundary (see keep), so a failure
// loses only the step in progress.
func (c *Conversation) loop(ctx context.Context, cfg *types.ToolConfiguration, history []types.Message) (*Result, error) {
	res := &Result{}
	fail := func(turn int, attempted []types.Message, err error) (*Result, error) {
		res.History = slices.Clone(attempted)
		return res, fmt.Errorf("converse: turn %d: %w", turn, err)
	}
	var win window // the last request's size, for Options.Context
	for turn := 1; ; turn++ {
		first := 2 // a forced tool choice holds only for a turn answering a prompt
		if !answersTools(history[len(history)-1]) {
			first = 1
		}
		fitted, t, err := c.fittedTurn(ctx, turn, &win, history, coverHistory(c.shape.toolConfig(cfg, first+turn-1), history))
		history = fitted
		if err != nil {
			return fail(turn, history, err)
		}
		reply := echo(t.message)
		answered := c.shape != nil && c.shape.accept(ctx, &reply, t.stop)
		attempted := append(history, reply)
		res.Message, res.Text, res.Citations, res.StopReason = reply, textOf(reply), citationsOf(reply), t.stop
		res.Turns, res.Usage, res.Response = turn, res.Usage.Add(t.usage), t.resp
		c.addUsage(t.usage)
		stopErr := stopError(t.stop, reply)
		// A tool_use turn with only server tool calls, which Bedrock answered
		// itself, leaves the client nothing to answer: it ends the Send as a
		// final answer would (an empty user message would be rejected).
		final := answered || t.stop != types.StopReasonToolUse || !hasToolUse(reply)
		var tail *openTurn
		switch { // the reply is kept before TurnEnd, so that History holds it then
		case stopErr != nil, !final && turn >= c.maxTurns():
			// not kept: the Send fails with this step
		case final:
			res.History = c.keepFinal(attempted)
		default:
			calls := t.calls
			if calls == nil {
				calls = toolCalls(reply.Content)
			}
			tail = c.newOpenTurn(calls)
			tail.turn = turn
			c.keep(attempted, tail)
		}
		c.emit(TurnEnd{Turn: turn, StopReason: t.stop, Usage: t.usage, Response: t.resp})

		if stopErr != nil {
			t.discard()
			return fail(turn, attempted, stopErr)
		}
		if final {
			t.discard()
			if c.shape != nil && !answered { // a structured Send's answer that is none
				if history, err = c.retry(ctx, turn, attempted, t.stop); err != nil {
					return fail(turn, attempted, err)
				}
				continue
			}
			if answered {
				c.traceAnswer(ctx, turn)
			}
			if err := c.save(ctx, turn); err != nil {
				return fail(turn, attempted, err)
			}
			return res, nil
		}
		if turn >= c.maxTurns() {
			t.discard()
			if c.shape != nil {
				return fail(turn, attempted, c.shape.failure(t.stop, true, c.maxTurns()))
			}
			return fail(turn, attempted, fmt.Errorf("%w (%d model calls): raise Options.MaxTurns", ErrMaxTurns, c.maxTurns()))
		}
		history = attempted
		if c.shape != nil { // the final tool's invalid calls are answered at once
			c.answerFinal(ctx, turn, tail)
			c.keep(history, tail)
		}
		if err := c.save(ctx, turn); err != nil {
			t.discard()
			return fail(turn, history, err)
		}
		waiting := tail.waiting()
		run, err := c.askApprover(ctx, turn, tail)
		if err == nil {
			err = c.runCalls(ctx, turn, history, tail, run, t.started)
		}
		t.discard() // releases the early calls' context; they are done
		if err != nil || tail.paused() {
			// A pause that ran and decided nothing is the state saved
			// above: it is not saved, nor reported, twice.
			if err != nil || len(run) > 0 || tail.waiting() != waiting {
				c.keep(history, tail)
				if serr := c.save(ctx, turn); serr != nil && err == nil {
					err = serr
				}
			}
			if err != nil {
				return fail(turn, history, err)
			}
			res.History = slices.Clone(history)
			return res, &PausedError{Pending: tail.pendingCalls()}
		}
		history = append(history, tail.message(history))
		c.keep(history, nil)
		if err := c.save(ctx, turn); err != nil {
			return fail(turn, history, err)
		}
		if err := ctx.Err(); err != nil {
			return fail(turn, history, err)
		}
	}
}

// keep makes history, and the open turn of its last message if any, the
// conversation's. It is called at every step boundary, with a history that
// Bedrock accepts as the start of a request.
func (c *Conversation) keep(history []types.Message, tail *openTurn) {
	if tail != nil {
		tail = tail.clone() // the loop goes on filling in its own
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.history, c.tail = history, tail
}

// keepFinal keeps history, ending with a final answer, in a form Bedrock
// accepts: the client's toolUse blocks of a final answer (a turn that did
// not end in tool_use) are dropped, as nothing answers them (a server tool's
// blocks stay, answered in the message). A final answer left with no content
// is not kept, as Bedrock rejects empty messages, and neither is the prompt
// it answered, so that the caller can send another; after tool results the
// conversation stays interrupted. It returns the history for the Result.
func (c *Conversation) keepFinal(history []types.Message) []types.Message {
	n := len(history)
	if last := history[n-1]; hasToolUse(last) {
		final := types.Message{Role: last.Role}
		for _, b := range last.Content {
			if !clientCall(b) {
				final.Content = append(final.Content, b)
			}
		}
		// A copy: the caller's attempt stays as the model sent it, to be
		// checked again (a structured Send's retry) or reported on error.
		history = append(slices.Clip(history[:n-1]), final)
	}
	kept := history
	if len(history[n-1].Content) == 0 {
		kept = history[:n-1]
		if !answersTools(kept[len(kept)-1]) {
			kept = kept[:len(kept)-1]
		}
	}
	c.keep(kept, nil)
	if len(kept) < len(history) {
		return slices.Clone(history) // the next Send writes over what was dropped
	}
	return slices.Clip(history)
}

// answersTools reports whether msg holds tool results.
func answersTools(msg types.Message) bool {
	for _, b := range msg.Content {
		if _, ok := b.(*types.ContentBlockMemberToolResult); ok {
			return true
		}
	}
	return false
}

func (c *Conversation) addUsage(u Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.usage = c.usage.Add(u)
}
