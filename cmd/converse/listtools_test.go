package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tooluse/bedrock/converse/trace"
)

// TestListTools: converse tools (and -list-tools) lists the tools a run with
// the same flags would offer, with their origin and approval. They are the
// built-ins, a manifest's program and Lambda function, and an MCP server's. It
// exits without a model call. -json gives them to machines.
func TestListTools(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(manifest, []byte(`{"tools": [
		{"name": "echo", "description": "Echoes\nits input.", "inputSchema": {"type": "object"}, "command": ["/bin/cat"], "approve": true},
		{"name": "resize", "description": "Resizes.", "inputSchema": {"type": "object"}, "lambda": "resize-fn"}
	]}`), 0o600))
	config := writeMCP(t, `{"mcpServers": {"web": {"url": "`+greeter(t)+`"}}}`)
	t.Setenv("AWS_REGION", "us-east-1")

	out := runInProcess(t, nil, "tools", "-tools", manifest, "-mcp", config)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, `NAME                  FROM              APPROVAL  DESCRIPTION
calculator            built-in          -         `+builtinDescription(t, "calculator")+`
echo                  manifest          asks      Echoes its input.
get_current_datetime  built-in          -         `+builtinDescription(t, "get_current_datetime")+`
resize                lambda:resize-fn  -         Resizes.
web__greet            mcp:web           -         Greets.
`, out.stdout)

	out = runInProcess(t, nil, "-list-tools", "-json", "-no-builtins", "-tools", manifest, "-mcp", config)
	require.Equal(t, 0, out.code, out.stderr)
	var list []listedTool
	require.NoError(t, json.Unmarshal([]byte(out.stdout), &list))
	assert.Equal(t, []listedTool{
		{Name: "echo", Origin: "manifest", Approval: true, Description: "Echoes\nits input."},
		{Name: "resize", Origin: "lambda:resize-fn", Description: "Resizes."},
		{Name: "web__greet", Origin: "mcp:web", Description: "Greets."},
	}, list)

	out = runInProcess(t, nil, "tools", "what are they?")
	assert.Equal(t, 2, out.code)
	assert.Contains(t, out.stderr, "converse tools takes no prompt")
}

func builtinDescription(t *testing.T, name string) string {
	t.Helper()
	reg, err := registry(&settings{}, &running{}, nil)
	require.NoError(t, err)
	tool, ok := reg.Lookup(name)
	require.True(t, ok)
	return trace.Short(tool.Description())
}
