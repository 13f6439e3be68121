package converse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/tools"
)

// Call is a tool call the model asked for, as an approver sees it. A call
// pending with a Question awaits the user's answer, not an approval: its
// tool asked it while running (see tools.InputRequiredError). A call of a
// Step's Calls whose question was answered carries the Answer, which
// Executor.Run hands its tool (see tools.AnswerOf). The ID of a nested
// conversation's call, passed up to its caller, is its path: "o1/t2" is
// the call t2 of the conversation that the call o1 ran.
type Call struct {
	ID       string          `json:"toolUseId"`
	Tool     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	Question *tools.Question `json:"question,omitempty"`
	Answer   *tools.Answer   `json:"answer,omitempty"`
}

// Verdict is what a Decision says about a call.
type Verdict string

// The verdicts. The zero Verdict is none of them: a Decision must say what
// it decides, so that nothing is approved by default.
const (
	// Approved lets the call run.
	Approved Verdict = "approved"
	// Denied answers the call with an error result, "Error: the call was
	// denied by <By>: <Reason>", which the model sees; the tool does not run.
	Denied Verdict = "denied"
	// Paused, returned by Options.Approver, leaves the call pending: the Send
	// ends with a *PausedError and the call waits for Resume.
	Paused Verdict = "paused"
	// Accepted answers a call's Question with Decision.Answer, which must
	// fit the question's schema: the call runs again with it.
	Accepted Verdict = "accepted"
	// Declined answers a call's Question with an explicit no: the call
	// runs again, told so, and the model sees what the tool makes of it.
	Declined Verdict = "declined"
	// Cancelled answers a call's Question as dismissed, with no choice
	// made: the call runs again, told so.
	Cancelled Verdict = "cancelled"
)

// Decision decides a call that needs approval, or answers a call's
// Question (Accepted, Declined, Cancelled). ID is the call's toolUseId;
// Options.Approver may leave it empty. By and Reason, for a denial, tell
// the model who denied the call and why. Answer is the JSON object an
// Accepted decision answers with; left out of the JSON form without one,
// so that none decodes as none (not as JSON null).
type Decision struct {
	ID      string
	Verdict Verdict
	By      string
	Reason  string
	Answer  json.RawMessage `json:",omitempty"`
}

// Accept returns the Decision answering the call's Question with answer,
// a JSON object that fits the question's schema.
func (c Call) Accept(answer json.RawMessage) Decision {
	return Decision{ID: c.ID, Verdict: Accepted, Answer: answer}
}

// Decline returns the Decision declining the call's Question.
func (c Call) Decline() Decision { return Decision{ID: c.ID, Verdict: Declined} }

// Dismiss returns the Decision cancelling the call's Question.
func (c Call) Dismiss() Decision { return Decision{ID: c.ID, Verdict: Cancelled} }

// Approve returns the Decision approving the call.
func (c Call) Approve() Decision { return Decision{ID: c.ID, Verdict: Approved} }

// Deny returns the Decision denying the call; by says who (such as "the
// user") and reason why.
func (c Call) Deny(by, reason string) Decision {
	return Decision{ID: c.ID, Verdict: Denied, By: by, Reason: reason}
}

// ErrPaused means tool calls await a decision or an answer: a Send or
// Resume that paused returns a *PausedError, which matches it, and so does
// a Send on a paused conversation.
var ErrPaused = errors.New("tool calls await a decision")

// ErrDecision means the decisions given to Resume do not fit the pending
// calls: one is missing, names no pending call, is given twice, or has no
// verdict. It also means one does not fit its call: an approval for a
// question, an answer for an approval, an answer that breaks the
// question's schema.
var ErrDecision = errors.New("bad decisions")

// PausedError is returned by Send and Resume when calls need approval, or
// an answer to their tool's Question, and no Options.Approver decided them
// (or it paused them). The conversation is paused: the calls of the same
// turn that needed no approval have run, and their results are kept;
// Resume with a Decision for each pending call goes on. Its text quotes
// each question, untrusted text. A tool that runs a conversation of its
// own returns that conversation's PausedError to pause the caller too:
// the caller's Pending then holds the nested calls, each ID a path (see
// the package doc).
type PausedError struct {
	Pending []Call
	// State is the paused conversation's state, or nil. A tool that runs
	// a conversation of its own and keeps it nowhere else sets it: the
	// caller's State then carries it, and Caller.State gives it back to
	// the call's next run.
	State *State
}

func (e *PausedError) Error() string {
	names := make([]string, len(e.Pending))
	for i, c := range e.Pending {
		names[i] = fmt.Sprintf("%s (%s)", c.Tool, c.ID)
		if c.Question != nil {
			names[i] += fmt.Sprintf(" asks %q", c.Question.Message)
		}
	}
	return fmt.Sprintf("converse: %d tool calls await a decision: %s", len(e.Pending), strings.Join(names, ", "))
}

// Is makes a *PausedError match ErrPaused.
func (e *PausedError) Is(target error) bool { return target == ErrPaused }

// needsApproval reports whether tc needs a decision before e runs it: its
// tool was made with tools.Options.RequireApproval, or policy
// (Options.ApprovalPolicy) says so. A call of an unknown tool, or with
// unreadable input, runs nothing and needs none.
func (e *Executor) needsApproval(tc toolCall, policy func(Call) bool) bool {
	tool, ok := e.lookup(tc.name)
	if !ok || tc.inputErr != nil {
		return false
	}
	if tool.RequiresApproval() {
		return true
	}
	return policy != nil && policy(tc.public())
}

// checkDecisions checks that decisions decide every pending call of tail,
// and nothing else, and returns them by call. Every call left undecided
// and every decision for no pending call is named.
func checkDecisions(tail *openTurn, decisions []Decision) (map[string]Decision, error) {
	byID := make(map[string]Decision, len(decisions))
	for _, d := range decisions {
		if _, dup := byID[d.ID]; dup {
			return nil, fmt.Errorf("%w: two decisions for the call %q", ErrDecision, d.ID)
		}
		if err := checkVerdict(d); err != nil {
			return nil, err
		}
		if d.Verdict == Paused {
			return nil, fmt.Errorf("%w: Resume takes approvals and denials, not a pause (call %q)", ErrDecision, d.ID)
		}
		byID[d.ID] = d
	}
	var problems []string
	pending := tail.pendingCalls()
	for _, p := range pending {
		d, ok := byID[p.ID]
		if !ok {
			problems = append(problems, fmt.Sprintf("no decision for the pending call %q (tool %s)", p.ID, p.Tool))
			continue
		}
		if err := fits(d, p.Question); err != nil {
			return nil, err
		}
	}
	for _, d := range decisions {
		if !slices.ContainsFunc(pending, func(p Call) bool { return p.ID == d.ID }) {
			problems = append(problems, fmt.Sprintf("%q is not a pending call", d.ID))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrDecision, strings.Join(problems, "; "))
	}
	return byID, nil
}

// applyDecisions applies the checked decisions of byID to the pending
// calls of t, of the turn turn, and reports each with emit; exec traces a
// denied call.
func (t *openTurn) applyDecisions(ctx context.Context, exec *Executor, emit func(Event), turn int, byID map[string]Decision) {
	for i, tc := range t.calls {
		switch {
		case !t.pending[i]:
		case t.inner[i] != nil:
			// The decisions go to the nested conversation, with the
			// call's next run, their IDs relative to it.
			for _, p := range t.inner[i] {
				path := p
				path.ID = tc.id + pathSep + p.ID
				d := byID[path.ID]
				emit(ApprovalDecided{Turn: turn, Call: path, Decision: d})
				d.ID = p.ID
				t.decided[i] = append(t.decided[i], d)
			}
			t.pending[i], t.inner[i] = false, nil
		default:
			d := byID[tc.id]
			emit(ApprovalDecided{Turn: turn, Call: t.pendingCall(i), Decision: d})
			t.decide(ctx, exec, i, d)
		}
	}
}

func checkVerdict(d Decision) error {
	switch d.Verdict {
	case Approved, Denied, Paused, Accepted, Declined, Cancelled:
		return nil
	}
	return fmt.Errorf("%w: the decision for the call %q has no verdict (%q)", ErrDecision, d.ID, d.Verdict)
}

// fits checks that d, checked by checkVerdict, decides a call pending
// with q (nil for an approval): an answer for a question, an accepted one
// fitting its schema, and an approval or a denial for the others.
func fits(d Decision, q *tools.Question) error {
	answer := d.Verdict == Accepted || d.Verdict == Declined || d.Verdict == Cancelled
	switch {
	case d.Verdict == Paused:
		return nil
	case q == nil && answer:
		return fmt.Errorf("%w: the call %q asks no question: approve or deny it", ErrDecision, d.ID)
	case q != nil && !answer:
		return fmt.Errorf("%w: the call %q asks a question: accept, decline or cancel it", ErrDecision, d.ID)
	case d.Verdict == Accepted:
		if err := q.Check(d.Answer); err != nil {
			return fmt.Errorf("%w: the answer to the call %q: %w", ErrDecision, d.ID, err)
		}
	}
	return nil
}

// decide applies a decision to the call i of t: a denial answers it,
// traced by exec; an answer to its question is kept for its next run.
func (t *openTurn) decide(ctx context.Context, exec *Executor, i int, d Decision) {
	switch d.Verdict {
	case Accepted, Declined, Cancelled:
		t.pending[i] = false
		t.answers[i] = &tools.Answer{Question: *t.questions[i], Action: actions[d.Verdict], Content: d.Answer}
		t.questions[i] = nil
	case Approved:
		t.pending[i] = false
	case Denied:
		t.answer(ctx, exec, i, toolErrDenied, denialText(d))
	}
}

// actions are the answers' verdicts as the tools' actions.
var actions = map[Verdict]tools.Action{Accepted: tools.Accept, Declined: tools.Decline, Cancelled: tools.Cancel}

// denialText answers a denied call.
func denialText(d Decision) string {
	by, reason := d.By, d.Reason
	if strings.TrimSpace(by) == "" {
		by = "the approver"
	}
	if strings.TrimSpace(reason) == "" {
		reason = "no reason given"
	}
	return fmt.Sprintf("Error: the call was denied by %s: %s", by, reason)
}

// errorResult is a toolResult block holding an error text.
func errorResult(id, text string, status bool) types.ContentBlock {
	block := types.ToolResultBlock{ToolUseId: aws.String(id),
		Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: text}}}
	if status {
		block.Status = types.ToolResultStatusError
	}
	return &types.ContentBlockMemberToolResult{Value: block}
}

func (tc toolCall) public() Call {
	return Call{ID: tc.id, Tool: tc.name, Input: tc.input}
}

// pendingCall is the call i of t as an approver sees it, with its
// question if it asks one.
func (t *openTurn) pendingCall(i int) Call {
	c := t.calls[i].public()
	c.Question = t.questions[i]
	return c
}
