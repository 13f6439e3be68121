package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestTraceSaysEachThingOnce: what the events show, the library's log records
// do not repeat. A streaming fallback is one line a turn. A call answered at
// its timeout is one line, its answer's, without "keeps its concurrency slot"
// (a command's process group is killed at the timeout).
func TestTraceSaysEachThingOnce(t *testing.T) {
	t.Run("fallback", func(t *testing.T) {
		srv := newServer(t, bedrocktest.Script(
			bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"operation": "add", "a": 1, "b": 2}}),
			bedrocktest.Text("3."),
		))
		out := runInProcess(t, nil, "-endpoint", srv.URL, "-model", "us.meta.llama3-3-70b-instruct-v1:0", "-stream", "-v", "1+2?")
		require.Equal(t, 0, out.code, out.stderr)
		assert.Equal(t, 2, strings.Count(out.stderr, "does not support tool use in streaming mode"), out.stderr)
		mustContain(t, "stderr", out.stderr, "· turn 1: model us.meta.llama3-3-70b-instruct-v1:0 does not support tool use in streaming mode; using Converse")
	})
	t.Run("timeout", func(t *testing.T) {
		manifest := writeManifest(t, `{"tools": [{"name": "hang", "description": "Hangs.", "timeout": "10ms",
			"command": [`+quote(os.Args[0])+`, "helper-tool", "hang"]}]}`)
		srv := newServer(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "h1", Name: "hang"}), bedrocktest.Text("It hung.")))
		out := runInProcess(t, nil, "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "-v", "hang")
		require.Equal(t, 0, out.code, out.stderr)
		assert.Equal(t, 1, strings.Count(out.stderr, "← hang h1 error in "), out.stderr)
		assert.Equal(t, 2, strings.Count(out.stderr, "hang h1"), "the call's start and its answer: %s", out.stderr)
		assert.NotContains(t, out.stderr, "concurrency slot")
		assert.NotContains(t, out.stderr, "timed out or cancelled")
	})
}

// TestTraceSaysRetriesAndSetup: -v says the endpoint in use, that a
// session was loaded (its messages and model), and each SDK retry after a
// throttle, with the attempt, the wait and why.
func TestTraceSaysRetriesAndSetup(t *testing.T) {
	session := filepath.Join(t.TempDir(), "s")
	srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hello."), bedrocktest.Text("Again.")))
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-session", session, "Hi")
	require.Equal(t, 0, out.code, out.stderr)

	throttled := newServer(t, bedrocktest.Throttle(1, bedrocktest.Script(bedrocktest.Text("Again."))))
	out = runInProcess(t, nil, "-endpoint", throttled.URL, "-session", session, "-v", "Hi again")
	require.Equal(t, 0, out.code, out.stderr)
	mustContain(t, "the -v trace", out.stderr,
		"· endpoint "+throttled.URL+" (-endpoint)\n",
		"· session "+session+" loaded: 2 messages with "+defaultModel+"\n")
	assert.Regexp(t, `· model call failed \(ThrottlingException: [^)]*\); retry 1 in [0-9.]+m?s\n`, out.stderr)
}

// TestTraceSaysWhatFlagsDo: -v says that -cache does nothing for a model
// without prompt caching (and nothing of it for one with), and how -schema's
// answer is given: natively, or by a final tool.
func TestTraceSaysWhatFlagsDo(t *testing.T) {
	schema := writeSchema(t, `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	const llama, nova = "us.meta.llama3-3-70b-instruct-v1:0", "us.amazon.nova-pro-v1:0"
	for _, tt := range []struct {
		name  string
		args  []string
		reply *bedrocktest.Reply
		want  string
		not   string
	}{
		{"cache without caching", []string{"-model", llama, "-cache"}, bedrocktest.Text("Hi."), "· -cache has no effect: " + llama + " has no prompt caching\n", ""},
		{"cache with caching", []string{"-model", nova, "-cache"}, bedrocktest.Text("Hi."), "", "-cache has no effect"},
		{"schema natively", []string{"-schema", schema}, bedrocktest.Text(`{"city":"Paris"}`), "· -schema: " + defaultModel + " answers in the schema natively (outputConfig.textFormat)\n", ""},
		{"schema by a final tool", []string{"-model", nova, "-schema", schema},
			bedrocktest.ToolUse("", bedrocktest.Call{ID: "f1", Name: "final_answer", Input: map[string]any{"city": "Paris"}}),
			"· -schema: " + nova + " has no native structured output: the answer is a call of a final tool, its input validated\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, bedrocktest.Script(tt.reply))
			out := runInProcess(t, nil, append(append([]string{"-endpoint", srv.URL, "-v"}, tt.args...), "Hi")...)
			if tt.want != "" {
				assert.Contains(t, out.stderr, tt.want)
			}
			if tt.not != "" {
				assert.NotContains(t, out.stderr, tt.not)
			}
		})
	}
}
