package converse

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/media"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/tools"
)

// ErrInterrupted means a Send was refused because the conversation was
// interrupted after a completed tool exchange. A failed Send or Resume left
// it ending with tool results, or with tool calls not all answered. Or a
// Send's final answer after a tool round had no content and was not kept.
// Resume it first, or Stop it to send a new prompt. (A prompt left
// unanswered is replaced by the next Send.)
var ErrInterrupted = errors.New("the conversation was interrupted: Resume it before sending")

// ErrNothingToResume means Resume was called on a conversation that is empty
// or ends with a final answer: there is nothing to continue; Send instead.
var ErrNothingToResume = errors.New("nothing to resume: the conversation is empty or ends with a final answer")

// interruptedText answers a call that was running when the conversation
// stopped (a crash, say, restored from a Store): it is never run again, as
// it may have taken effect.
const interruptedText = "Error: the call was interrupted before it returned (the conversation stopped and was resumed); it was not run again and may or may not have taken effect"

// openTurn is the state of the client tool calls of the conversation's last
// message, an assistant message, while they are not all answered.
type openTurn struct {
	calls     []toolCall
	results   []types.ContentBlock // by call; nil while unanswered
	pending   []bool               // by call: awaiting a decision
	questions []*tools.Question    // by call: the question a pending call asks; nil for an approval
	answers   []*tools.Answer      // by call: the answer its next run gets (not saved)
	inner     [][]Call             // by call: the pending calls of the nested conversation a pending call paused (see PausedError)
	decided   [][]Decision         // by call: the decisions for its inner calls its next run gets (not saved; see Caller.Decisions)
	nested    []*State             // by call: the state of the nested conversation that paused it, if its tool handed it up (see Caller.State)
	started   bool                 // calls were started: the unanswered ones were cut off
	handed    []bool               // by call: in a Step's Calls of this run (not saved; nil before the first)
	turn      int                  // the turn that asked for the calls; 0 when restored (see turnOf)
	status    bool                 // error results carry the status field
}

// unanswered counts the calls of t not answered yet, pending or not.
func unanswered(t *openTurn) int {
	n := 0
	for _, r := range t.results {
		if r == nil {
			n++
		}
	}
	return n
}

// newOpenTurn opens the calls of a turn, which exec runs, and marks those
// that need approval (see Executor.needsApproval) pending. Calls sharing
// a toolUseId share it, so that they always run together and all but the
// first are answered as duplicates.
func newOpenTurn(exec *Executor, policy func(Call) bool, calls []toolCall) *openTurn {
	t := &openTurn{calls: calls, results: make([]types.ContentBlock, len(calls)), pending: make([]bool, len(calls)),
		questions: make([]*tools.Question, len(calls)), answers: make([]*tools.Answer, len(calls)),
		inner: make([][]Call, len(calls)), decided: make([][]Decision, len(calls)), nested: make([]*State, len(calls)), status: exec.sendsStatus()}
	needs := map[string]bool{}
	for _, tc := range calls {
		needs[tc.id] = needs[tc.id] || exec.needsApproval(tc, policy)
	}
	for i, tc := range calls {
		t.pending[i] = needs[tc.id]
	}
	return t
}

// answer answers the call i of t without running it, with text, and
// traces it with exec as failed with errType: denied, or cut off. A
// repeat of an earlier call's toolUseId is answered, and traced, as a
// duplicate, as the executor answers one.
func (t *openTurn) answer(ctx context.Context, exec *Executor, i int, errType, text string) {
	tc := t.calls[i]
	if slices.ContainsFunc(t.calls[:i], func(p toolCall) bool { return p.id == tc.id }) {
		errType, text = toolErrDuplicate, errorText(duplicateID(tc.id))
	}
	t.pending[i], t.questions[i], t.inner[i], t.nested[i] = false, nil, nil, nil
	t.results[i] = errorResult(tc.id, text, t.status)
	exec.traceUnrun(ctx, tc, errType, text)
}

// paused reports whether calls await a decision.
func (t *openTurn) paused() bool {
	return t.waiting() > 0
}

// waiting counts the calls awaiting a decision.
func (t *openTurn) waiting() int {
	n := 0
	for _, p := range t.pending {
		if p {
			n++
		}
	}
	return n
}

// turnOf numbers the turn of history's last message, an assistant message,
// as the Send that made it did: its model calls since the prompt, the last
// user message that holds no tool results. (A structured Send's correction
// counts as a prompt.) A restored open turn gets its number from it.
func turnOf(history []types.Message) int {
	n := 0
	for i := len(history) - 1; i >= 0 && (history[i].Role == types.ConversationRoleAssistant || !message.HoldsPrompt(history[i])); i-- {
		if history[i].Role == types.ConversationRoleAssistant {
			n++
		}
	}
	return n
}

// awaiting is the index of the call id of t that was started and awaits
// its result, taken aside (those a batch of results answers already);
// -1 if none.
func (t *openTurn) awaiting(id string, taken []int) int {
	for k, tc := range t.calls {
		if tc.id == id && t.started && t.results[k] == nil && !t.pending[k] && !slices.Contains(taken, k) {
			return k
		}
	}
	return -1
}

// pendingCalls are the calls of t awaiting a decision. A call that a
// nested conversation's pause left pending is its inner pending calls,
// each named by its path: the call's ID, "/", the inner call's ID.
func (t *openTurn) pendingCalls() []Call {
	var calls []Call
	for i, tc := range t.calls {
		switch {
		case !t.pending[i]:
		case t.inner[i] != nil:
			for _, p := range t.inner[i] {
				p.ID = tc.id + pathSep + p.ID
				calls = append(calls, p)
			}
		default:
			calls = append(calls, t.pendingCall(i))
		}
	}
	return calls
}

// pathSep separates the IDs of a nested call's path: "a1/t2" is the call
// t2 of the conversation that the call a1 ran.
const pathSep = "/"

// innerOf are the calls of pending whose path starts with the call id,
// their IDs relative to it; nil if none.
func innerOf(pending []Call, id string) []Call {
	var inner []Call
	for _, p := range pending {
		if rest, ok := strings.CutPrefix(p.ID, id+pathSep); ok {
			p.ID = rest
			inner = append(inner, p)
		}
	}
	return inner
}

// message is the user message answering every call, all answered, that
// follows history: its documents' names are made unique in the request.
func (t *openTurn) message(history []types.Message) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: media.Fit(history, append([]types.ContentBlock(nil), t.results...))}
}

func (t *openTurn) clone() *openTurn {
	cp := *t
	cp.results = append([]types.ContentBlock(nil), t.results...)
	cp.pending = append([]bool(nil), t.pending...)
	cp.questions, cp.answers = slices.Clone(t.questions), slices.Clone(t.answers)
	cp.inner, cp.decided, cp.nested = slices.Clone(t.inner), slices.Clone(t.decided), slices.Clone(t.nested)
	cp.handed = slices.Clone(t.handed)
	return &cp
}

// Resume continues a conversation that a failed Send or Resume left
// interrupted, or that calls for approval paused, without adding a user
// message; see the package doc for the states.
//
// On an interrupted conversation it takes no decisions. It runs the calls
// of the last turn that never started. It answers any that were cut off
// (as restored from a Store after a crash) with an error result saying so,
// and never runs them again. The exception is a tools.Options.Resumable
// tool's calls, which it runs again to go on. Then it calls the model.
//
// On a paused one it takes exactly one Decision, Call.Approve or Call.Deny, per
// pending call. It runs the approved calls and any others of the turn not
// yet run. It answers the denied ones with an error result saying who
// denied them and why, and calls the model. A missing, unknown, repeated
// or empty decision is an error (ErrDecision) and changes nothing.
//
// On a stopped one it goes on with the stopped task, calling the model on
// the stopped calls' results (after a raised limit, say). A new prompt is
// a Send.
//
// Resume on an empty or finished conversation returns ErrNothingToResume
// and records no span. Otherwise it behaves as SendMessage, errors included. Its turns are
// numbered from 1. The events of the calls it finishes for an earlier turn
// (ApprovalDecided, ToolStart, ToolEnd, StateSaved) carry the number that
// turn had in its Send, restored ones too.
func (c *Conversation) Resume(ctx context.Context, decisions ...Decision) (*Result, error) {
	return holding(ctx, c, func() (*Result, error) {
		if history, tail := c.open(); !resumable(history, tail) {
			// A check that finds nothing to resume, as a caller makes
			// before every Send, is no operation: it has no span.
			return nil, fmt.Errorf("converse: %w", ErrNothingToResume)
		}
		ctx, span := c.tel.startSend(ctx)
		defer span.abort()
		step, err := c.beginResume(ctx, decisions)
		res, err := sender{c}.loop(ctx, step, err)
		span.end(res, err)
		return res, err
	})
}

// resumable reports whether a conversation of history, with tail open,
// has something to continue: tool calls not all answered, or a last
// message from the user.
func resumable(history []types.Message, tail *openTurn) bool {
	return tail != nil || len(history) > 0 && history[len(history)-1].Role == types.ConversationRoleUser
}

// sendable says why a Send cannot start on a conversation of history,
// with tail open and stopped or not: it is paused or interrupted.
func sendable(history []types.Message, tail *openTurn, stopped bool) error {
	switch {
	case tail != nil && tail.paused():
		return fmt.Errorf("converse: %w: Resume with a decision for each pending call", ErrPaused)
	case tail != nil, !stopped && len(history) > 0 && message.AnswersTools(history[len(history)-1]):
		return fmt.Errorf("converse: %w: Resume it, or Stop it to send a new prompt", ErrInterrupted)
	}
	return nil
}

// baseOf is the history a Send adds its message to: the conversation's,
// h, without a prompt left unanswered by a failed model call, which
// nothing answered and the new message replaces. The history is then
// copied, as History may be reading the prompt's slot. A stopped task's
// tool results stay: the message joins them (see withPrompt).
func baseOf(h []types.Message) []types.Message {
	if n := len(h); n > 0 && h[n-1].Role == types.ConversationRoleUser && !message.AnswersTools(h[n-1]) {
		return slices.Clip(h[:n-1])
	}
	return h
}

// nestedStates are the states of the nested conversations that paused
// the calls of t, by toolUseId; nil if none.
func (t *openTurn) nestedStates() map[string]*State {
	var m map[string]*State
	for i, st := range t.nested {
		if st != nil && t.pending[i] {
			if m == nil {
				m = map[string]*State{}
			}
			m[t.calls[i].id] = st
		}
	}
	return m
}
