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
)

// Call is a tool call the model asked for, as an approver sees it.
type Call struct {
	ID    string          `json:"toolUseId"`
	Tool  string          `json:"name"`
	Input json.RawMessage `json:"input"`
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
)

// Decision decides a call that needs approval. ID is the call's toolUseId;
// Options.Approver may leave it empty. By and Reason, for a denial, tell the
// model who denied the call and why.
type Decision struct {
	ID      string
	Verdict Verdict
	By      string
	Reason  string
}

// Approve returns a Decision approving the call id.
func Approve(id string) Decision { return Decision{ID: id, Verdict: Approved} }

// Deny returns a Decision denying the call id; by says who (such as "the
// user") and reason why.
func Deny(id, by, reason string) Decision {
	return Decision{ID: id, Verdict: Denied, By: by, Reason: reason}
}

// ErrPaused means tool calls await a decision: a Send or Resume that paused
// returns a *PausedError, which matches it, and so does a Send on a paused
// conversation.
var ErrPaused = errors.New("tool calls await approval")

// ErrDecision means the decisions given to Resume do not fit the pending
// calls: one is missing, names no pending call, is given twice, or has no
// verdict.
var ErrDecision = errors.New("bad decisions")

// PausedError is returned by Send and Resume when calls need approval and
// no Options.Approver decided them (or it paused them). The conversation is
// paused: the calls of the same turn that needed no approval have run, and
// their results are kept; Resume with a Decision for each pending call
// goes on.
type PausedError struct {
	Pending []Call
}

func (e *PausedError) Error() string {
	names := make([]string, len(e.Pending))
	for i, c := range e.Pending {
		names[i] = fmt.Sprintf("%s (%s)", c.Tool, c.ID)
	}
	return fmt.Sprintf("converse: %d tool calls await approval: %s", len(e.Pending), strings.Join(names, ", "))
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
	for i, tc := range tail.calls {
		if _, ok := byID[tc.id]; tail.pending[i] && !ok {
			problems = append(problems, fmt.Sprintf("no decision for the pending call %q (tool %s)", tc.id, tc.name))
		}
	}
	pending := tail.pendingCalls()
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
		if t.pending[i] {
			d := byID[tc.id]
			emit(ApprovalDecided{Turn: turn, Call: tc.public(), Decision: d})
			t.decide(ctx, exec, i, d)
		}
	}
}

func checkVerdict(d Decision) error {
	switch d.Verdict {
	case Approved, Denied, Paused:
		return nil
	}
	return fmt.Errorf("%w: the decision for the call %q has no verdict (%q)", ErrDecision, d.ID, d.Verdict)
}

// decide applies a decision to the call i of t: a denial answers it,
// traced by exec.
func (t *openTurn) decide(ctx context.Context, exec *Executor, i int, d Decision) {
	switch d.Verdict {
	case Approved:
		t.pending[i] = false
	case Denied:
		t.answer(ctx, exec, i, toolErrDenied, denialText(d))
	}
}

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
