package lambdatool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/lambdatool"
)

// handlerOutput is what the test handler answers.
type handlerOutput struct {
	Input  json.RawMessage   `json:"input"`
	Custom map[string]string `json:"custom"`
	Result string            `json:"result"`
}

// The tool invokes a real aws-lambda-go function in the emulator; what the
// function does decides the call's result.
func TestEmulator(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		input   string
		want    func(t *testing.T, out handlerOutput)
		wantErr []string // in the error's text
		notErr  []string // never in it
	}{{
		name:  "success with the client context",
		input: `{"mode": "echo", "text": "hello"}`,
		want: func(t *testing.T, out handlerOutput) {
			assert.Equal(t, "hello", out.Result)
			assert.JSONEq(t, `{"mode": "echo", "text": "hello"}`, string(out.Input))
			assert.Equal(t, map[string]string{
				"toolUseId":                "tooluse_emu1",
				"toolName":                 "handler",
				"bedrockAgentCoreToolName": "handler",
				"traceparent":              traceparent,
			}, out.Custom)
		},
	}, {
		name:  "function error",
		input: `{"mode": "error", "text": "the disk is full"}`,
		// The emulator answers 200 with the error object and no
		// X-Amz-Function-Error header: the tool cannot tell it from a
		// result (stub_test.go covers Lambda's answer).
		want: func(t *testing.T, out handlerOutput) {
			assert.Empty(t, out.Result)
		},
	}, {
		// The emulator answers a panic with a 502 holding the error object,
		// which the SDK retries and reads as an unknown error (stub_test.go
		// covers Lambda's answer, a function error).
		name:    "panic",
		input:   `{"mode": "panic", "text": "index out of range"}`,
		wantErr: []string{"the function could not be invoked: UnknownError"},
		notErr:  []string{"stackTrace", "lambdaPanicResponse", "main.go"},
	}, {
		name:    "function timeout",
		env:     []string{"AWS_LAMBDA_FUNCTION_TIMEOUT=1"},
		input:   `{"mode": "block"}`,
		wantErr: []string{"not JSON", "Task timed out after 1.00 seconds"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emu := startEmulator(t, tt.env...)
			tool, err := lambdatool.NewRaw(emu.client(),
				lambdatool.Function{Name: emulatorFunction, TraceContext: propagate},
				"handler", "Runs the test handler.", modeSchema)
			require.NoError(t, err)
			v, err := tool.Call(tools.WithCallID(context.Background(), "tooluse_emu1"), json.RawMessage(tt.input))
			if tt.wantErr != nil {
				require.Error(t, err)
				for _, s := range tt.wantErr {
					assert.Contains(t, err.Error(), s)
				}
				for _, s := range tt.notErr {
					assert.NotContains(t, err.Error(), s)
				}
				return
			}
			require.NoError(t, err)
			raw, ok := v.(json.RawMessage)
			require.True(t, ok, "output %T", v)
			var out handlerOutput
			require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
			tt.want(t, out)
		})
	}
}

// The emulator's function error is the error object, stack trace aside.
func TestEmulatorFunctionErrorPayload(t *testing.T) {
	emu := startEmulator(t)
	tool, err := lambdatool.NewRaw(emu.client(), lambdatool.Function{Name: emulatorFunction}, "handler", "Runs the test handler.", modeSchema)
	require.NoError(t, err)
	v, err := tool.Call(context.Background(), json.RawMessage(`{"mode": "error", "text": "the disk is full"}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"errorMessage": "the disk is full", "errorType": "errorString"}`, string(v.(json.RawMessage)))
}

// A typed tool sends its decoded input, encoded again, as the payload.
func TestEmulatorTyped(t *testing.T) {
	emu := startEmulator(t)
	type in struct {
		Mode string `json:"mode"`
		Text string `json:"text,omitempty"`
	}
	tool, err := lambdatool.New[in](emu.client(), lambdatool.Function{Name: emulatorFunction, Qualifier: "live"}, "handler", "Runs the test handler.")
	require.NoError(t, err)
	_, err = tool.Call(context.Background(), json.RawMessage(`{"text": "hi"}`))
	require.ErrorIs(t, err, tools.ErrInvalidInput, "validated before the invocation")
	v, err := tool.Call(context.Background(), json.RawMessage(`{"mode": "echo", "text": "hi"}`))
	require.NoError(t, err)
	var out handlerOutput
	require.NoError(t, json.Unmarshal(v.(json.RawMessage), &out))
	assert.Equal(t, "hi", out.Result)
}

// The executor's timeout and a cancelled conversation end the Invoke: the
// call's context cancels the request.
func TestEmulatorCallEnds(t *testing.T) {
	t.Run("the executor's timeout", func(t *testing.T) {
		emu := startEmulator(t)
		tool, err := lambdatool.NewRaw(emu.client(), lambdatool.Function{Name: emulatorFunction}, "handler", "Runs the test handler.",
			modeSchema, func(o *tools.Options) { o.Timeout = 50 * time.Millisecond })
		require.NoError(t, err)
		reg, err := tools.NewRegistry(tool)
		require.NoError(t, err)
		e := &converse.Executor{Registry: reg}
		got := toolResults(t, e.Execute(context.Background(), []types.ContentBlock{toolUse("tooluse_1", "handler", `{"mode": "block"}`)}))
		assert.Equal(t, []string{`Error: tool "handler" timed out after 50ms: context deadline exceeded`}, got)
	})
	t.Run("cancelled", func(t *testing.T) {
		emu := startEmulator(t)
		tool, err := lambdatool.NewRaw(emu.client(), lambdatool.Function{Name: emulatorFunction}, "handler", "Runs the test handler.", modeSchema)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := tool.Call(ctx, json.RawMessage(`{"mode": "block"}`))
			done <- err
		}()
		cancel()
		err = <-done
		require.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "the function may still run")
	})
}

// Calls run at once, each in an emulator of its own, as an emulator runs
// one invocation at a time. Each function waits at a barrier until both
// have arrived. So the calls return only if they overlap.
func TestEmulatorConcurrentCalls(t *testing.T) {
	barrier := t.TempDir()
	env := []string{"BARRIER_DIR=" + barrier, "AWS_LAMBDA_FUNCTION_TIMEOUT=60"}
	var ts []*tools.Tool
	var calls []types.ContentBlock
	for _, name := range []string{"slot_a", "slot_b"} {
		emu := startEmulator(t, env...)
		tool, err := lambdatool.NewRaw(emu.client(), lambdatool.Function{Name: emulatorFunction}, name, "Waits for the other slot.", modeSchema)
		require.NoError(t, err)
		ts = append(ts, tool)
		calls = append(calls, toolUse("tooluse_"+name, name, `{"mode": "barrier", "n": 2}`))
	}
	reg, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	e := &converse.Executor{Registry: reg, ToolOptions: converse.ToolOptions{Concurrency: 2, Timeout: 30 * time.Second}}
	for _, text := range toolResults(t, e.Execute(context.Background(), calls)) {
		assert.Contains(t, text, `"result":"all arrived"`)
	}
}

// A whole conversation through bedrocktest: the model's call runs in the
// emulator, and the function's response goes back to the model.
func TestEmulatorConversation(t *testing.T) {
	emu := startEmulator(t)
	tool, err := lambdatool.NewRaw(emu.client(), lambdatool.Function{Name: emulatorFunction}, "handler", "Runs the test handler.", modeSchema)
	require.NoError(t, err)
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "tooluse_conv", Name: "handler", Input: map[string]any{"mode": "echo", "text": "from the model"}}),
		bedrocktest.Text("The function said: from the model."),
	))
	defer srv.Close()
	conv := converse.New(srv.Client(), "test-model", reg)
	res, err := conv.Send(context.Background(), "Run the handler.")
	require.NoError(t, err)
	assert.Equal(t, "The function said: from the model.", res.Text)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Len(t, last.Content, 1)
	tr, ok := last.Content[0].(*types.ContentBlockMemberToolResult)
	require.True(t, ok, "%T", last.Content[0])
	assert.Equal(t, "tooluse_conv", *tr.Value.ToolUseId)
	text := tr.Value.Content[0].(*types.ToolResultContentBlockMemberText).Value
	var out handlerOutput
	require.NoError(t, json.Unmarshal([]byte(text), &out), text)
	assert.Equal(t, "from the model", out.Result)
	assert.Equal(t, "tooluse_conv", out.Custom["toolUseId"], "the executor's toolUseId reached the function")
}

func toolUse(id, name, input string) types.ContentBlock {
	var doc map[string]any
	if err := json.Unmarshal([]byte(input), &doc); err != nil {
		panic(err)
	}
	return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
		ToolUseId: &id, Name: &name, Input: document.NewLazyDocument(doc),
	}}
}

// toolResults is the text of each toolResult block.
func toolResults(t *testing.T, blocks []types.ContentBlock) []string {
	t.Helper()
	var out []string
	for _, b := range blocks {
		tr, ok := b.(*types.ContentBlockMemberToolResult)
		require.True(t, ok, "%T", b)
		require.NotEmpty(t, tr.Value.Content)
		text, ok := tr.Value.Content[0].(*types.ToolResultContentBlockMemberText)
		require.True(t, ok, "%T", tr.Value.Content[0])
		out = append(out, strings.TrimSpace(text.Value))
	}
	return out
}
