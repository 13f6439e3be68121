package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestFallbackModel: -fallback-model, repeatable, is tried in order when
// the model is throttled (after the SDK's retries, here one attempt), -v
// says so once, and the next turn keeps to the fallback that answered.
func TestFallbackModel(t *testing.T) {
	const second, third = "us.anthropic.claude-3-5-haiku-20241022-v1:0", "us.amazon.nova-pro-v1:0"
	h := multiply()
	srv := newServer(t, bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		if aws.ToString(req.ModelId) != third {
			return nil, bedrocktest.Throttling()
		}
		return h.ServeConverse(ctx, req)
	}))
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-v", "-fallback-model", second, "-fallback-model", third, "6 times 7?")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Let me work that out.\n6 × 7 = 42.\n", out.stdout)
	assert.Contains(t, out.stderr, "· turn 1: model "+defaultModel+" failed (")
	assert.Contains(t, out.stderr, "; trying "+third+"\n")
	assert.Equal(t, 1, strings.Count(out.stderr, "; trying "+third), "each fallback said once")
	assert.NotContains(t, out.stderr, "trying a fallback model", "not said again by a log record")
	var models []string
	for _, req := range srv.Requests() {
		models = append(models, aws.ToString(req.ModelId))
	}
	assert.Equal(t, []string{defaultModel, second, third, third}, models, "the next turn keeps to the fallback that answered")
}

// TestStopAfterTool: -stop-after-tool ends the prompt after the turn in
// which the tool's call was answered: exit 0, that turn's text printed, no
// further model call.
func TestStopAfterTool(t *testing.T) {
	srv := newServer(t, multiply())
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-stop-after-tool", "calculator", "6 times 7?")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Let me work that out.\n", out.stdout)
	assert.Len(t, srv.Requests(), 1)
}

// TestStopAfterToolSession: with -session, the task -stop-after-tool
// stopped is not resumed by the next run's prompt: that prompt is the next
// request's last message, after the stopped turn's results. A run without
// a prompt resumes the stopped task instead.
func TestStopAfterToolSession(t *testing.T) {
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("Let me work that out.", bedrocktest.Call{ID: "m1", Name: "calculator", Input: map[string]any{"a": 6, "b": 7, "operation": "multiply"}}),
		bedrocktest.Text("Hello."),
		bedrocktest.ToolUse("Again.", bedrocktest.Call{ID: "m2", Name: "calculator", Input: map[string]any{"a": 6, "b": 8, "operation": "multiply"}}),
		bedrocktest.Text("48."),
	))
	session := filepath.Join(t.TempDir(), "s.json")
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-session", session, "-stop-after-tool", "calculator", "6 times 7?")
	require.Equal(t, 0, out.code, out.stderr)
	out = runInProcess(t, nil, "-endpoint", srv.URL, "-session", session, "Hi.")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Hello.\n", out.stdout)
	reqs := srv.Requests()
	require.Len(t, reqs, 2, "no model call of the stopped task before the prompt")
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Len(t, last.Content, 2, "the stopped turn's result, then the prompt")
	assert.Equal(t, "Hi.", last.Content[1].(*types.ContentBlockMemberText).Value)

	out = runInProcess(t, nil, "-endpoint", srv.URL, "-session", session, "-stop-after-tool", "calculator", "Multiply 6 by 8.")
	require.Equal(t, 0, out.code, out.stderr)
	out = runInProcess(t, nil, "-endpoint", srv.URL, "-session", session)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "48.\n", out.stdout, "a run without a prompt resumes the stopped task")
}

// TestStopAfterUnknownTool: a -stop-after-tool that names no tool is a
// usage error before any model call, not a flag that never acts.
func TestStopAfterUnknownTool(t *testing.T) {
	srv := newServer(t, multiply())
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-stop-after-tool", "nosuch", "6 times 7?")
	assert.Equal(t, 2, out.code, out.stderr)
	assert.Equal(t, "converse: -stop-after-tool nosuch: no such tool; the tools are get_current_datetime, calculator (converse tools lists them)\n", out.stderr)
	assert.Empty(t, srv.Requests())
}
