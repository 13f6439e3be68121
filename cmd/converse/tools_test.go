package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestManifestTools runs manifest tools the way the model asks for them,
// all in one turn: each outcome is a result for the model, and the
// conversation goes on.
func TestManifestTools(t *testing.T) {
	t.Parallel()
	self := quote(os.Args[0])
	mark := filepath.Join(t.TempDir(), "ran")
	schema := `{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}`
	manifest := writeManifest(t, `{"tools": [
		{"name": "echo", "description": "Echo.", "inputSchema": `+schema+`, "command": [`+self+`, "helper-tool", "echo"]},
		{"name": "args", "description": "Arguments.", "command": [`+self+`, "helper-tool", "args", "$HOME", "a b;c", "*"]},
		{"name": "text", "description": "Text.", "command": [`+self+`, "helper-tool", "text"]},
		{"name": "guarded", "description": "Needs text.", "inputSchema": `+schema+`, "command": [`+self+`, "helper-tool", "touch", `+quote(mark)+`]},
		{"name": "fail", "description": "Fails.", "command": [`+self+`, "helper-tool", "fail"]},
		{"name": "hang", "description": "Hangs.", "command": [`+self+`, "helper-tool", "hang"], "timeout": "300ms"},
		{"name": "flood", "description": "Floods.", "command": [`+self+`, "helper-tool", "flood"]}
	]}`)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("",
			bedrocktest.Call{ID: "t_echo", Name: "echo", Input: map[string]any{"text": "hi; rm -rf $HOME"}},
			bedrocktest.Call{ID: "t_args", Name: "args"},
			bedrocktest.Call{ID: "t_text", Name: "text"},
			bedrocktest.Call{ID: "t_guarded", Name: "guarded", Input: map[string]any{"text": 42}},
			bedrocktest.Call{ID: "t_fail", Name: "fail"},
			bedrocktest.Call{ID: "t_hang", Name: "hang"},
			bedrocktest.Call{ID: "t_flood", Name: "flood"},
		),
		bedrocktest.Text("All done."),
	))
	start := time.Now()
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-tools", manifest, "-v", "Try every tool.")
	if out.code != 0 || out.stdout != "All done.\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", out.code, out.stdout, out.stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v: the hanging tool was not stopped at its timeout", d)
	}
	results := toolResults(t, srv.Requests()[1])
	tests := []struct {
		id     string
		status types.ToolResultStatus
		want   []string
	}{
		{"t_echo", types.ToolResultStatusSuccess, []string{`{"text":"hi; rm -rf $HOME"}`}},
		{"t_args", types.ToolResultStatusSuccess, []string{`["$HOME","a b;c","*"]`}},
		{"t_text", types.ToolResultStatusSuccess, []string{`"plain words, not JSON"`}},
		{"t_guarded", types.ToolResultStatusError, []string{"invalid input", "text"}},
		{"t_fail", types.ToolResultStatusError, []string{"exit status 3", "something broke"}},
		{"t_hang", types.ToolResultStatusError, []string{"timed out"}},
		{"t_flood", types.ToolResultStatusError, []string{"wrote more than 1048576 bytes"}},
	}
	for _, tt := range tests {
		r, ok := results[tt.id]
		if !ok {
			t.Errorf("%s: no result", tt.id)
			continue
		}
		text := resultText(r)
		if r.Status != tt.status {
			t.Errorf("%s: status %s, want %s: %s", tt.id, r.Status, tt.status, text)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: result %q does not contain %q", tt.id, text, w)
			}
		}
	}
	if text := resultText(results["t_echo"]); text != `{"text":"hi; rm -rf $HOME"}` {
		t.Errorf("echo result = %q, want the program's JSON as it is", text)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the program of a tool with invalid input was started")
	}
	mustContain(t, "stderr", out.stderr, "← hang t_hang error in ", "← fail t_fail error in ")
}

// TestManifestRelativeCommand runs a program named relative to the
// manifest, whatever the working directory.
func TestManifestRelativeCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := "#!/bin/sh\ncat\n"
	if err := os.WriteFile(filepath.Join(dir, "cat-tool"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "tools.json")
	os.WriteFile(manifest, []byte(`{"tools": [{"name": "cat", "description": "Cat.", "command": ["./cat-tool"]}]}`), 0o644)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "cat", Input: map[string]any{"n": 1}}),
		bedrocktest.Text("ok"),
	))
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "go")
	if out.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", out.code, out.stderr)
	}
	if got := resultText(toolResults(t, srv.Requests()[1])["t1"]); got != `{"n":1}` {
		t.Errorf("result = %q", got)
	}
}

// TestManifestRelativeCommandNotInPATH: with the manifest in the working
// directory, "./cat-tool" is the program beside it, never a same-named
// program in PATH (filepath.Join(".", "./cat-tool") is "cat-tool").
func TestManifestRelativeCommandNotInPATH(t *testing.T) {
	t.Parallel()
	dir, impostor := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "cat-tool"), []byte("#!/bin/sh\ncat\n"), 0o755)
	os.WriteFile(filepath.Join(impostor, "cat-tool"), []byte("#!/bin/sh\necho '\"impostor\"'\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`{"tools": [{"name": "cat", "description": "Cat.", "command": ["./cat-tool"]}]}`), 0o644)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "cat", Input: map[string]any{"n": 1}}),
		bedrocktest.Text("ok"),
	))
	env := testEnv(t, "PATH="+impostor+string(os.PathListSeparator)+os.Getenv("PATH"))
	out := runBinaryIn(t, dir, env, nil, "-endpoint", srv.URL, "-tools", "tools.json", "-no-builtins", "go")
	if out.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", out.code, out.stderr)
	}
	if got := resultText(toolResults(t, srv.Requests()[1])["t1"]); got != `{"n":1}` {
		t.Errorf("result = %q, want the input echoed by the manifest's own cat-tool", got)
	}
}

// TestManifestEnv: a manifest tool's program gets a minimal environment,
// no AWS credentials, and what the manifest's "env" sets and "inheritEnv"
// passes through.
func TestManifestEnv(t *testing.T) {
	t.Parallel()
	manifest := writeManifest(t, `{"tools": [{"name": "env", "description": "Env.",
		"command": [`+quote(os.Args[0])+`, "helper-tool", "env"],
		"env": {"GREETING": "hello", "LANG": "C.UTF-8"}, "inheritEnv": ["PASS_ME", "NOT_SET"]}]}`)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "env"}),
		bedrocktest.Text("ok"),
	))
	env := testEnv(t, "PASS_ME=yes", "DATABASE_PASSWORD=hunter2", "LANG=en_GB.UTF-8")
	out := runBinary(t, env, nil, "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "go")
	require.Equal(t, 0, out.code, out.stderr)
	var got []string
	require.NoError(t, json.Unmarshal([]byte(resultText(toolResults(t, srv.Requests()[1])["t1"])), &got))
	assert.Contains(t, got, "GREETING=hello")
	assert.Contains(t, got, "PASS_ME=yes")
	assert.Contains(t, got, "LANG=C.UTF-8", "env overrides what is passed through")
	assert.Contains(t, got, "PATH="+os.Getenv("PATH"))
	for _, v := range got {
		name, _, _ := strings.Cut(v, "=")
		assert.False(t, strings.HasPrefix(name, "AWS_"), "the program got %s", name)
		assert.NotEqual(t, "DATABASE_PASSWORD", name)
		assert.NotEqual(t, "NOT_SET", name)
	}
}
