package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

const agentModel = "us.amazon.nova-lite-v1:0"

// byModel answers the requests for agentModel with agent, the others with
// coordinator, and keeps the agent's requests.
type byModel struct {
	coordinator, agent bedrocktest.Handler
	mu                 sync.Mutex
	agentReqs          []*bedrocktest.Request
}

func (h *byModel) ServeConverse(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
	if aws.ToString(req.ModelId) != agentModel {
		return h.coordinator.ServeConverse(ctx, req)
	}
	h.mu.Lock()
	h.agentReqs = append(h.agentReqs, req)
	h.mu.Unlock()
	return h.agent.ServeConverse(ctx, req)
}

// TestManifestAgent: an entry of kind agent is a tool that runs a
// conversation of its own model, system prompt and tools, on the run's
// endpoint.
func TestManifestAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cat-tool"), []byte("#!/bin/sh\ncat\n"), 0o755))
	manifest := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(manifest, []byte(`{"tools": [
		{"name": "cat", "description": "Cat.", "command": ["./cat-tool"]},
		{"name": "researcher", "description": "Researches.", "model": "`+agentModel+`",
		 "system": "You research.", "tools": ["cat", "calculator"]}
	]}`), 0o644))
	h := &byModel{
		coordinator: bedrocktest.Script(
			bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "researcher", Input: map[string]any{"task": "find n"}}),
			bedrocktest.Text("done"),
		),
		agent: bedrocktest.Script(
			bedrocktest.ToolUse("", bedrocktest.Call{ID: "a1", Name: "cat", Input: map[string]any{"n": 1}}),
			bedrocktest.Text("n is 1"),
		),
	}
	srv := newServer(t, h)
	session := filepath.Join(dir, "s.json")
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-tools", manifest, "-session", session, "go")
	require.Equal(t, 0, out.code, out.stderr)
	assert.FileExists(t, session+".t1", "the agent's conversation is saved beside the session")
	assert.Contains(t, out.stdout, "done")
	reqs := srv.Requests()
	assert.Contains(t, resultText(toolResults(t, reqs[len(reqs)-1])["t1"]), "n is 1", "the coordinator gets the agent's answer")
	require.Len(t, h.agentReqs, 2)
	assert.Equal(t, `{"n":1}`, resultText(toolResults(t, h.agentReqs[1])["a1"]), "the agent's own tool ran")
	first := h.agentReqs[0]
	assert.Equal(t, "You research.", first.System[0].(*types.SystemContentBlockMemberText).Value)
	var names []string
	for _, tool := range first.ToolConfig.Tools {
		names = append(names, aws.ToString(tool.(*types.ToolMemberToolSpec).Value.Name))
	}
	assert.Equal(t, []string{"cat", "calculator"}, names, "the agent is offered its own tools only")
}

func TestParseManifestAgent(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "tool")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\ncat\n"), 0o755))
	agent := func(fields string) string {
		return `{"name": "r", "description": "R.", "model": "m"` + fields + `}`
	}
	cat := `{"name": "cat", "description": "Cat.", "command": ["` + prog + `"]`
	tests := []struct {
		name, tools, want string
	}{
		{"with a command", agent(`, "command": ["` + prog + `"]`), `tool 1 ("r"): "model" with "command" or "lambda"`},
		{"with a schema", agent(`, "inputSchema": {"type": "object"}`), `its input is {"task": "..."}`},
		{"approve", agent(`, "approve": true`), `an agent takes "model"`},
		{"no description", `{"name": "r", "model": "m"}`, "empty description"},
		{"unknown tool", agent(`, "tools": ["nosuch"]`), `tool "nosuch": not a built-in or an entry before the agent`},
		{"tool after it", agent(`, "tools": ["cat"]`) + `, ` + cat + `}`, `tool "cat": not a built-in or an entry before the agent`},
		{"bad timeout", agent(`, "timeout": "soon"`), `timeout "soon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseManifest([]byte(`{"tools": [`+tt.tools+`]}`), dir, []string{"calculator"}, &functions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := parseManifest([]byte(`{"tools": [`+agent("")+`]}`), dir, nil, nil)
	assert.ErrorContains(t, err, "agents need the Bedrock client")
	ts, err := parseManifest([]byte(`{"tools": [`+cat+`}, `+agent(`, "tools": ["cat"]`)+`]}`), dir, nil, &functions{})
	require.NoError(t, err)
	assert.Equal(t, defaultAgentTimeout, ts[1].Timeout())
}

// TestManifestAgentAsksAtTheTerminal: a call that an agent makes of a tool
// that needs approval is asked at the terminal, as the coordinator's are.
func TestManifestAgentAsksAtTheTerminal(t *testing.T) {
	t.Parallel()
	marks := filepath.Join(t.TempDir(), "marks")
	manifest := writeManifest(t, `{"tools": [{"name": "danger", "description": "Deletes.", "approve": true,
		"command": [`+quote(os.Args[0])+`, "helper-tool", "mark", `+quote(marks)+`]},
		{"name": "cleaner", "description": "Cleans.", "model": "`+agentModel+`", "tools": ["danger"]}]}`)
	h := &byModel{
		coordinator: bedrocktest.Script(
			bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "cleaner", Input: map[string]any{"task": "clean /tmp"}}),
			bedrocktest.Text("Cleaned."),
		),
		agent: bedrocktest.Script(
			bedrocktest.ToolUse("", bedrocktest.Call{ID: "a1", Name: "danger", Input: map[string]any{"path": "/tmp"}}),
			bedrocktest.Text("Deleted."),
		),
	}
	screen := runOnTerminal(t, newServer(t, h), manifest, "y\n")
	mustContain(t, "the terminal", screen, resetLine+`Run "danger" {"path":"/tmp"}? [y/N] `, "Cleaned.")
	assert.Equal(t, 1, runs(t, marks), "danger ran once, approved at the terminal")
}
