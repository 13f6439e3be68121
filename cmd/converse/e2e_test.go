package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

// multiply is a model that asks the calculator for 6 × 7, then answers.
func multiply() bedrocktest.Handler {
	return bedrocktest.Script(
		bedrocktest.ToolUse("Let me work that out.", bedrocktest.Call{
			ID: "tooluse_calc1", Name: "calculator", Input: map[string]any{"a": 6, "b": 7, "operation": "multiply"},
		}),
		bedrocktest.Text("6 × 7 = 42."),
	)
}

// runMultiply runs converse with args against the multiply model, and
// checks that it succeeds with the model's text on stdout.
func runMultiply(t *testing.T, args ...string) (outcome, *bedrocktest.Server) {
	t.Helper()
	srv := newServer(t, multiply())
	out := runBinary(t, testEnv(t), nil, append([]string{"-endpoint", srv.URL}, args...)...)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Let me work that out.\n6 × 7 = 42.\n", out.stdout, "only the text")
	return out, srv
}

func TestToolUseConversation(t *testing.T) {
	t.Parallel()
	out, srv := runMultiply(t, "What", "is", "6 times 7?")
	assert.Empty(t, out.stderr, "stderr without -v")
	reqs := srv.Requests()
	require.Len(t, reqs, 2, "model calls")
	first := reqs[0]
	assert.Equal(t, defaultModel, aws.ToString(first.ModelId))
	assert.Equal(t, recording.OpConverse, first.Operation)
	assert.Equal(t, "What is 6 times 7?", first.Messages[0].Content[0].(*types.ContentBlockMemberText).Value, "the arguments joined by spaces")
	assert.Equal(t, []string{"get_current_datetime", "calculator"}, toolNames(first), "the built-ins")
	res := toolResults(t, reqs[1])["tooluse_calc1"]
	assert.Equal(t, "42", resultText(res))
	assert.Equal(t, types.ToolResultStatusSuccess, res.Status)
}

func toolNames(req *bedrocktest.Request) []string {
	if req.ToolConfig == nil {
		return nil
	}
	var names []string
	for _, tool := range req.ToolConfig.Tools {
		names = append(names, aws.ToString(tool.(*types.ToolMemberToolSpec).Value.Name))
	}
	return names
}

// TestFlags checks what each flag changes in the requests that reach
// Bedrock.
func TestFlags(t *testing.T) {
	t.Parallel()
	manifest := writeManifest(t, `{"tools": [{"name": "echo", "description": "Echo the input.",
		"inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
		"command": [`+quote(os.Args[0])+`, "helper-tool", "echo"]}]}`)
	tests := []struct {
		name  string
		env   []string
		stdin string
		args  []string
		check func(t *testing.T, req *bedrocktest.Request)
	}{
		{"model", nil, "", []string{"-model", "us.amazon.nova-pro-v1:0"}, func(t *testing.T, req *bedrocktest.Request) {
			assert.Equal(t, "us.amazon.nova-pro-v1:0", aws.ToString(req.ModelId))
		}},
		{"BEDROCK_MODEL_ID", []string{"BEDROCK_MODEL_ID=eu.anthropic.claude-3-7-sonnet-20250219-v1:0"}, "", nil, func(t *testing.T, req *bedrocktest.Request) {
			assert.Equal(t, "eu.anthropic.claude-3-7-sonnet-20250219-v1:0", aws.ToString(req.ModelId), "$BEDROCK_MODEL_ID")
		}},
		{"model over BEDROCK_MODEL_ID", []string{"BEDROCK_MODEL_ID=other"}, "", []string{"-model", "anthropic.claude-3-5-haiku-20241022-v1:0"}, func(t *testing.T, req *bedrocktest.Request) {
			assert.Equal(t, "anthropic.claude-3-5-haiku-20241022-v1:0", aws.ToString(req.ModelId), "-model")
		}},
		{"system", nil, "", []string{"-system", "Answer in French."}, func(t *testing.T, req *bedrocktest.Request) {
			assert.Equal(t, []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Answer in French."}}, req.System)
		}},
		{"inference settings", nil, "", []string{"-max-tokens", "512", "-temperature", "0.25"}, func(t *testing.T, req *bedrocktest.Request) {
			require.NotNil(t, req.InferenceConfig)
			assert.Equal(t, int32(512), aws.ToInt32(req.InferenceConfig.MaxTokens))
			assert.Equal(t, float32(0.25), aws.ToFloat32(req.InferenceConfig.Temperature))
		}},
		{"no inference settings", nil, "", nil, func(t *testing.T, req *bedrocktest.Request) {
			assert.Nil(t, req.InferenceConfig)
		}},
		{"no-builtins", nil, "", []string{"-no-builtins"}, func(t *testing.T, req *bedrocktest.Request) {
			assert.Nil(t, req.ToolConfig, "tools %v", toolNames(req))
		}},
		{"tools", nil, "", []string{"-tools", manifest}, func(t *testing.T, req *bedrocktest.Request) {
			assert.Equal(t, []string{"get_current_datetime", "calculator", "echo"}, toolNames(req))
		}},
		{"tools without builtins", nil, "", []string{"-tools", manifest, "-no-builtins"}, func(t *testing.T, req *bedrocktest.Request) {
			assert.Equal(t, []string{"echo"}, toolNames(req))
		}},
		{"stream", nil, "", []string{"-stream"}, func(t *testing.T, req *bedrocktest.Request) {
			assert.Equal(t, recording.OpConverseStream, req.Operation)
		}},
		{"prompt on stdin", nil, "  a prompt\nof two lines\n", nil, func(t *testing.T, req *bedrocktest.Request) {
			assert.Equal(t, "a prompt\nof two lines", req.Messages[0].Content[0].(*types.ContentBlockMemberText).Value)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Bonjour.")))
			args := append([]string{"-endpoint", srv.URL}, tt.args...)
			if tt.stdin == "" {
				args = append(args, "Hello")
			}
			out := runBinary(t, testEnv(t, tt.env...), strings.NewReader(tt.stdin), args...)
			require.Equal(t, 0, out.code, out.stderr)
			require.Equal(t, "Bonjour.\n", out.stdout)
			tt.check(t, srv.Requests()[0])
		})
	}
}

func TestStreamToolUse(t *testing.T) {
	t.Parallel()
	out, srv := runMultiply(t, "-stream", "-v", "What is 6 times 7?")
	for _, req := range srv.Requests() {
		assert.Equal(t, recording.OpConverseStream, req.Operation)
	}
	mustContain(t, "stderr", out.stderr, "← calculator tooluse_calc1 success")
}

func TestVerboseTrace(t *testing.T) {
	t.Parallel()
	out, _ := runMultiply(t, "-v", "What is 6 times 7?")
	mustContain(t, "stderr", out.stderr,
		"· model "+defaultModel+" in region us-east-1",
		"> What is 6 times 7?",
		`→ calculator tooluse_calc1 {"a":6,"b":7,"operation":"multiply"}`,
		"← calculator tooluse_calc1 success in ",
		": 42\n",
		"· turn 1: tool_use; tokens 10 in, 5 out",
		"· turn 2: end_turn",
	)
	assert.NotContains(t, out.stderr, fakeKeyID, "the trace shows credentials")
	assert.NotContains(t, out.stderr, "Signature", "the trace shows credentials")
}

func TestJSON(t *testing.T) {
	t.Parallel()
	srv := newServer(t, multiply())
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-json", "What is 6 times 7?")
	require.Equal(t, 0, out.code, out.stderr)
	var got struct {
		Model      string
		Text       string
		StopReason string
		Turns      int
		Usage      map[string]int
		CostUSD    *float64 `json:"costUSD"`
		History    []map[string]any
		Error      *string
	}
	dec := json.NewDecoder(strings.NewReader(out.stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&got), out.stdout)
	require.False(t, dec.More(), "stdout is not one JSON object:\n%s", out.stdout)
	assert.Equal(t, defaultModel, got.Model)
	assert.Equal(t, "6 × 7 = 42.", got.Text)
	assert.Equal(t, "end_turn", got.StopReason)
	assert.Equal(t, 2, got.Turns)
	assert.Nil(t, got.Error)
	assert.Equal(t, map[string]int{"inputTokens": 20, "outputTokens": 10, "totalTokens": 30}, got.Usage, "the sum of two calls")
	require.NotNil(t, got.CostUSD)
	assert.InDelta(t, (20*2.2+10*11)/1e6, *got.CostUSD, 1e-12, "at the us. profile's prices")
	require.Len(t, got.History, 4, "messages")
	// Wire JSON: the names of the Bedrock API, not of the SDK's Go types.
	mustContain(t, "history", mustJSON(t, got.History),
		`"role":"assistant"`, `"toolUse":{`, `"toolUseId":"tooluse_calc1"`, `"input":{"a":6`, `"toolResult":{`, `"status":"success"`)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// writeManifest writes a tool manifest into a new directory.
func writeManifest(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tools.json")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
