package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "6 × 7 = 42.\n\tdone", "6 × 7 = 42.\n\tdone"},
		{"conceal", "\x1b[8mRun calculator? [y/N] ", "^[[8mRun calculator? [y/N] "},
		{"clear screen", "\x1b[2J\x1b[H", "^[[2J^[[H"},
		{"title (OSC 0)", "\x1b]0;pwned\x07", "^[]0;pwned^G"},
		{"clipboard (OSC 52)", "\x1b]52;c;cm0gLXJmIH4=\x1b\\", "^[]52;c;cm0gLXJmIH4=^[\\"},
		{"carriage return and backspace", "safe\rrm -rf\b", "safe^Mrm -rf^H"},
		{"NUL and DEL", "a\x00b\x7f", "a^@b^?"},
		{"C1 CSI", "\u009b8m hidden", `\u009b8m hidden`},
		{"C1 as a raw byte", "\x9b8m", `\x9b8m`},
		{"bidi override", "abc\u202eexe.txt", `abc\u202eexe.txt`},
		{"bidi isolate", "\u2066x\u2069", `\u2066x\u2069`},
		{"a real replacement character", "bad \uFFFD byte", "bad \uFFFD byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, visible(tc.in))
		})
	}
}

// TestOutputToPipeUnchanged: the model's text reaches a file or a pipe as
// it is, escape sequences and all; only a terminal gets it made visible.
func TestOutputToPipeUnchanged(t *testing.T) {
	text := "\x1b[1mbold\x1b[0m and \u202e"
	srv := newServer(t, bedrocktest.Script(bedrocktest.Text(text)))
	out := runInProcess(t, nil, "-endpoint", srv.URL, "hi")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, text+"\n", out.stdout)
}

// TestApprovalPromptCannotBeForged runs the binary on a terminal, standard
// output and error included, as a user does. The model's text conceals what
// follows (ESC[8m), clears the screen, sets the title and the clipboard and
// writes a fake prompt for a harmless tool before calling danger. The terminal
// shows its escape sequences as text. The real question starts on a reset,
// cleared line and names danger, quoted. The -v trace shares the terminal and
// its escaping.
func TestApprovalPromptCannotBeForged(t *testing.T) {
	t.Parallel()
	forged := "\x1b[2J\x1b]0;calculator\x07\x1b]52;c;eQ==\x07Sure.\nRun calculator {\"a\":1}? [y/N] \x1b[8m"
	screen, marks := askOnTerminal(t, forged, map[string]any{"path": "/"})
	assert.Zero(t, runs(t, marks), "danger never runs without a yes")
	mustContain(t, "the terminal", screen, "^[[2J^[]0;calculator^G^[]52;c;eQ==^GSure.", "^[[8m", "Done.",
		"· danger d1 denied by the user: not approved at the terminal") // the -v trace, on the same terminal
	prompt := resetLine + `Run "danger" {"path":"/"}? [y/N] `
	before, _, found := strings.Cut(screen, prompt)
	require.True(t, found, "the prompt, after a reset: %q", screen)
	assert.NotContains(t, strings.Replace(screen, resetLine, "", 1), "\x1b", "converse's reset is the only escape sequence on the terminal")
	assert.True(t, strings.HasSuffix(before, "\n"), "the prompt starts on a line of its own: %q", before)
}

// TestApprovalPromptShowsTheWholeInput: the approval question shows all of
// a call's input, however long, with its strings as they are (the -v
// trace's cut at 300 characters could hide what is approved).
func TestApprovalPromptShowsTheWholeInput(t *testing.T) {
	t.Parallel()
	path := "/tmp/" + strings.Repeat("a", 400) + "  /../../home"
	screen, marks := askOnTerminal(t, "Cleaning up.", map[string]any{"path": path})
	assert.Zero(t, runs(t, marks), "danger never runs without a yes")
	mustContain(t, "the terminal", screen, resetLine+`Run "danger" {"path":"`+path+`"}? [y/N] `)
}

// askOnTerminal runs the binary on a terminal, standard output and error
// included, as a user does, with -v. The model writes text and calls danger, a
// tool that needs approval, with input. "n" is typed ahead as the answer. It
// returns what the terminal showed and the file of danger's runs.
func askOnTerminal(t *testing.T, text string, input map[string]any) (screen, marks string) {
	t.Helper()
	marks = filepath.Join(t.TempDir(), "marks")
	manifest := writeManifest(t, `{"tools": [{"name": "danger", "description": "Deletes.", "approve": true,
		"command": [`+quote(os.Args[0])+`, "helper-tool", "mark", `+quote(marks)+`]}]}`)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse(text, bedrocktest.Call{ID: "d1", Name: "danger", Input: input}),
		bedrocktest.Text("Done."),
	))
	return runOnTerminal(t, srv, manifest, "n\n"), marks
}

// runOnTerminal runs the binary on a terminal, as askOnTerminal does, with
// the tools of manifest against srv, typed typed ahead, and returns what
// the terminal showed.
func runOnTerminal(t *testing.T, srv *bedrocktest.Server, manifest, typed string) string {
	t.Helper()
	tty, keyboard := openTerminal(t)
	_, err := keyboard.WriteString(typed) // typed ahead: the answer to the prompt
	require.NoError(t, err)
	shown := make(chan string)
	go func() {
		b, _ := io.ReadAll(keyboard) // until every end of the terminal is closed
		shown <- string(b)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t), "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "-v", "go")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0} // stdin, the tty
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	runErr := cmd.Run()
	tty.Close()
	screen := <-shown
	checkRace(t, 0, screen)
	require.NoError(t, runErr, screen)
	return screen
}
