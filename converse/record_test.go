package converse_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
)

// TestSessionKeepsTimes: a conversation with a Store keeps in its state, for
// each reply, the model call's duration, stop reason and usage. For each call
// it keeps its start and end, truncation and decision. The session file reads
// them back. A restored conversation keeps them and adds its own. A state
// saved before they were kept (testdata/state-v1.json) has none.
func TestSessionKeepsTimes(t *testing.T) {
	send, err := tools.New("send", "Sends.", func(context.Context, struct{}) (string, error) { return "sent", nil },
		func(o *tools.Options) { o.RequireApproval = true })
	require.NoError(t, err)
	reg := echoTool(t, nil)
	require.NoError(t, reg.Add(send))
	_, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "e1", Name: "echo", Input: map[string]any{"text": strings.Repeat("x", 40)}},
			bedrocktest.Call{ID: "m1", Name: "send", Input: map[string]any{}}),
		bedrocktest.Text("done"),
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "e2", Name: "echo", Input: map[string]any{"text": "y"}}),
		bedrocktest.Text("again"),
	))
	store := filestore.Store{Dir: t.TempDir()}
	opts := func(o *converse.Options) {
		o.Session, o.Tools.MaxOutput = &converse.Session{Store: store, ID: "s"}, 10
		o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
			return call.Deny("the test", "no"), nil
		}
	}
	c := converse.New(client, claude, reg, opts)
	_, err = c.Send(context.Background(), "go")
	require.NoError(t, err)

	st, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	require.Len(t, st.Messages, 4)
	assertSameJSON(t, c.State(), st)
	require.Len(t, st.Turns, 2, "one record a reply")
	first := st.Turns[1]
	assert.Equal(t, types.StopReasonToolUse, first.StopReason)
	assert.Positive(t, first.Duration)
	assert.False(t, first.End.IsZero())
	assert.Positive(t, first.Usage.TotalTokens)
	echo := first.Calls["e1"]
	assert.False(t, echo.Start.IsZero())
	assert.False(t, echo.End.Before(echo.Start), "ends after it starts")
	assert.True(t, echo.Truncated)
	assert.Equal(t, converse.CallRecord{Verdict: converse.Denied, By: "the test"}, first.Calls["m1"], "denied: never run")
	assert.Equal(t, types.StopReasonEndTurn, st.Turns[3].StopReason)

	r, err := converse.Restore(client, reg, st, opts)
	require.NoError(t, err)
	_, err = r.Send(context.Background(), "more")
	require.NoError(t, err)
	again, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	assertSameJSON(t, r.State(), again)
	assert.Len(t, again.Turns, 4, "the restored records and the new ones")
	assert.Contains(t, again.Turns[5].Calls, "e2")

	old, err := os.ReadFile("testdata/state-v1.json")
	require.NoError(t, err)
	var v1 converse.State
	require.NoError(t, json.Unmarshal(old, &v1))
	assert.Nil(t, v1.Turns)
}

// TestTurnRecordsForm: the records are an optional "turns" field of the
// version 1 form (testdata/state-v1-turns.json; -update writes it again),
// which readers of before ignore, as they ignore every unknown field.
func TestTurnRecordsForm(t *testing.T) {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	st := textState("go", "done")
	st.Turns = map[int]converse.TurnRecord{1: {
		End: at, Duration: 1500 * time.Millisecond, StopReason: types.StopReasonEndTurn,
		Usage: converse.Usage{InputTokens: 20, OutputTokens: 10, TotalTokens: 30},
		Calls: map[string]converse.CallRecord{"t1": {Start: at.Add(-time.Second), End: at, Truncated: true, Verdict: converse.Approved, By: "the user"}},
	}}
	got, err := json.MarshalIndent(st, "", "  ")
	require.NoError(t, err)
	const golden = "testdata/state-v1-turns.json"
	if *update {
		require.NoError(t, os.WriteFile(golden, append(got, '\n'), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
	var back converse.State
	require.NoError(t, json.Unmarshal(want, &back))
	assertSameJSON(t, st, &back)
	var before struct { // the fields of version 1 as read before records were kept
		Version  int             `json:"version"`
		Messages json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(want, &before))
	assert.Equal(t, converse.StateVersion, before.Version)
}

func assertSameJSON(t *testing.T, want, got *converse.State) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, string(w), string(g))
}
