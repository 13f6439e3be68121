package main

import (
	"bytes"
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

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// erase is how the status line is taken off the terminal's line.
const erase = "\r\x1b[K"

// awaitManifest writes a manifest of the tool "wait", which reads a line from
// the named pipe gate and answers it. Opening gate for writing returns once
// the tool runs, and the line lets it answer.
func awaitManifest(t *testing.T) (manifest, gate string) {
	t.Helper()
	gate = filepath.Join(t.TempDir(), "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	return writeManifest(t, `{"tools": [{"name": "wait", "description": "Waits.",
		"command": [`+quote(os.Args[0])+`, "helper-tool", "await", `+quote(gate)+`]}]}`), gate
}

// TestStatusLine runs the binary with standard output and error on a terminal,
// as a user does. While the tool wait runs, the status line names it. A gate
// holds the tool until the test has seen the line. The line is erased before
// the answer prints.
func TestStatusLine(t *testing.T) {
	t.Parallel()
	tty, keyboard := openTerminal(t)
	manifest, gate := awaitManifest(t)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "w1", Name: "wait"}),
		bedrocktest.Text("Done."),
	))
	screen, copied := newWatched(), make(chan struct{})
	go func() {
		io.Copy(screen, keyboard) // until every end of the terminal is closed
		close(copied)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t, "TERM=xterm"), "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "go")
	cmd.Stdout, cmd.Stderr = tty, tty
	require.NoError(t, cmd.Start())
	screen.waitFor(t, "converse: turn 1 · running wait ", 1)
	open, err := os.OpenFile(gate, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = io.WriteString(open, "opened\n")
	require.NoError(t, err)
	require.NoError(t, open.Close())
	runErr := cmd.Wait()
	tty.Close()
	<-copied
	shown := screen.String()
	checkRace(t, 0, shown)
	require.NoError(t, runErr, shown)

	before, after, found := strings.Cut(shown, "Done.")
	require.True(t, found, "the answer: %q", shown)
	last := before[strings.LastIndex(before, "running wait"):]
	assert.Contains(t, last, erase, "the line is erased before the answer: %q", shown)
	assert.NotContains(t, last[strings.LastIndex(last, erase):], "converse:", "nothing of the line stands before the answer: %q", shown)
	assert.NotContains(t, after, "converse:", "no line after the answer: %q", shown)
}

// TestNoStatusLine: standard error that is a pipe gets no status line
// (nor any escape sequence) while a tool runs; -v, -json and a dumb or
// unknown terminal have none either.
func TestNoStatusLine(t *testing.T) {
	t.Parallel()
	manifest, gate := awaitManifest(t)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "w1", Name: "wait"}),
		bedrocktest.Text("Done."),
	))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t, "TERM=xterm"), "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "go")
	stdout, stderr := newWatched(), newWatched()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	open, err := os.OpenFile(gate, os.O_WRONLY, 0) // the tool runs
	require.NoError(t, err)
	_, err = io.WriteString(open, "opened\n")
	require.NoError(t, err)
	require.NoError(t, open.Close())
	require.NoError(t, cmd.Wait(), stderr.String())
	checkRace(t, 0, stderr.String())
	assert.Equal(t, "Done.\n", stdout.String())
	assert.NotContains(t, stderr.String(), "\x1b", "no status bytes on a pipe")
	assert.NotContains(t, stderr.String(), "converse: turn")

	tty, _ := openTerminal(t)
	pipeR, pipeW, err := os.Pipe()
	require.NoError(t, err)
	defer pipeR.Close()
	defer pipeW.Close()
	for _, tc := range []struct {
		name   string
		stderr *os.File
		term   string
		flags  settings
		want   bool
	}{
		{"terminal", tty, "xterm", settings{}, true},
		{"pipe", pipeW, "xterm", settings{}, false},
		{"-v", tty, "xterm", settings{verbose: true}, false},
		{"-json", tty, "xterm", settings{json: true}, false},
		{"TERM=dumb", tty, "dumb", settings{}, false},
		{"TERM unset", tty, "", settings{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, newStatus(tc.stderr, &tc.flags, tc.term) != nil)
		})
	}
}

// TestStatusLineText: what the line says, a tool's name made visible, and
// cut to the terminal's width; nothing while the text or the prompt is on
// the line.
func TestStatusLineText(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	st := &status{w: io.Discard, width: 80, turn: 1, model: start}
	assert.Equal(t, "converse: turn 1 · model call 2s", st.line(start.Add(2500*time.Millisecond)))
	st.tools = []runningTool{{id: "a", name: "fetch", since: start}, {id: "b", name: "evil\x1b[2J", since: start.Add(time.Second)}}
	st.turn = 2
	assert.Equal(t, "converse: turn 2 · running fetch 4s, evil^[[2J 3s", st.line(start.Add(4*time.Second)))
	st.progress("a", "1/2 half way")
	assert.Equal(t, "converse: turn 2 · running fetch 4s (1/2 half way), evil^[[2J 3s", st.line(start.Add(4*time.Second)), "an MCP server's progress")
	st.width = 24
	assert.Equal(t, "converse: turn 2 · run…", st.line(start))
	st.event(converse.ApprovalRequested{Turn: 2})
	assert.Empty(t, st.line(start), "hidden while the approval prompt asks")
}

// TestStatusLineCells: the line is cut to the terminal's width in cells,
// a double-width character taking two, so that it never wraps.
func TestStatusLineCells(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		width      int
		want       string
	}{
		{"fits", "converse: 写", 20, "converse: 写"},
		{"ASCII", "converse: turn 2 · running", 24, "converse: turn 2 · run…"},
		{"CJK", "converse: 下载文件中请稍候", 24, "converse: 下载文件中请…"},
		{"CJK cut before a wide character", "converse: 下载文件中请稍候", 23, "converse: 下载文件中…"},
		{"combining marks take no cells", "converse: cafe\u0301 cafe\u0301 cafe\u0301", 25, "converse: cafe\u0301 cafe\u0301 cafe\u0301"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := fit(tt.line, tt.width)
			assert.Equal(t, tt.want, got)
			assert.Less(t, cells(got), tt.width)
		})
	}
	assert.Equal(t, 2, cells("写"))
}

// TestStatusLineResize: the status line reads the terminal's width when it
// starts, and again when the terminal is resized (SIGWINCH) while it shows.
func TestStatusLineResize(t *testing.T) {
	tty, _ := openTerminal(t)
	setSize(t, tty, 50, 24)
	st := newStatus(tty, &settings{}, "xterm")
	require.NotNil(t, st)
	assert.Equal(t, 50, st.width)
	resized := make(chan struct{}, 1)
	st.resized = func() {
		select {
		case resized <- struct{}{}:
		default:
		}
	}
	st.begin()
	defer st.end()
	setSize(t, tty, 120, 24)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGWINCH))
	<-resized
	st.mu.Lock()
	defer st.mu.Unlock()
	assert.Equal(t, 120, st.width)
}

// TestStatusLineRetry: a model call made again shows the line again, its
// time counted from the retry; a line of converse's own (status.say)
// erases the line before it is written.
func TestStatusLineRetry(t *testing.T) {
	var tty bytes.Buffer
	st := &status{w: &tty, width: 80, turn: 1, model: time.Now()}
	st.event(converse.Text{Turn: 1, Text: "Half"})
	assert.Empty(t, st.line(time.Now()), "hidden while the text is on the line")
	st.event(converse.ModelRetry{Turn: 1, Retry: 1, Err: converse.ErrStalled})
	assert.Equal(t, "converse: turn 1 · model call 0s", st.line(time.Now()))
	st.draw(st.line(time.Now()))
	tty.Reset()
	st.say(&tty, "converse: turn 1: model stalled\n")
	assert.Equal(t, "\r\x1b[Kconverse: turn 1: model stalled\n", tty.String())
}
