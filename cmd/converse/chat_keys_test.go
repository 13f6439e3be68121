package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
)

// The keys as a terminal sends them.
const (
	left, home, end, up  = "\x1b[D", "\x1b[H", "\x1b[F", "\x1b[A"
	backspace, ctrlW     = "\x7f", "\x17"
	pasteStart, pasteEnd = "\x1b[200~", "\x1b[201~"
)

// userTexts are the texts of the user messages of the last request, the
// tool results left out.
func userTexts(srv *bedrocktest.Server) []string {
	reqs := srv.Requests()
	var texts []string
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, b := range m.Content {
			if tb, ok := b.(*types.ContentBlockMemberText); ok && m.Role == types.ConversationRoleUser {
				texts = append(texts, tb.Value)
			}
		}
	}
	return texts
}

func replies(n int) bedrocktest.Handler {
	var rs []*bedrocktest.Reply
	for i := range n {
		rs = append(rs, bedrocktest.Text("Reply "+strconv.Itoa(i+1)+"."))
	}
	return bedrocktest.Script(rs...)
}

// TestChatLineEditing: the chat's lines are edited as typed (Left, Backspace,
// Home, End, Ctrl-W). Up brings back the line before, from this run or,
// through the history file, the one before. A pasted block of lines is one
// message. The history file is its owner's only.
func TestChatLineEditing(t *testing.T) {
	historyFile := filepath.Join(t.TempDir(), "converse", "history")
	t.Setenv("CONVERSE_HISTORY", historyFile)
	srv := newServer(t, replies(5))
	typed := "What is 6 tmes 7?" + strings.Repeat(left, 6) + "i\r" +
		"Thanks!!" + backspace + "\r" +
		up + backspace + ".\r" +
		"world" + home + "hello " + end + "!\r" +
		pasteStart + "line one\nline two" + pasteEnd + "\r" +
		"\x04"
	out := runChat(t, typed, "-endpoint", srv.URL)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, []string{"What is 6 times 7?", "Thanks!", "Thanks.", "hello world!", "line one\nline two"}, userTexts(srv))

	info, err := os.Stat(historyFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	again := newServer(t, replies(1))
	out = runChat(t, up+ctrlW+"two\r\x04", "-endpoint", again.URL)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, []string{"line one\nline two"}, userTexts(again), "the pasted message of the run before, whole, its last word deleted and retyped")

	t.Setenv("CONVERSE_HISTORY", "off")
	none := newServer(t, replies(1))
	out = runChat(t, up+"new\r\x04", "-endpoint", none.URL)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, []string{"new"}, userTexts(none), "no history")
}

// TestChatHomeEndKeys: Home and End work as other terminals send them: tmux,
// screen and the Linux console ESC[1~ and ESC[4~, rxvt ESC[7~ and ESC[8~,
// application mode ESC O H and ESC O F. None inserts a letter, also when each
// byte comes on its own.
func TestChatHomeEndKeys(t *testing.T) {
	keys := []struct{ name, home, end string }{
		{"xterm", home, end},
		{"tmux", "\x1b[1~", "\x1b[4~"},
		{"rxvt", "\x1b[7~", "\x1b[8~"},
		{"application mode", "\x1bOH", "\x1bOF"},
	}
	var typed strings.Builder
	var want []string
	for _, k := range keys {
		typed.WriteString("world" + k.home + "hello " + k.end + "!" + "\x1bOD\x1bOD" + "?\r")
		want = append(want, "hello worl?d!")
	}
	typed.WriteString("\x04")
	for _, tc := range []struct {
		name string
		in   func(string) io.Reader
	}{
		{"at once", func(s string) io.Reader { return strings.NewReader(s) }},
		{"a byte at a time", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CONVERSE_HISTORY", "off")
			srv := newServer(t, replies(len(keys)))
			out := runInProcess(t, newTerminal(t, tc.in(typed.String())), "-endpoint", srv.URL)
			require.Equal(t, 0, out.code, out.stderr)
			assert.Equal(t, want, userTexts(srv))
		})
	}
}

// TestChatHistoryKeepsMessages: the history keeps what was sent, a pasted
// block as one entry that the history file gives back whole, and not the
// answers to the approval prompt.
func TestChatHistoryKeepsMessages(t *testing.T) {
	historyFile := filepath.Join(t.TempDir(), "history")
	t.Setenv("CONVERSE_HISTORY", historyFile)
	marks := filepath.Join(t.TempDir(), "marks")
	manifest := writeManifest(t, `{"tools": [{"name": "danger", "description": "Deletes.", "approve": true,
		"command": [`+quote(os.Args[0])+`, "helper-tool", "mark", `+quote(marks)+`]}]}`)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "d1", Name: "danger", Input: map[string]any{}}),
		bedrocktest.Text("Done."),
		bedrocktest.Text("Pasted."),
	))
	out := runChat(t, "Clean up\ry\r"+pasteStart+"one\n\"two\"\nthree"+pasteEnd+"\r\x04",
		"-endpoint", srv.URL, "-tools", manifest, "-no-builtins")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, 1, runs(t, marks), "approved at the prompt")
	h := loadHistory(historyFile)
	assert.Equal(t, []string{"Clean up", "one\n\"two\"\nthree"}, h.entries, "no y; the pasted block one entry")

	again := newServer(t, replies(2))
	out = runChat(t, up+"\r"+up+up+"\r\x04", "-endpoint", again.URL)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, []string{"one\n\"two\"\nthree", "Clean up"}, userTexts(again))
}

func TestHistoryPath(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	for _, tt := range []struct{ xdg, converse, want string }{
		{"", "", "/home/ann/.local/state/converse/history"},
		{"/state", "", "/state/converse/history"},
		{"/state", "/tmp/h", "/tmp/h"},
		{"/state", "off", ""},
	} {
		t.Setenv("XDG_STATE_HOME", tt.xdg)
		t.Setenv("CONVERSE_HISTORY", tt.converse)
		assert.Equal(t, tt.want, historyPath(), "XDG_STATE_HOME=%q CONVERSE_HISTORY=%q", tt.xdg, tt.converse)
	}
}

// runChat chats in process on a pseudo-terminal, typed the keys the
// editor reads.
func runChat(t *testing.T, typed string, args ...string) outcome {
	t.Helper()
	return runInProcess(t, newTerminal(t, strings.NewReader(typed)), args...)
}

// TestChatCommands: /tools lists the tools, /history the conversation,
// /save writes its state (which -session reads), /reset starts afresh, an
// unknown command says how to send a line starting with a slash, //
// sends one, /exit leaves.
func TestChatCommands(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "saved.json")
	srv := newServer(t, replies(3))
	out := runChat(t, "/help\rHello\r/tools\r/history\r/save "+saved+"\r/bogus\r//etc\r/reset\rAfresh\r/exit\rnot sent\r", "-endpoint", srv.URL)
	require.Equal(t, 0, out.code, out.stderr)
	mustContain(t, "stderr", out.stderr, "/save FILE", "Ctrl-C during a turn cancels it", "Saved 2 messages to "+saved,
		"converse: unknown command /bogus: /help lists them; //TEXT sends /TEXT", "A new conversation.")
	mustContain(t, "stdout", out.stdout, "calculator", "built-in", "user: Hello\nassistant: Reply 1.\n")
	assert.Equal(t, []string{"Afresh"}, userTexts(srv), "the conversation after /reset")
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "/etc", reqs[1].Messages[2].Content[0].(*types.ContentBlockMemberText).Value)

	st, err := filestore.Store{Dir: filepath.Dir(saved)}.Load(context.Background(), filepath.Base(saved))
	require.NoError(t, err)
	assert.Len(t, st.Messages, 2, "the saved state, as a -session file")
}

// TestChatCtrlCAtThePrompt: a Ctrl-C at the prompt drops the line typed
// and says how to leave, and the chat goes on; a second in a row leaves.
func TestChatCtrlCAtThePrompt(t *testing.T) {
	srv := newServer(t, replies(1))
	out := runChat(t, "typed, then\x03Hi\r\x03\x03never sent\r", "-endpoint", srv.URL)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, 2, strings.Count(out.stderr, "(Ctrl-C again, Ctrl-D or /exit leaves)"), out.stderr)
	assert.Equal(t, []string{"Hi"}, userTexts(srv), "the line cancelled by Ctrl-C is not sent")
}

// TestChatCtrlCMidTool runs the binary on its controlling terminal. A Ctrl-C
// while a tool runs stops the task, not the chat. The tool's program is gone
// before the prompt returns. The next message is the next request's last
// message, beside the stopped call's result, which says in plain words that
// the user stopped it. No tool round of the old task runs first.
func TestChatCtrlCMidTool(t *testing.T) {
	t.Parallel()
	tty, keyboard := openTerminal(t)
	marks := filepath.Join(t.TempDir(), "marks")
	pidPipe, pipe := pidPipe(t)
	manifest := writeManifest(t, `{"tools": [{"name": "hang", "description": "Hangs.", "timeout": "1h",
		"command": [`+quote(os.Args[0])+`, "helper-tool", "mark-hang", `+quote(marks)+`, `+quote(pidPipe)+`]}]}`)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "h1", Name: "hang"}),
		bedrocktest.Text("Hello again."),
	))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t), "-endpoint", srv.URL, "-tools", manifest, "-no-builtins")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0} // stdin, the tty
	stdout, stderr := newWatched(), newWatched()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, stdout, stderr
	require.NoError(t, cmd.Start())

	stderr.waitFor(t, "> ", 1)
	_, err := keyboard.WriteString("hang, please\r")
	require.NoError(t, err)
	line, err := bufio.NewReader(pipe).ReadString('\n') // the tool runs
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	_, err = keyboard.WriteString("\x03") // the terminal sends SIGINT
	require.NoError(t, err)
	stderr.waitFor(t, "converse: task stopped", 1)
	assert.True(t, gone(pid), "the tool's program survived the cancelled turn")
	stderr.waitFor(t, "> ", 2)
	_, err = keyboard.WriteString("hello\r")
	require.NoError(t, err)
	stdout.waitFor(t, "Hello again.", 1)
	stderr.waitFor(t, "> ", 3)
	_, err = keyboard.WriteString("\x04")
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), stderr.String())
	checkRace(t, 0, stderr.String())

	assert.Equal(t, "Hello again.\n", stdout.String())
	reqs := srv.Requests()
	require.Len(t, reqs, 2, "the call, then the next message with the stopped call's result")
	assert.Equal(t, `Error: the task was stopped by the user (Ctrl-C) while tool "hang" ran; it may or may not have taken effect`,
		resultText(toolResults(t, reqs[1])["h1"]))
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	assert.Equal(t, "hello", last.Content[len(last.Content)-1].(*types.ContentBlockMemberText).Value)
	assert.Equal(t, []string{"hang, please", "hello"}, userTexts(srv))
}
