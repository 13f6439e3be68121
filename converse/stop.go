package converse

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
)

// ErrStopped means the user or a limit ended the task: its open calls are
// answered as stopped, and the next Send sends its prompt at once. A
// driver that cancels a Send to stop its task gives it as the cause
// (context.WithCancelCause), so that the calls it cuts off say so, then
// calls Stop. It is the ToolEnd.Err of the calls Stop answers.
var ErrStopped = errors.New("the task was stopped")

// byUser is why a task that Stop ended stopped.
const byUser = "the user stopped the task"

// Stop ends the task of an interrupted or paused conversation, so that the
// next Send sends its prompt at once instead of failing with
// ErrInterrupted or ErrPaused. Calls not answered yet are answered with an
// error result saying the user stopped them: a pending or unstarted call
// is not run; one cut off while it ran may have taken effect. The
// conversation is then stopped (see the package doc's states), and saved
// in Options.Session. On a conversation with no open task Stop does
// nothing. The model sees the stopped calls' results with the next
// prompt; Resume instead continues the stopped task.
func (c *Conversation) Stop(ctx context.Context) error {
	_, err := holding(ctx, c, func() (struct{}, error) {
		history, tail := c.open()
		return struct{}{}, c.stop(ctx, history, tail, byUser)
	})
	return err
}

// stop ends the task. The unanswered calls of tail, if any, are answered as
// stopped for why, and their results close history. The conversation, if left
// waiting for the model, is marked stopped and saved.
func (c *Conversation) stop(ctx context.Context, history []types.Message, tail *openTurn, why string) error {
	if tail != nil {
		turn := tail.turn
		if turn == 0 {
			turn = turnOf(history)
		}
		for i, tc := range tail.calls {
			if tail.results[i] != nil {
				continue
			}
			text := "Error: the call was not run: " + why
			if tail.started && !tail.pending[i] {
				text = "Error: the call was stopped while it ran: " + why + "; it may or may not have taken effect"
			}
			tail.answer(ctx, c.exec, i, toolErrStopped, text)
			c.events.emit(ToolEnd{Turn: turn, ID: tc.id, Name: tc.name, Input: tc.input, Err: ErrStopped, Status: types.ToolResultStatusError})
		}
		history = append(slices.Clip(history), tail.message(history))
	}
	if n := len(history); tail == nil && (n == 0 || !message.AnswersTools(history[n-1])) {
		// Idle, or a prompt no model call answered, which the next Send
		// replaces: nothing is left open.
		return nil
	}
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.endStep(history, nil, nil)
	return nil
}

// stopRun ends the run's task for err, a limit reached (a budget, the
// turn limit), and fails the run with err: the next Send sends its prompt
// at once. The Result shows attempted, or without it the history as the
// stop left it.
func (c *Conversation) stopRun(ctx context.Context, history []types.Message, tail *openTurn, attempted []types.Message, err error) (*Step, error) {
	if serr := c.stop(ctx, history, tail, fmt.Sprintf("the task was stopped (%v)", err)); serr != nil {
		return c.run.fail(history, serr)
	}
	if attempted == nil {
		attempted = c.kept()
	}
	return c.run.fail(attempted, err)
}

// withPrompt returns history with the blocks of a prompt added. After a
// stopped task's tool results they join that user message, since Bedrock wants
// the roles to alternate. A model that takes no text beside tool results gets
// an assistant message between the two instead. history is not written to.
func withPrompt(history []types.Message, blocks []types.ContentBlock, m models.Model) []types.Message {
	prompt := types.Message{Role: types.ConversationRoleUser, Content: blocks}
	n := len(history)
	switch {
	case n == 0 || history[n-1].Role == types.ConversationRoleAssistant:
		return append(slices.Clip(history), prompt)
	case message.AnswersTools(history[n-1]) && m.RejectsTextWithToolResults():
		return append(slices.Clip(history), noted, prompt)
	}
	last := history[n-1]
	merged := types.Message{Role: last.Role, Content: append(slices.Clip(last.Content), blocks...)}
	return append(slices.Clip(history[:n-1]), merged)
}

// noted is the assistant message between tool results and a user's text
// for a model that takes no text beside tool results.
var noted = types.Message{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Noted."}}}
