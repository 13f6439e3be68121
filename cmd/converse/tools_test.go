package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-tools", manifest, "-v", "Try every tool.")
	require.Equal(t, 0, out.code, out.stderr)
	require.Equal(t, "All done.\n", out.stdout)
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
		{"t_hang", types.ToolResultStatusError, []string{"timed out"}}, // stopped at its timeout, not at the end of the hour
		{"t_flood", types.ToolResultStatusError, []string{"wrote more than 1048576 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r, ok := results[tt.id]
			require.True(t, ok, "no result")
			text := resultText(r)
			assert.Equal(t, tt.status, r.Status, text)
			mustContain(t, "the result", text, tt.want...)
		})
	}
	assert.Equal(t, `{"text":"hi; rm -rf $HOME"}`, resultText(results["t_echo"]), "the program's JSON as it is")
	assert.NoFileExists(t, mark, "the program of a tool with invalid input was started")
	mustContain(t, "stderr", out.stderr, "← hang t_hang error in ", "← fail t_fail error in ")
}

// TestManifestRelativeCommand runs a program named relative to the
// manifest, whatever the working directory.
func TestManifestRelativeCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cat-tool"), []byte("#!/bin/sh\ncat\n"), 0o755))
	manifest := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(manifest, []byte(`{"tools": [{"name": "cat", "description": "Cat.", "command": ["./cat-tool"]}]}`), 0o644))
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "cat", Input: map[string]any{"n": 1}}),
		bedrocktest.Text("ok"),
	))
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "go")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, `{"n":1}`, resultText(toolResults(t, srv.Requests()[1])["t1"]))
}

// TestManifestRelativeCommandNotInPATH: with the manifest in the working
// directory, "./cat-tool" is the program beside it, never a same-named
// program in PATH (filepath.Join(".", "./cat-tool") is "cat-tool").
func TestManifestRelativeCommandNotInPATH(t *testing.T) {
	t.Parallel()
	dir, impostor := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cat-tool"), []byte("#!/bin/sh\ncat\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(impostor, "cat-tool"), []byte("#!/bin/sh\necho '\"impostor\"'\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`{"tools": [{"name": "cat", "description": "Cat.", "command": ["./cat-tool"]}]}`), 0o644))
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "cat", Input: map[string]any{"n": 1}}),
		bedrocktest.Text("ok"),
	))
	env := testEnv(t, "PATH="+impostor+string(os.PathListSeparator)+os.Getenv("PATH"))
	out := runBinaryIn(t, dir, env, nil, "-endpoint", srv.URL, "-tools", "tools.json", "-no-builtins", "go")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, `{"n":1}`, resultText(toolResults(t, srv.Requests()[1])["t1"]), "the input echoed by the manifest's own cat-tool")
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
