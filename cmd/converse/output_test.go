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

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/trace"
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
	require.Equal(t, 1, out.code, out.stderr)
	require.Len(t, denied.Requests(), 1)
	assert.Equal(t, model, aws.ToString(denied.Requests()[0].ModelId))
	mustContain(t, "stderr", out.stderr, "· model "+model+" in region ", "access denied to model "+model+" in region ")
	assert.NotContains(t, out.stderr, defaultModel)
	var report struct{ Model string }
	require.NoError(t, json.Unmarshal([]byte(out.stdout), &report), out.stdout)
	assert.Equal(t, model, report.Model)
}
