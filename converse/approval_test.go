package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// stepAndSend asks for a step, which needs no approval, and a send, which
// does, in one turn.
func stepAndSend() []*bedrocktest.Reply {
	return []*bedrocktest.Reply{
		bedrocktest.ToolUse("Let me send it.",
			bedrocktest.Call{ID: "s1", Name: "step", Input: map[string]any{"n": 1}},
			bedrocktest.Call{ID: "m1", Name: "send", Input: map[string]any{"n": 2}}),
		bedrocktest.Text("done"),
	}
}

func TestApproveInProcess(t *testing.T) {
	tests := []struct {
		name     string
		decision converse.Decision
		wantRuns map[string]int
		wantText string // in the second request
	}{
		{"approved", converse.Call{}.Approve(), map[string]int{"s1": 1, "m1": 1}, `\"sent\"`},
		{"denied", converse.Call{}.Deny("the user", "too risky"), map[string]int{"s1": 1}, "Error: the call was denied by the user: too risky"},
		{"denied without words", converse.Decision{Verdict: converse.Denied}, map[string]int{"s1": 1}, "Error: the call was denied by the approver: no reason given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs runCounter
			srv, client := serve(t, bedrocktest.Script(stepAndSend()...))
			var events []converse.Event
			c := converse.New(client, claude, countingTools(t, &runs, ""), func(o *converse.Options) {
				o.Approver = func(ctx context.Context, call converse.Call) (converse.Decision, error) {
					assert.Equal(t, converse.Call{ID: "m1", Tool: "send", Input: json.RawMessage(`{"n":2}`)}, call)
					return tt.decision, nil
				}
				o.OnEvent = func(ev converse.Event) {
					switch ev.(type) {
					case converse.ApprovalRequested, converse.ApprovalDecided:
						events = append(events, ev)
					}
				}
			})
			res, err := c.Send(context.Background(), "send it")
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text)
			assert.Equal(t, tt.wantRuns, runs.snapshot())
			assert.Contains(t, string(srv.Requests()[1].Body), tt.wantText)
			require.Len(t, events, 2)
			assert.Equal(t, tt.decision.Verdict, events[1].(converse.ApprovalDecided).Decision.Verdict)
		})
	}
}

func TestApproverErrorLeavesCallsPending(t *testing.T) {
	var runs runCounter
	_, client := serve(t, bedrocktest.Script(stepAndSend()...))
	boom := errors.New("no terminal")
	c := converse.New(client, claude, countingTools(t, &runs, ""), func(o *converse.Options) {
		o.Approver = func(context.Context, converse.Call) (converse.Decision, error) { return converse.Decision{}, boom }
	})
	_, err := c.Send(context.Background(), "send it")
	require.ErrorIs(t, err, boom)
	assert.Empty(t, runs.snapshot(), "nothing ran")
	res, err := c.Resume(context.Background(), converse.Call{ID: "m1"}.Approve())
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
	assert.Equal(t, map[string]int{"s1": 1, "m1": 1}, runs.snapshot())
}

// TestPauseAndResumeInAnotherProcess pauses on the call that needs
// approval, marshals the state, and resumes it in a fresh Conversation with
// a decision: the step ran once, before the pause; the send runs only if
// approved.
func TestPauseAndResumeInAnotherProcess(t *testing.T) {
	for _, approve := range []bool{true, false} {
		name := "denied"
		if approve {
			name = "approved"
		}
		t.Run(name, func(t *testing.T) {
			var runs runCounter
			reg := countingTools(t, &runs, "")
			srv, client := serve(t, bedrocktest.Script(stepAndSend()...))
			c := converse.New(client, claude, reg)
			res, err := c.Send(context.Background(), "send it")
			var paused *converse.PausedError
			require.ErrorAs(t, err, &paused)
			require.ErrorIs(t, err, converse.ErrPaused)
			assert.Equal(t, []converse.Call{{ID: "m1", Tool: "send", Input: json.RawMessage(`{"n":2}`)}}, paused.Pending)
			assert.Equal(t, 1, res.Turns)
			assert.Equal(t, map[string]int{"s1": 1}, runs.snapshot(), "the call without approval ran before the pause")
			_, err = c.Send(context.Background(), "hello?")
			require.ErrorIs(t, err, converse.ErrPaused)

			b, err := json.Marshal(c.State())
			require.NoError(t, err)
			var st converse.State
			require.NoError(t, json.Unmarshal(b, &st))
			checkState(t, &st, reg)
			fresh, err := converse.Restore(client, reg, &st)
			require.NoError(t, err)

			for _, bad := range [][]converse.Decision{
				nil,
				{converse.Call{ID: "s1"}.Approve()},
				{converse.Call{ID: "m1"}.Approve(), converse.Call{ID: "zz"}.Approve()},
				{converse.Call{ID: "m1"}.Approve(), converse.Call{ID: "m1"}.Deny("", "")},
				{{ID: "m1"}},
				{{ID: "m1", Verdict: converse.Paused}},
			} {
				_, err := fresh.Resume(context.Background(), bad...)
				require.ErrorIs(t, err, converse.ErrDecision, "%v", bad)
			}
			assert.Equal(t, map[string]int{"s1": 1}, runs.snapshot(), "no bad decision ran anything")

			decision := converse.Call{ID: "m1"}.Deny("the reviewer", "not today")
			if approve {
				decision = converse.Call{ID: "m1"}.Approve()
			}
			res, err = fresh.Resume(context.Background(), decision)
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text)
			last := string(srv.Requests()[1].Body)
			if approve {
				assert.Equal(t, map[string]int{"s1": 1, "m1": 1}, runs.snapshot())
				assert.Contains(t, last, `\"sent\"`)
			} else {
				assert.Equal(t, map[string]int{"s1": 1}, runs.snapshot())
				assert.Contains(t, last, "Error: the call was denied by the reviewer: not today")
			}
			assertValid(t, fresh, claude)
		})
	}
}

// TestApprovalPolicyByInput: the policy hook asks for approval by input.
func TestApprovalPolicyByInput(t *testing.T) {
	var runs runCounter
	_, client := serve(t, bedrocktest.Script(bedrocktest.ToolUse("",
		bedrocktest.Call{ID: "small", Name: "step", Input: map[string]any{"n": 1}},
		bedrocktest.Call{ID: "big", Name: "step", Input: map[string]any{"n": 1000}})))
	c := converse.New(client, claude, countingTools(t, &runs, ""), func(o *converse.Options) {
		o.ApprovalPolicy = func(call converse.Call) bool {
			var in stepIn
			return json.Unmarshal(call.Input, &in) != nil || in.N > 100
		}
	})
	_, err := c.Send(context.Background(), "go")
	var paused *converse.PausedError
	require.ErrorAs(t, err, &paused)
	require.Len(t, paused.Pending, 1)
	assert.Equal(t, "big", paused.Pending[0].ID)
	assert.Equal(t, map[string]int{"small": 1}, runs.snapshot())
}

// TestStateGolden pins the JSON form of a paused state, version 1, and
// resumes the checked-in file to the end. Run with -update to write it
// anew.
func TestStateGolden(t *testing.T) {
	golden := filepath.Join("testdata", "state-v1.json")
	var runs runCounter
	reg := countingTools(t, &runs, "")
	if *update {
		_, client := serve(t, bedrocktest.Script(stepAndSend()...))
		c := converse.New(client, claude, countingTools(t, new(runCounter), ""))
		_, err := c.Send(context.Background(), "send it")
		require.ErrorIs(t, err, converse.ErrPaused)
		b, err := json.MarshalIndent(c.State(), "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(golden, append(b, '\n'), 0o644))
	}
	b, err := os.ReadFile(golden)
	require.NoError(t, err)
	var st converse.State
	require.NoError(t, json.Unmarshal(b, &st))
	again, err := json.MarshalIndent(&st, "", "  ")
	require.NoError(t, err)
	assert.JSONEq(t, string(b), string(again), "the format reads back unchanged")
	assert.Equal(t, claude, st.ModelID)
	assert.Len(t, st.Messages, 2)
	assert.Equal(t, converse.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}, st.Usage)

	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("done")))
	c, err := converse.Restore(client, reg, &st)
	require.NoError(t, err)
	res, err := c.Resume(context.Background(), converse.Call{ID: "m1"}.Approve())
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
	assert.Equal(t, map[string]int{"m1": 1}, runs.snapshot(), "only the approved call runs: the other's result was saved")
	assert.Contains(t, string(srv.Requests()[0].Body), `"text":"2"`, "the saved result of the step is sent")
}

func TestRestoreRejectsBadStates(t *testing.T) {
	reg := countingTools(t, new(runCounter), "")
	tests := map[string]string{
		"version":      `{"version": 2, "modelId": "m", "messages": []}`,
		"not an array": `{"version": 1, "modelId": "m", "messages": {}}`,
		"bad position": `{"version": 1, "modelId": "m", "messages": [], "openTurn": {"results": [], "answered": [3], "pending": [], "started": false}}`,
		"not json":     `{`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			var st converse.State
			require.Error(t, json.Unmarshal([]byte(in), &st))
		})
	}
	restore := map[string]string{
		"no model":              `{"version": 1, "modelId": "", "messages": []}`,
		"starts with the model": `{"version": 1, "modelId": "m", "messages": [{"role": "assistant", "content": [{"text": "hi"}]}]}`,
		"pending without turn":  `{"version": 1, "modelId": "m", "messages": [{"role": "user", "content": [{"text": "hi"}]}], "openTurn": {"results": [], "answered": [], "pending": [{"toolUseId": "x", "name": "send", "input": {}}], "started": false}}`,
	}
	for name, in := range restore {
		t.Run(name, func(t *testing.T) {
			var st converse.State
			require.NoError(t, json.Unmarshal([]byte(in), &st))
			_, err := converse.Restore(nil, reg, &st)
			require.ErrorContains(t, err, "converse: restore: ")
		})
	}
}
