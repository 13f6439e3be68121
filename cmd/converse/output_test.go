package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/cmd/converse/internal/printing"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// TestTraceIsSafe: the -v trace caps a huge prompt as it caps tool input,
// and escapes the control characters of model-controlled ids and names, so
// no escape sequence reaches the terminal.
func TestTraceIsSafe(t *testing.T) {
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("",
			bedrocktest.Call{ID: "t1\x1b[2J", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}},
			bedrocktest.Call{ID: "t2", Name: "evil\x1b]0;title\x07", Input: map[string]any{}},
		),
		bedrocktest.Text("Done."),
	))
	prompt := strings.Repeat("word ", 1<<20) // 5 MiB
	out := runInProcess(t, strings.NewReader(prompt), "-endpoint", srv.URL, "-v")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Less(t, len(out.stderr), 16<<10, "the trace of one short conversation")
	assert.NotContains(t, out.stderr, "\x1b")
	assert.NotContains(t, out.stderr, "\x07")
	for _, line := range strings.Split(out.stderr, "\n") {
		if strings.HasPrefix(line, "> ") {
			assert.LessOrEqual(t, utf8.RuneCountInString(line), trace.MaxRunes+2, "the prompt line")
		}
	}
	mustContain(t, "stderr", out.stderr,
		"> word word ",
		`→ calculator "t1\x1b[2J" {"a":1,"b":2}`,
		`← calculator "t1\x1b[2J" success in `,
		`→ "evil\x1b]0;title\a" t2 {}`,
		`← "evil\x1b]0;title\a" t2 error in `,
	)
}

// TestSessionModelIsReported: a -session resumed without -model talks to the
// session's model, and the -v header, -json's "model" and the hints name
// that model, not the default.
func TestSessionModelIsReported(t *testing.T) {
	const model = "anthropic.claude-3-haiku-20240307-v1:0"
	path := filepath.Join(t.TempDir(), "chat.json")
	first := newServer(t, bedrocktest.Script(bedrocktest.Text("Hello.")))
	out := runInProcess(t, nil, "-endpoint", first.URL, "-session", path, "-model", model, "hi")
	require.Equal(t, 0, out.code, out.stderr)

	denied := newServer(t, bedrocktest.Fail(1, bedrocktest.AccessDenied("You don't have access to the model with the specified model ID."), nil))
	out = runInProcess(t, nil, "-endpoint", denied.URL, "-session", path, "-json", "-v", "again")
	require.Equal(t, exitCaller, out.code, out.stderr)
	require.Len(t, denied.Requests(), 1)
	assert.Equal(t, model, aws.ToString(denied.Requests()[0].ModelId))
	mustContain(t, "stderr", out.stderr, "· model "+model+" in region ", "access denied to model "+model+" in region ")
	assert.NotContains(t, out.stderr, defaultModel)
	var report struct{ Model string }
	require.NoError(t, json.Unmarshal([]byte(out.stdout), &report), out.stdout)
	assert.Equal(t, model, report.Model)
}

// TestProgressTraceLine: with -v an MCP server's progress notification is
// a trace line naming the server's tool, with the count and the message,
// which the server controls: one line, printable.
func TestProgressTraceLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    mcptools.Progress
		want string
	}{
		{"count and message", mcptools.Progress{Server: "web", Tool: "fetch", CallID: "t1", Progress: 1, Total: 2, Message: "half way"}, "· web__fetch: 1/2 half way\n"},
		{"message alone", mcptools.Progress{Server: "web", Tool: "fetch", CallID: "t1", Message: "reading\npage 3"}, "· web__fetch: reading page 3\n"},
		{"escape sequences", mcptools.Progress{Server: "web\x1b[2J", Tool: "fetch", CallID: "t1", Progress: 3, Total: 4, Message: "\x1b]0;title\x07done"}, `· "web\x1b[2J__fetch": 3/4 "\x1b]0;title\adone"` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf strings.Builder
			p := &printer{Printer: printing.Printer{Trace: trace.New(&buf)}}
			p.progress(tt.n)
			assert.Equal(t, tt.want, buf.String())
		})
	}
}
