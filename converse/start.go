package converse

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/media"
)

// begin is Begin; sh, if not nil, is the shape a structured Send's answer
// must take.
func (c *Conversation) begin(ctx context.Context, msg types.Message, sh *shape) (*Step, error) {
	if msg.Role == "" {
		msg.Role = types.ConversationRoleUser
	}
	if msg.Role != types.ConversationRoleUser {
		return nil, fmt.Errorf("converse: SendMessage wants a user message, not %q", msg.Role)
	}
	if err := checkContent(msg); err != nil {
		return nil, err
	}
	c.mu.Lock()
	history, tail, stopped := c.history, c.tail, c.stopped
	c.mu.Unlock()
	if err := sendable(history, tail, stopped); err != nil {
		return nil, err
	}
	base := baseOf(history)
	// A document named as one of the history is numbered, as a tool's is:
	// Bedrock rejects a request that holds a name twice.
	msg.Content = media.UniqueNames(base, msg.Content)
	c.run = &run{res: &Result{}, shape: sh, spent: tally{start: c.opts.now()}}
	// The new messages go after the conversation's own, in its spare
	// capacity if it has some: no copy of the history per Send. A failed
	// Send's Result gets a copy of its own, since the next Send writes over
	// that spare capacity. History reads only the kept messages, before that
	// capacity, so it never races with these writes.
	history = append(base, msg)
	if n := len(base); n > 0 && base[n-1].Role == types.ConversationRoleUser { // a stopped task's results
		history = withPrompt(base, msg.Content, c.model)
	}
	c.mu.Lock()
	c.stopped = false // a new task
	c.mu.Unlock()
	c.endStep(history, nil, nil)
	return c.nextTurn(ctx)
}

// checkConfig checks the request template and builds the tool
// configuration, again only when tools were added: a registry only grows,
// and its tools are immutable. The length is read first, so a tool added
// meanwhile makes the next Send build again.
func (c *Conversation) checkConfig() error {
	if err := checkTemplate(&c.opts.Request); err != nil {
		return err
	}
	n := c.tools.Len()
	if n == c.cfgLen {
		return nil
	}
	cfg, err := toolConfig(c.tools, c.opts.ToolChoice)
	if err != nil {
		return err
	}
	if cfg != nil || len(c.opts.SystemTools) > 0 {
		if err := c.opts.checkChoice(c.model, c.modelID, c.opts.ToolChoice); err != nil {
			return err
		}
	}
	c.cfg, c.cfgLen = withSystemTools(cfg, c.opts.ToolChoice, c.opts.SystemTools), n
	return nil
}

// beginResume is BeginResume.
func (c *Conversation) beginResume(ctx context.Context, decisions []Decision) (*Step, error) {
	c.mu.Lock()
	history, tail := c.history, c.tail
	c.mu.Unlock()
	switch {
	case tail != nil:
		tail = tail.clone()
		byID, err := checkDecisions(tail, decisions)
		if err != nil {
			return nil, fmt.Errorf("converse: Resume: %w", err)
		}
		var cut []int // cut off by a crash: never run again, unless their tools resume
		for i := range tail.calls {
			if tail.started && tail.results[i] == nil && !tail.pending[i] && !c.exec.resumes(tail.calls[i]) {
				cut = append(cut, i)
			}
		}
		if tail.turn == 0 {
			tail.turn = turnOf(history)
		}
		// The events of the calls it finishes carry the number of the
		// turn that asked for them; its own model calls count from 1.
		c.run = &run{res: &Result{}, turn: tail.turn, resumed: true, spent: tally{start: c.opts.now()}}
		c.events.emit(Resumed{Messages: len(history), Decisions: len(decisions)})
		tail.applyDecisions(ctx, c.exec, c.events.emit, tail.turn, byID)
		for _, i := range cut {
			tc := tail.calls[i]
			tail.answer(ctx, c.exec, i, toolErrInterrupted, interruptedText)
			c.events.emit(ToolEnd{Turn: tail.turn, ID: tc.id, Name: tc.name, Input: tc.input, Err: ErrCallInterrupted, Status: types.ToolResultStatusError})
		}
		step, err := c.startCalls(ctx, history, tail, nil)
		if err != nil {
			return nil, fmt.Errorf("converse: Resume: %w", errors.Unwrap(err))
		}
		return step, nil
	case len(history) > 0 && history[len(history)-1].Role == types.ConversationRoleUser:
		if len(decisions) > 0 {
			return nil, fmt.Errorf("converse: Resume: %w: no call is pending", ErrDecision)
		}
		c.run = &run{res: &Result{}, spent: tally{start: c.opts.now()}}
		c.mu.Lock()
		c.stopped = false // the stopped task goes on
		c.mu.Unlock()
		c.events.emit(Resumed{Messages: len(history)})
		return c.nextTurn(ctx)
	}
	return nil, fmt.Errorf("converse: %w", ErrNothingToResume)
}
