package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestTraceLines: the -v trace's decisions read "approved" or "denied by
// WHO: WHY", an abandoned call is said in its answer's line, a call cut off by
// a crash is said answered without a duration, counts take the singular
// for one, and the library's
// log records are lines of the trace ("· warning: ..."), not slog's text.
func TestTraceLines(t *testing.T) {
	call := converse.Call{ID: "c3", Tool: "risky"}
	tests := []struct {
		name string
		log  func(*printer)
		want string
	}{
		{"approved", func(p *printer) {
			p.event(converse.ApprovalDecided{Call: call, Decision: converse.Approve("c3")})
		}, "· risky c3 approved\n"},
		{"denied", func(p *printer) {
			p.event(converse.ApprovalDecided{Call: call, Decision: converse.Deny("c3", "converse", "there is no terminal")})
		}, "· risky c3 denied by converse: there is no terminal\n"},
		{"denied without a reason", func(p *printer) {
			p.event(converse.ApprovalDecided{Call: call, Decision: converse.Deny("c3", "the user", "")})
		}, "· risky c3 denied by the user\n"},
		{"abandoned", func(p *printer) {
			p.event(converse.ToolEnd{ID: "c3", Name: "risky", Err: errors.New("Error: the call timed out"), Status: types.ToolResultStatusError, Abandoned: true})
		}, "← risky c3 error in 0s: Error: the call timed out (answered before the tool returned; it is being stopped)\n"},
		{"interrupted", func(p *printer) {
			p.event(converse.ToolEnd{ID: "c3", Name: "risky", Err: converse.ErrCallInterrupted, Status: types.ToolResultStatusError})
		}, "← risky c3 error: " + converse.ErrCallInterrupted.Error() + "\n"},
		{"resumed", func(p *printer) {
			p.event(converse.Resumed{Messages: 2})
			p.event(converse.Resumed{Messages: 1, Decisions: 1})
			p.event(converse.Resumed{Messages: 4, Decisions: 2})
		}, "· resuming the session: 2 messages, 0 decisions\n· resuming the session: 1 message, 1 decision\n· resuming the session: 4 messages, 2 decisions\n"},
		{"a warning", func(p *printer) {
			slog.New(&traceHandler{p: p}).Warn("converse: CountTokens failed; estimating", "error", "throttled")
		}, "· warning: CountTokens failed; estimating error=throttled\n"},
		{"an error with attributes and groups", func(p *printer) {
			slog.New(&traceHandler{p: p}).With("tool", "risky").WithGroup("call").Error("panic", "stack", "line 1\nline 2", slog.Group("g", "k", "v"))
		}, "· error: panic tool=risky call.stack=\"line 1\\nline 2\" call.g.k=v\n"},
		{"info", func(p *printer) {
			slog.New(&traceHandler{p: p}).Info("converse: the summary of the trimmed messages failed; dropping them", "error", "x")
		}, "· the summary of the trimmed messages failed; dropping them error=x\n"},
		{"debug is left out", func(p *printer) {
			slog.New(&traceHandler{p: p}).Debug("details")
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			tt.log(&printer{stdout: &bytes.Buffer{}, stderr: &stderr, verbose: true})
			assert.Equal(t, tt.want, stderr.String())
		})
	}
}

// TestTraceHandlerConcurrent: records logged from tools' goroutines beside
// the events are whole lines (run with -race).
func TestTraceHandlerConcurrent(t *testing.T) {
	var stderr bytes.Buffer
	p := &printer{stdout: &bytes.Buffer{}, stderr: &stderr, verbose: true}
	logger := slog.New(&traceHandler{p: p})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { logger.Warn("w", "k", "v") })
		wg.Go(func() { p.event(converse.ToolStart{ID: "c", Name: "t", Input: []byte("{}")}) })
	}
	wg.Wait()
	for _, line := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
		assert.Contains(t, []string{"· warning: w k=v", "→ t c {}"}, line)
	}
}

// TestTraceSaysEachThingOnce: what the events show, the library's log
// records do not repeat: a streaming fallback is one line a turn, and a
// call answered at its timeout one line, its answer's, without "keeps its
// concurrency slot" (a command's process group is killed at the timeout).
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
