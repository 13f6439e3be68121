package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseManifest(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "tool")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\ncat\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.txt"), nil, 0o644))
	tool := func(fields string) string {
		return `{"tools": [{"name": "echo", "description": "Echo.", "command": ["` + prog + `"]` + fields + `}]}`
	}
	tests := []struct {
		name, manifest, want string
	}{
		{"not JSON", `{"tools": [}`, "line 1: invalid character '}'"},
		{"empty", ``, "empty file"},
		{"cut short", `{"tools": [`, "unexpected end of file"},
		{"unknown field", tool(`, "environment": {}`), `unknown field "environment"`},
		{"env not an object", tool(`, "env": ["A=1"]`), `line 1: "tools.env": want an object, got an array`},
		{"approve not a bool", tool(`, "approve": "yes"`), `line 1: "tools.approve": want true or false, got a string`},
		{"timeout a number", tool(`, "timeout": 5`), `line 1: "tools.timeout": want a string, got a number`},
		{"a bare array", `[{"name": "echo"}]`, `line 1: want an object, got an array: a manifest is {"tools": [{"name": `},
		{"bad env name", tool(`, "env": {"A=B": "1"}`), `tool 1 ("echo"): environment variable name "A=B"`},
		{"bad inherited name", tool(`, "inheritEnv": [""]`), `tool 1 ("echo"): environment variable name ""`},
		{"unknown top-level field", `{"tools": [], "version": 2}`, `unknown field "version"`},
		{"wrong type", "{\n\"tools\": {}}", `line 2: "tools": want an array, got an object`},
		{"trailing data", tool("") + "{}", "data after the manifest's JSON object"},
		{"no tools", `{"tools": []}`, "no tools"},
		{"duplicate", `{"tools": [{"name": "a", "description": "A.", "command": ["` + prog + `"]}, {"name": "a", "description": "B.", "command": ["` + prog + `"]}]}`, `tool 2 ("a"): duplicate name`},
		{"built-in name", `{"tools": [{"name": "calculator", "description": "C.", "command": ["` + prog + `"]}]}`, `tool 1 ("calculator"): the name of a built-in tool`},
		{"invalid name", `{"tools": [{"name": "has space", "description": "A.", "command": ["` + prog + `"]}]}`, `tool 1 ("has space"): name must match`},
		{"no name", `{"tools": [{"description": "A.", "command": ["` + prog + `"]}]}`, `tool 1 (""): name must match`},
		{"no description", `{"tools": [{"name": "a", "command": ["` + prog + `"]}]}`, `tool 1 ("a"): empty description`},
		{"array schema", tool(`, "inputSchema": {"type": "array"}`), `tool 1 ("echo"): input schema: type must be "object", got array`},
		{"schema without type", tool(`, "inputSchema": {"properties": {}}`), `input schema: type must be "object", got none`},
		{"schema not an object", tool(`, "inputSchema": "object"`), `tool 1 ("echo"): input schema`},
		{"bad schema", tool(`, "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}`), `tool 1 ("echo"): input schema`},
		{"no command", `{"tools": [{"name": "a", "description": "A."}]}`, `tool 1 ("a"): empty command`},
		{"empty command", `{"tools": [{"name": "a", "description": "A.", "command": [""]}]}`, `tool 1 ("a"): empty command`},
		{"missing program", `{"tools": [{"name": "a", "description": "A.", "command": ["./nosuch"]}]}`, "command " + filepath.Join(dir, "nosuch") + ": not an executable file"},
		{"not executable", `{"tools": [{"name": "a", "description": "A.", "command": ["./data.txt"]}]}`, "not an executable file"},
		{"not in PATH", `{"tools": [{"name": "a", "description": "A.", "command": ["no-such-program-xyz"]}]}`, "command no-such-program-xyz: not found in PATH"},
		{"bad timeout", tool(`, "timeout": "5"`), `tool 1 ("echo"): timeout "5": want a positive Go duration`},
		{"zero timeout", tool(`, "timeout": "0s"`), `timeout "0s"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseManifest([]byte(tt.manifest), dir, []string{"get_current_datetime", "calculator"}, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "Go value", "said in JSON's terms")
			assert.NotContains(t, err.Error(), "main.", "said in JSON's terms")
		})
	}
}

func TestLoadManifest(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "tool")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\ncat\n"), 0o755))
	path := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"tools": [
		{"name": "echo", "description": "Echo.", "command": ["./tool"], "timeout": "5s",
		 "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
		{"name": "ls", "description": "List.", "command": ["ls", "-l"]}
	]}`), 0o644))
	ts, err := loadManifest(path, nil, nil)
	require.NoError(t, err)
	require.Len(t, ts, 2)
	assert.Equal(t, "echo", ts[0].Name())
	assert.Equal(t, 5*time.Second, ts[0].Timeout())
	assert.Equal(t, defaultToolTimeout, ts[1].Timeout())
	assert.JSONEq(t, `{"type":"object"}`, string(ts[1].InputSchema()), "the default schema")
	out, err := ts[0].Call(context.Background(), json.RawMessage(`{"text": "hi"}`))
	require.NoError(t, err)
	assert.Equal(t, `{"text":"hi"}`, mustJSON(t, out))

	require.NoError(t, os.WriteFile(path, []byte(`{"tools": [{"name": "x"}]}`), 0o644))
	_, err = loadManifest(path, nil, nil)
	require.Error(t, err)
	assert.True(t, isUsage(err), "a usage error: %v", err)
	assert.True(t, strings.HasPrefix(err.Error(), "manifest "+path+`: tool 1 ("x"): `), "naming the file and the tool: %v", err)
}
