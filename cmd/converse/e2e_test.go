package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

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
	if out.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", out.code, out.stderr)
	}
	if want := "Let me work that out.\n6 × 7 = 42.\n"; out.stdout != want {
		t.Errorf("stdout = %q, want only the text %q", out.stdout, want)
	}
	return out, srv
}

func TestToolUseConversation(t *testing.T) {
	t.Parallel()
	out, srv := runMultiply(t, "What", "is", "6 times 7?")
	if out.stderr != "" {
		t.Errorf("stderr without -v = %q, want nothing", out.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	first := reqs[0]
	if first.ModelID != defaultModel || first.Operation != recording.OpConverse {
		t.Errorf("first call: %s %s, want Converse %s", first.Operation, first.ModelID, defaultModel)
	}
	if got := first.Messages[0].Content[0].(*types.ContentBlockMemberText).Value; got != "What is 6 times 7?" {
		t.Errorf("prompt = %q, want the arguments joined by spaces", got)
	}
	if got := toolNames(first); !slices.Equal(got, []string{"get_current_datetime", "calculator"}) {
		t.Errorf("tools = %v, want the built-ins", got)
	}
	res := toolResults(t, reqs[1])["tooluse_calc1"]
	if resultText(res) != "42" || res.Status != types.ToolResultStatusSuccess {
		t.Errorf("calculator result = %q (%s), want 42 (success)", resultText(res), res.Status)
	}
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
			if req.ModelID != "us.amazon.nova-pro-v1:0" {
				t.Errorf("model = %s", req.ModelID)
			}
		}},
		{"BEDROCK_MODEL_ID", []string{"BEDROCK_MODEL_ID=eu.anthropic.claude-3-7-sonnet-20250219-v1:0"}, "", nil, func(t *testing.T, req *bedrocktest.Request) {
			if req.ModelID != "eu.anthropic.claude-3-7-sonnet-20250219-v1:0" {
				t.Errorf("model = %s, want $BEDROCK_MODEL_ID", req.ModelID)
			}
		}},
		{"model over BEDROCK_MODEL_ID", []string{"BEDROCK_MODEL_ID=other"}, "", []string{"-model", "anthropic.claude-3-5-haiku-20241022-v1:0"}, func(t *testing.T, req *bedrocktest.Request) {
			if req.ModelID != "anthropic.claude-3-5-haiku-20241022-v1:0" {
				t.Errorf("model = %s, want -model", req.ModelID)
			}
		}},
		{"system", nil, "", []string{"-system", "Answer in French."}, func(t *testing.T, req *bedrocktest.Request) {
			if len(req.System) != 1 || req.System[0].(*types.SystemContentBlockMemberText).Value != "Answer in French." {
				t.Errorf("system = %#v", req.System)
			}
		}},
		{"inference settings", nil, "", []string{"-max-tokens", "512", "-temperature", "0.25"}, func(t *testing.T, req *bedrocktest.Request) {
			c := req.InferenceConfig
			if c == nil || aws.ToInt32(c.MaxTokens) != 512 || aws.ToFloat32(c.Temperature) != 0.25 {
				t.Errorf("inference config = %+v", c)
			}
		}},
		{"no inference settings", nil, "", nil, func(t *testing.T, req *bedrocktest.Request) {
			if req.InferenceConfig != nil {
				t.Errorf("inference config = %+v, want none", req.InferenceConfig)
			}
		}},
		{"no-builtins", nil, "", []string{"-no-builtins"}, func(t *testing.T, req *bedrocktest.Request) {
			if req.ToolConfig != nil {
				t.Errorf("tools = %v, want none", toolNames(req))
			}
		}},
		{"tools", nil, "", []string{"-tools", manifest}, func(t *testing.T, req *bedrocktest.Request) {
			if got := toolNames(req); !slices.Equal(got, []string{"get_current_datetime", "calculator", "echo"}) {
				t.Errorf("tools = %v", got)
			}
		}},
		{"tools without builtins", nil, "", []string{"-tools", manifest, "-no-builtins"}, func(t *testing.T, req *bedrocktest.Request) {
			if got := toolNames(req); !slices.Equal(got, []string{"echo"}) {
				t.Errorf("tools = %v", got)
			}
		}},
		{"stream", nil, "", []string{"-stream"}, func(t *testing.T, req *bedrocktest.Request) {
			if req.Operation != recording.OpConverseStream {
				t.Errorf("operation = %s, want ConverseStream", req.Operation)
			}
		}},
		{"prompt on stdin", nil, "  a prompt\nof two lines\n", nil, func(t *testing.T, req *bedrocktest.Request) {
			if got := req.Messages[0].Content[0].(*types.ContentBlockMemberText).Value; got != "a prompt\nof two lines" {
				t.Errorf("prompt = %q", got)
			}
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
			if out.code != 0 || out.stdout != "Bonjour.\n" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", out.code, out.stdout, out.stderr)
			}
			tt.check(t, srv.Requests()[0])
		})
	}
}

func TestStreamToolUse(t *testing.T) {
	t.Parallel()
	out, srv := runMultiply(t, "-stream", "-v", "What is 6 times 7?")
	for _, req := range srv.Requests() {
		if req.Operation != recording.OpConverseStream {
			t.Errorf("operation %s, want ConverseStream", req.Operation)
		}
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
	if strings.Contains(out.stderr, fakeKeyID) || strings.Contains(out.stderr, "Signature") {
		t.Errorf("the trace shows credentials:\n%s", out.stderr)
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	srv := newServer(t, multiply())
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-json", "What is 6 times 7?")
	if out.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", out.code, out.stderr)
	}
	var got struct {
		Model      string
		Text       string
		StopReason string
		Turns      int
		Usage      map[string]int
		History    []map[string]any
		Error      *string
	}
	dec := json.NewDecoder(strings.NewReader(out.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON object (%v):\n%s", err, out.stdout)
	}
	if got.Model != defaultModel || got.Text != "6 × 7 = 42." || got.StopReason != "end_turn" || got.Turns != 2 || got.Error != nil {
		t.Errorf("got %+v", got)
	}
	if u := got.Usage; u["inputTokens"] != 20 || u["outputTokens"] != 10 || u["totalTokens"] != 30 {
		t.Errorf("usage = %v, want the sum of two calls", u)
	}
	if len(got.History) != 4 {
		t.Fatalf("history has %d messages, want 4", len(got.History))
	}
	// Wire JSON: the names of the Bedrock API, not of the SDK's Go types.
	mustContain(t, "history", mustJSON(t, got.History),
		`"role":"assistant"`, `"toolUse":{`, `"toolUseId":"tooluse_calc1"`, `"input":{"a":6`, `"toolResult":{`, `"status":"success"`)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeManifest writes a tool manifest into a new directory.
func writeManifest(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
