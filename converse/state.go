package converse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/wire"
	"github.com/tooluse/bedrock/tools"
)

// StateVersion is the version of the JSON form of a State that this package
// writes. It reads this version only.
const StateVersion = 1

// State is a snapshot of a Conversation, taken with Conversation.State at
// any time and rebuilt with Restore, possibly in another process. It is
// always in one of the states of the package doc, and resumable when the
// conversation was.
//
// Its JSON form, version 1 (see testdata/state-v1.json):
//
//	{
//	  "version": 1,
//	  "modelId": "us.anthropic.claude-sonnet-5-5",
//	  "messages": [...],    // the history, in Bedrock's wire JSON (a request's "messages")
//	  "openTurn": {         // only while the last message's tool calls are not all answered
//	    "results": [...],   // toolResult blocks of the answered calls, in wire JSON
//	    "answered": [0, 2], // the position, among the last message's client toolUse blocks, of each result
//	    "pending": [{"toolUseId": "t2", "name": "send_email", "input": {...}},
//	                {"toolUseId": "t3", "name": "deploy", "input": {...},
//	                 "question": {"message": "Deploy to production?", // optional: the tool asks the user
//	                              "schema": {...}, "retry": {...}}},
//	                {"toolUseId": "t4/n1", "name": "send_email", "input": {...}}], // a nested conversation's, by path
//	    "started": true,    // the calls neither answered nor pending were started: they were cut off
//	    "nested": {"t4": {"version": 1, ...}} // optional: the paused nested conversation of a pending call, by toolUseId
//	  },
//	  "usage": {"inputTokens": 20, "outputTokens": 10, "totalTokens": 30,
//	            "cacheReadInputTokens": 0, "cacheWriteInputTokens": 0},
//	  "toolCalls": 3,       // optional: State.ToolCalls, absent for 0
//	  "stopped": true,      // optional: State.Stopped, absent for false
//	  "turns": [{           // optional: the TurnRecords (see testdata/state-v1-turns.json)
//	    "message": 1, "end": "2025-06-01T12:00:00Z", "durationMs": 1500,
//	    "stopReason": "tool_use", "usage": {...},
//	    "calls": [{"toolUseId": "t1", "start": "...", "end": "...",
//	               "truncated": true, "verdict": "approved", "by": "the user"}]
//	  }]
//	}
//
// "turns", "toolCalls", "stopped" and a pending call's "question" (see
// tools.Question) were added to version 1 without a new version. A
// question's "retry" is the tool's own, to go on with the call. Readers of
// before ignore these fields, as they ignore every field they do not know,
// and states saved before have none. So was a pending call's path
// (see PausedError), which readers of before reject as no call of the
// last message. So was "nested": the State, in this form, of a nested
// conversation that paused the call and was kept nowhere else (see
// Caller.State and testdata of package agenttool, state-v1-nested.json).
// A reader of before drops it. Its Resume then runs the call again
// without it, and an agent tool starts its task over.
//
// The model ID is kept because the form of the history depends on it (the
// status field of tool results, reasoning signatures); the system prompt,
// inference configuration and tools are the caller's, passed to Restore
// again.
type State struct {
	// ModelID is the conversation's model.
	ModelID string
	// Messages is the history; see Conversation.History.
	Messages []types.Message
	// Pending are the calls of the last message awaiting a decision, or
	// an answer to their Question.
	Pending []Call
	// Usage sums the tokens of every model call of the conversation.
	Usage Usage
	// ToolCalls counts the client tool calls of the conversation's tool
	// rounds, run or decided, which Budget.Conversation limits; a state
	// saved before it was kept counts from 0.
	ToolCalls int
	// Turns are the records of the assistant messages of Messages, by
	// index, that a conversation with Options.Session made (see TurnRecord);
	// a message without one, or a state saved before records were kept,
	// shows no times.
	Turns map[int]TurnRecord
	// Revision is the version of the session the state was loaded from or
	// last saved as, which the Store sets on Load and Save: 0 for a state
	// no Store holds. A Store saves a state only on top of the revision it
	// names, and then sets it to the new one; a session saved by another
	// since then fails the Save with ErrSessionChanged. A conversation
	// keeps the revision of its last save, and Restore takes the state's.
	// It is the Store's, not part of the state's JSON form.
	Revision int64
	// StoreData is what the Store knows of the session as it loaded or
	// last saved the state. A filestore.Store's is its file, to append the
	// next step to. Restore and Conversation.State carry it to the next
	// Save and Hold. It is nil for a state no Store holds. Only the Store reads
	// it, and it is not part of the state's JSON form.
	StoreData any
	// Stopped says the user or a limit ended the task (see
	// Conversation.Stop): the history may end with tool results, and the
	// next Send adds its prompt after them.
	Stopped bool

	results []types.ContentBlock // by client call of the last message; nil while unanswered
	started bool
	nested  map[string]*State // by toolUseId: the paused nested conversation of a pending call (see Caller.State)
}

// State returns a snapshot of the conversation. It never waits for a model
// call or a tool: during a Send it returns the state at the last step
// boundary.
func (c *Conversation) State() *State {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &State{ModelID: c.modelID, Messages: slices.Clone(c.history), Turns: c.records.of(c.history), Revision: c.revision, Stopped: c.stopped, StoreData: c.storeData}
	st.Usage, st.ToolCalls = c.accounts.totals()
	if t := c.tail; t != nil {
		st.Pending = t.pendingCalls()
		st.results = slices.Clone(t.results)
		st.started = t.started
		st.nested = t.nestedStates()
	}
	return st
}

// Restore rebuilds a Conversation from st, with the model st names, the
// tools of reg and the options of optFns, which should be those of the
// conversation that was saved. It fails if st is not a state a Conversation
// can be in, naming the message and block at fault: a toolResult that
// answers no toolUse, say, which Bedrock would reject at every later call. Restored without tools, a history with tool blocks is sent
// with the tools it calls described as withdrawn, since Bedrock requires a
// toolConfig then; a call of a tool reg lacks is answered as one of an
// unknown tool.
func Restore(client Client, reg *tools.Registry, st *State, optFns ...func(*Options)) (*Conversation, error) {
	if st == nil || st.ModelID == "" {
		return nil, errors.New("converse: restore: the state has no model ID")
	}
	c := New(client, st.ModelID, reg, optFns...)
	tail, err := openTurnOf(st, c.exec, c.opts.ApprovalPolicy)
	if err != nil {
		return nil, fmt.Errorf("converse: restore: %w", err)
	}
	c.history, c.tail, c.revision, c.storeData = slices.Clone(st.Messages), tail, st.Revision, st.StoreData
	c.stopped = st.Stopped && tail == nil
	c.accounts.restore(st.Usage, st.ToolCalls)
	c.records.restore(c.history, st.Turns) // c is not yet shared: mu need not be held
	return c, nil
}

// openTurnOf checks the shape of st and rebuilds its open turn, if any,
// of calls exec runs under policy (see newOpenTurn).
func openTurnOf(st *State, exec *Executor, policy func(Call) bool) (*openTurn, error) {
	for i, m := range st.Messages {
		want := types.ConversationRoleUser
		if i%2 == 1 {
			want = types.ConversationRoleAssistant
		}
		if m.Role != want {
			return nil, fmt.Errorf("message %d is from %q, not %q: messages alternate, starting with the user", i, m.Role, want)
		}
		if err := checkBlocks(st.Messages, i); err != nil {
			return nil, err
		}
	}
	n := len(st.Messages)
	if n == 0 || st.Messages[n-1].Role != types.ConversationRoleAssistant || !message.HasToolUse(st.Messages[n-1]) {
		if st.results != nil || len(st.Pending) > 0 {
			return nil, errors.New("results or pending calls without an open tool turn")
		}
		return nil, nil
	}
	t := newOpenTurn(exec, policy, toolCalls(st.Messages[n-1].Content))
	t.started = st.started
	if st.results != nil {
		if len(st.results) != len(t.calls) {
			return nil, fmt.Errorf("%d results for %d calls", len(st.results), len(t.calls))
		}
		for i, r := range st.results {
			if r != nil && message.ResultID(r) != t.calls[i].id {
				return nil, fmt.Errorf("the result at %d answers %q, not the call %q", i, message.ResultID(r), t.calls[i].id)
			}
		}
		copy(t.results, st.results)
	}
	for i := range t.pending {
		k := slices.IndexFunc(st.Pending, func(p Call) bool { return p.ID == t.calls[i].id })
		inner := innerOf(st.Pending, t.calls[i].id)
		t.pending[i] = t.results[i] == nil && (k >= 0 || inner != nil)
		switch {
		case !t.pending[i]:
		case k >= 0:
			t.questions[i] = st.Pending[k].Question
		default:
			t.inner[i], t.nested[i] = inner, st.nested[t.calls[i].id]
		}
	}
	for _, p := range st.Pending {
		if !slices.ContainsFunc(t.pendingCalls(), func(q Call) bool { return q.ID == p.ID }) {
			return nil, fmt.Errorf("the pending call %q is not an unanswered call of the last message", p.ID)
		}
	}
	return t, nil
}

// checkBlocks rejects, in message i of msgs, a nil content block (dropped
// when sent) and a toolResult that answers no toolUse: of the message
// before, in a user message; of its own message, a server tool's, in an
// assistant message. Bedrock rejects every later request of such a history.
func checkBlocks(msgs []types.Message, i int) error {
	calls := map[string]bool{}
	answered := msgs[i]
	if msgs[i].Role == types.ConversationRoleUser {
		answered = types.Message{}
		if i > 0 {
			answered = msgs[i-1]
		}
	}
	for _, b := range answered.Content {
		if tu, ok := b.(*types.ContentBlockMemberToolUse); ok && message.ClientCall(b) == (msgs[i].Role == types.ConversationRoleUser) {
			calls[aws.ToString(tu.Value.ToolUseId)] = true
		}
	}
	for j, b := range msgs[i].Content {
		r, isResult := b.(*types.ContentBlockMemberToolResult)
		switch {
		case b == nil:
			return fmt.Errorf("message %d, block %d: not a content block this package knows", i, j)
		case !isResult:
			continue
		case !calls[aws.ToString(r.Value.ToolUseId)]:
			of := "the message before"
			if msgs[i].Role == types.ConversationRoleAssistant {
				of = "its message (a server tool's)"
			}
			return fmt.Errorf("message %d, block %d: the toolResult %q answers no toolUse of %s", i, j, aws.ToString(r.Value.ToolUseId), of)
		}
	}
	return nil
}

// stateJSON is the JSON form of a State. filestore's step records hold its
// fields from Messages on, in this order.
type stateJSON struct {
	Version   int             `json:"version"`
	ModelID   string          `json:"modelId"`
	Messages  json.RawMessage `json:"messages"`
	OpenTurn  *openTurnJSON   `json:"openTurn,omitempty"`
	Usage     usageJSON       `json:"usage"`
	ToolCalls int             `json:"toolCalls,omitempty"`
	Stopped   bool            `json:"stopped,omitempty"`
	Turns     []turnJSON      `json:"turns,omitempty"`
}

type openTurnJSON struct {
	Results  json.RawMessage   `json:"results"`
	Answered []int             `json:"answered"`
	Pending  []Call            `json:"pending"`
	Started  bool              `json:"started"`
	Nested   map[string]*State `json:"nested,omitempty"`
}

type usageJSON struct {
	InputTokens           int `json:"inputTokens"`
	OutputTokens          int `json:"outputTokens"`
	TotalTokens           int `json:"totalTokens"`
	CacheReadInputTokens  int `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int `json:"cacheWriteInputTokens"`
	// The one-hour writes of cacheWriteInputTokens; absent when none, as
	// in the states of earlier versions.
	CacheWrite1hInputTokens int `json:"cacheWrite1hInputTokens,omitempty"`
}

// MarshalJSON writes the documented JSON form of the state.
func (st *State) MarshalJSON() ([]byte, error) {
	msgs, err := wire.EncodeMessages(st.Messages)
	if err != nil {
		return nil, fmt.Errorf("converse: state: %w", err)
	}
	j := stateJSON{Version: StateVersion, ModelID: st.ModelID, Messages: msgs, Usage: usageJSON(st.Usage), ToolCalls: st.ToolCalls, Stopped: st.Stopped, Turns: turnsForm(st.Turns)}
	if st.results != nil || len(st.Pending) > 0 {
		ot := &openTurnJSON{Answered: []int{}, Pending: st.Pending, Started: st.started, Nested: st.nested}
		var blocks []types.ContentBlock
		for i, r := range st.results {
			if r != nil {
				blocks = append(blocks, r)
				ot.Answered = append(ot.Answered, i)
			}
		}
		if ot.Results, err = encodeBlocks(blocks); err != nil {
			return nil, fmt.Errorf("converse: state: %w", err)
		}
		if ot.Pending == nil {
			ot.Pending = []Call{}
		}
		j.OpenTurn = ot
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the JSON form of a state, version 1. A content block
// of a kind this package does not know is an error naming its message and
// block, not dropped. Restore checks that the state is one a Conversation
// can be in.
func (st *State) UnmarshalJSON(b []byte) error {
	var j stateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("converse: state: %w", err)
	}
	msgs, err := j.messages()
	if err != nil {
		return err
	}
	if err := st.set(j.ModelID, msgs, j.OpenTurn, j.Usage); err != nil {
		return err
	}
	st.ToolCalls, st.Stopped, st.Turns = max(j.ToolCalls, 0), j.Stopped, readRecords(j.Turns, len(msgs))
	return nil
}

// messages checks the version of the state and decodes its messages.
func (j *stateJSON) messages() ([]types.Message, error) {
	if j.Version != StateVersion {
		return nil, fmt.Errorf("converse: state: version %d, this package reads version %d", j.Version, StateVersion)
	}
	msgs, err := wire.DecodeKnownMessages(j.Messages, 0)
	if err != nil {
		return nil, fmt.Errorf("converse: state: %w", err)
	}
	return msgs, nil
}

// set makes st the state of these messages, open turn and usage.
func (st *State) set(modelID string, msgs []types.Message, ot *openTurnJSON, usage usageJSON) error {
	*st = State{ModelID: modelID, Messages: msgs, Usage: Usage(usage)}
	if ot == nil {
		return nil
	}
	blocks, err := decodeBlocks(ot.Results)
	if err != nil {
		return fmt.Errorf("converse: state: open turn: %w", err)
	}
	if len(blocks) != len(ot.Answered) {
		return fmt.Errorf("converse: state: open turn: %d results, %d positions", len(blocks), len(ot.Answered))
	}
	calls := 0
	if n := len(msgs); n > 0 {
		calls = len(toolCalls(msgs[n-1].Content))
	}
	st.results = make([]types.ContentBlock, calls)
	for k, i := range ot.Answered {
		if i < 0 || i >= calls || st.results[i] != nil {
			return fmt.Errorf("converse: state: open turn: bad result position %d", i)
		}
		if _, ok := blocks[k].(*types.ContentBlockMemberToolResult); !ok {
			return fmt.Errorf("converse: state: open turn: result %d is not a toolResult block", k)
		}
		st.results[i] = blocks[k]
	}
	st.Pending, st.started, st.nested = ot.Pending, ot.Started, ot.Nested
	return nil
}

// encodeBlocks writes content blocks in wire JSON, as the content of a
// message.
func encodeBlocks(blocks []types.ContentBlock) (json.RawMessage, error) {
	if len(blocks) == 0 {
		return json.RawMessage("[]"), nil
	}
	b, err := wire.EncodeMessages([]types.Message{{Role: types.ConversationRoleUser, Content: blocks}})
	if err != nil {
		return nil, err
	}
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &msgs); err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("results: unexpected encoding %s", b)
	}
	return msgs[0].Content, nil
}

// decodeBlocks reads what encodeBlocks wrote.
func decodeBlocks(raw json.RawMessage) ([]types.ContentBlock, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("[]")) {
		return nil, nil
	}
	msgs, err := wire.DecodeKnownMessages(slices.Concat([]byte(`[{"role":"user","content":`), raw, []byte(`}]`)), 0)
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 {
		return nil, errors.New("results: not an array of content blocks")
	}
	return msgs[0].Content, nil
}
