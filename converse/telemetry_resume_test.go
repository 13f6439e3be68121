package converse_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// assertUnder requires each span to be a child of parent.
func assertUnder(t *testing.T, parent sdktrace.ReadOnlySpan, spans ...sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, s := range spans {
		assert.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID(), "%s under %s", s.Name(), parent.Name())
	}
}

// assertFailed requires s to have failed with errType.
func assertFailed(t *testing.T, s sdktrace.ReadOnlySpan, errType string) {
	t.Helper()
	assert.Equal(t, codes.Error, s.Status().Code, s.Name())
	assert.Equal(t, errType, attrs(s)["error.type"].AsString(), s.Name())
}

// TestTelemetryDeniedInProcess: a call Options.Approver denies never runs,
// but has its execute_tool span under the Send's, failed as denied, with
// the denial as its result when content is recorded.
func TestTelemetryDeniedInProcess(t *testing.T) {
	tr := newTraced(t)
	var runs runCounter
	_, client := serve(t, bedrocktest.Script(stepAndSend()...))
	_, err := converse.New(client, claude, countingTools(t, &runs, ""), tr.options,
		func(o *converse.Options) {
			o.Telemetry.RecordContent = true
			o.Approver = func(context.Context, converse.Call) (converse.Decision, error) {
				return converse.Call{}.Deny("the user", "too risky"), nil
			}
		}).Send(context.Background(), "send it")

	require.NoError(t, err)
	assert.Equal(t, map[string]int{"s1": 1}, runs.snapshot())

	send := tr.one(t, "invoke_agent")
	assert.Equal(t, codes.Unset, send.Status().Code)
	step, denied := tr.one(t, "execute_tool step"), tr.one(t, "execute_tool send")
	assertUnder(t, send, append(tr.named("chat "+claude), step, denied)...)
	assert.Equal(t, codes.Unset, step.Status().Code)
	assertFailed(t, denied, "denied")
	a := attrs(denied)
	assert.Equal(t, "m1", a["gen_ai.tool.call.id"].AsString())
	assert.Equal(t, "Error: the call was denied by the user: too risky", a["gen_ai.tool.call.result"].AsString())
}

// TestTelemetryPausedThenDenied: a Send that pauses and the Resume that denies
// the pending call are two invoke_agent spans. The call that ran before the
// pause is under the first. The denied call and the model call answering it
// are under the second.
func TestTelemetryPausedThenDenied(t *testing.T) {
	tr := newTraced(t)
	var runs runCounter
	srv, client := serve(t, bedrocktest.Script(stepAndSend()...))
	c := converse.New(client, claude, countingTools(t, &runs, ""), tr.options)
	_, err := c.Send(context.Background(), "send it")
	require.ErrorIs(t, err, converse.ErrPaused)
	res, err := c.Resume(context.Background(), converse.Call{ID: "m1"}.Deny("the reviewer", "not today"))
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
	assert.Contains(t, string(srv.Requests()[1].Body), "Error: the call was denied by the reviewer: not today")

	agents := tr.named("invoke_agent")
	require.Len(t, agents, 2)
	sent, resumed := agents[0], agents[1]
	assertFailed(t, sent, "paused")
	assert.Equal(t, codes.Unset, resumed.Status().Code)
	assert.NotEqual(t, sent.SpanContext().TraceID(), resumed.SpanContext().TraceID(), "no caller span: each is a root of its own trace")
	chats := tr.named("chat " + claude)
	require.Len(t, chats, 2)
	assertUnder(t, sent, chats[0], tr.one(t, "execute_tool step"))
	denied := tr.one(t, "execute_tool send")
	assertUnder(t, resumed, chats[1], denied)
	assertFailed(t, denied, "denied")
	_, content := attrs(denied)["gen_ai.tool.call.result"]
	assert.False(t, content, "content is recorded only when opted in")
}

// TestTelemetryDeniedDuplicate: two calls sharing a toolUseId are decided
// together; when denied, the repeat is answered and traced as a duplicate,
// as the executor answers one.
func TestTelemetryDeniedDuplicate(t *testing.T) {
	tr := newTraced(t)
	var runs runCounter
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("Sending twice.",
			bedrocktest.Call{ID: "m1", Name: "send", Input: map[string]any{"n": 1}},
			bedrocktest.Call{ID: "m1", Name: "send", Input: map[string]any{"n": 2}}),
		bedrocktest.Text("done"),
	), func(o *bedrocktest.Options) { o.Lenient = true })
	c := converse.New(client, claude, countingTools(t, &runs, ""), tr.options)
	_, err := c.Send(context.Background(), "send it")
	require.ErrorIs(t, err, converse.ErrPaused)
	_, err = c.Resume(context.Background(), converse.Call{ID: "m1"}.Deny("", ""))
	require.NoError(t, err)
	assert.Empty(t, runs.snapshot())
	body := string(srv.Requests()[1].Body)
	assert.Contains(t, body, "Error: the call was denied by the approver: no reason given")
	assert.Contains(t, body, `Error: duplicate toolUseId: \"m1\" was already answered in this turn`)

	calls := tr.named("execute_tool send")
	require.Len(t, calls, 2)
	resumed := tr.named("invoke_agent")[1]
	assertUnder(t, resumed, calls...)
	assertFailed(t, calls[0], "denied")
	assertFailed(t, calls[1], "duplicate_id")
}

// TestTelemetryInterruptedOnResume resumes a conversation that stopped while
// its call ran (a crash, as saved by a Store). The call is answered as
// interrupted, never run. It is traced so under the Resume's span, with the
// model call that follows.
func TestTelemetryInterruptedOnResume(t *testing.T) {
	tr := newTraced(t)
	var runs runCounter
	reg := countingTools(t, &runs, "")
	var st converse.State
	require.NoError(t, json.Unmarshal([]byte(`{"version": 1, "modelId": "`+claude+`", "messages": [
		{"role": "user", "content": [{"text": "step"}]},
		{"role": "assistant", "content": [{"toolUse": {"toolUseId": "s1", "name": "step", "input": {"n": 1}}}]}],
		"openTurn": {"results": [], "answered": [], "pending": [], "started": true}}`), &st))
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("done")))
	c, err := converse.Restore(client, reg, &st, tr.options)
	require.NoError(t, err)
	_, err = c.Resume(context.Background())
	require.NoError(t, err)
	assert.Empty(t, runs.snapshot(), "a call cut off is never run again")
	assert.Contains(t, string(srv.Requests()[0].Body), "Error: the call was interrupted before it returned")

	resumed := tr.one(t, "invoke_agent")
	call := tr.one(t, "execute_tool step")
	assertUnder(t, resumed, call, tr.one(t, "chat "+claude))
	assertFailed(t, call, "interrupted")
	assert.Equal(t, "s1", attrs(call)["gen_ai.tool.call.id"].AsString())
}

// TestTelemetryNothingToResumeHasNoSpan: a Resume that finds nothing to
// resume, empty or after a final answer, as a caller tries before every
// Send, leaves no span; only the Send has one.
func TestTelemetryNothingToResumeHasNoSpan(t *testing.T) {
	tr := newTraced(t)
	_, client := serve(t, bedrocktest.Script(bedrocktest.Text("hello")))
	c := converse.New(client, claude, nil, tr.options)
	_, err := c.Resume(context.Background())
	require.ErrorIs(t, err, converse.ErrNothingToResume)
	assert.Empty(t, tr.named("invoke_agent"), "empty")
	_, err = c.Send(context.Background(), "hi")
	require.NoError(t, err)
	_, err = c.Resume(context.Background())
	require.ErrorIs(t, err, converse.ErrNothingToResume)
	send := tr.one(t, "invoke_agent")
	assert.Equal(t, codes.Unset, send.Status().Code)
}
