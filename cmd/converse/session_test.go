package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// runDetached runs the binary in a session of its own, so that it has no
// terminal to ask on, whatever the test runs in.
func runDetached(t *testing.T, stdin string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin = strings.NewReader(stdin)
	return runCommand(t, cmd)
}

func runs(t *testing.T, marks string) int {
	t.Helper()
	b, err := os.ReadFile(marks)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "ran\n")
}

// TestApprovalWithoutTerminal: with no terminal, a call of a tool marked
// "approve" is denied and the model hears why; -yes approves it.
func TestApprovalWithoutTerminal(t *testing.T) {
	t.Parallel()
	marks := filepath.Join(t.TempDir(), "marks")
	manifest := writeManifest(t, `{"tools": [{"name": "send", "description": "Sends.", "approve": true,
		"command": [`+quote(os.Args[0])+`, "helper-tool", "mark", `+quote(marks)+`]}]}`)
	for _, yes := range []bool{false, true} {
		srv := newServer(t, bedrocktest.Script(
			bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "send"}),
			bedrocktest.Text("Finished."),
		))
		args := []string{"-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "-v"}
		if yes {
			args = append(args, "-yes")
		}
		out := runDetached(t, "", append(args, "send it")...)
		require.Equal(t, 0, out.code, out.stderr)
		assert.Equal(t, "Finished.\n", out.stdout)
		result := resultText(toolResults(t, srv.Requests()[1])["t1"])
		if yes {
			assert.Equal(t, 1, runs(t, marks))
			assert.Equal(t, `"marked"`, result)
			assert.Contains(t, out.stderr, "· send t1 approved")
		} else {
			assert.Zero(t, runs(t, marks), "the tool never runs without a yes")
			assert.Contains(t, result, "Error: the call was denied by converse: there is no terminal")
			assert.Contains(t, out.stderr, "· send t1 denied by converse: there is no terminal")
		}
	}
}

// TestChatApprovalOnTerminal chats on a terminal that is also converse's
// controlling terminal (/dev/tty), where the approval prompt asks. The line
// typed after the message answers the prompt, though the chat reads the same
// terminal for its next message.
func TestChatApprovalOnTerminal(t *testing.T) {
	t.Parallel()
	tty, keyboard := openTerminal(t)
	marks := filepath.Join(t.TempDir(), "marks")
	manifest := writeManifest(t, `{"tools": [{"name": "send", "description": "Sends.", "approve": true,
		"command": [`+quote(os.Args[0])+`, "helper-tool", "mark", `+quote(marks)+`]}]}`)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "send"}),
		bedrocktest.Text("Sent."),
	))
	_, err := keyboard.WriteString("send it\ny\n") // typed ahead: the chat's reader reads on
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t), "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "-v")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0} // stdin, the tty
	cmd.Stdin = tty
	var stdout bytes.Buffer
	stderr := newWatched()
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	require.NoError(t, cmd.Start())
	stderr.waitFor(t, "> ", 2)
	_, err = keyboard.WriteString("\x04")
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), stderr.String())
	checkRace(t, 0, stderr.String())
	assert.Equal(t, "Sent.\n", stdout.String())
	assert.Contains(t, stderr.String(), "· send t1 approved")
	assert.Equal(t, 1, runs(t, marks))
	reqs := srv.Requests()
	require.Len(t, reqs, 2, "model calls: the answer y is no chat message\n%s", stderr.String())
	assert.Equal(t, `"marked"`, resultText(toolResults(t, reqs[1])["t1"]))
}

// TestSessionCrashAndResume kills converse with SIGKILL while a tool of its
// second round runs, then runs it again on the session with no prompt: it
// resumes and finishes, and no tool call ran twice.
func TestSessionCrashAndResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marks, session := filepath.Join(dir, "marks"), filepath.Join(dir, "session.json")
	pidPipe, pipe := pidPipe(t)
	self := quote(os.Args[0])
	manifest := writeManifest(t, `{"tools": [
		{"name": "mark", "description": "Marks.", "command": [`+self+`, "helper-tool", "mark", `+quote(marks)+`]},
		{"name": "hang", "description": "Marks and hangs.", "timeout": "1h",
		 "command": [`+self+`, "helper-tool", "mark-hang", `+quote(marks)+`, `+quote(pidPipe)+`]}]}`)
	first := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "m1", Name: "mark"}),
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "h1", Name: "hang"}),
	))
	cmd := startUntilHang(t, pipe, first.URL, manifest, session)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.Equal(t, 2, runs(t, marks))

	second := newServer(t, bedrocktest.Script(bedrocktest.Text("Recovered.")))
	out := runDetached(t, "", "-endpoint", second.URL, "-tools", manifest, "-no-builtins", "-session", session, "-v")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Recovered.\n", out.stdout)
	resumed, interrupted := strings.Index(out.stderr, "· resuming the session: 4 messages, 0 decisions\n"), strings.Index(out.stderr, "← hang h1 error: the call was interrupted before it returned")
	assert.True(t, resumed >= 0 && interrupted > resumed, "the resume, then the interrupted call:\n%s", out.stderr)
	assert.Equal(t, 2, runs(t, marks), "no call ran again")
	req := second.Requests()[0]
	assert.Len(t, req.Messages, 5, "the prompt and both rounds")
	assert.Contains(t, resultText(toolResults(t, req)["h1"]), "Error: the call was interrupted")
	info, err := os.Stat(session)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	out = runDetached(t, "", "-endpoint", second.URL, "-session", session)
	assert.Equal(t, 2, out.code, "a finished session with no prompt is a usage error")
	assert.Contains(t, out.stderr, "is finished: give a prompt")
}

// TestSessionResumeWithPendingApproval resumes a session saved while a
// call awaited approval: with -v the trace says it resumes first, then the
// decision, then the call, each count worded for its number.
func TestSessionResumeWithPendingApproval(t *testing.T) {
	t.Parallel()
	marks, session := filepath.Join(t.TempDir(), "marks"), filepath.Join(t.TempDir(), "session.json")
	manifest := writeManifest(t, `{"tools": [{"name": "send", "description": "Sends.", "approve": true,
		"command": [`+quote(os.Args[0])+`, "helper-tool", "mark", `+quote(marks)+`]}]}`)
	require.NoError(t, os.WriteFile(session, []byte(`{"version": 1, "modelId": "`+defaultModel+`", "messages": [
		{"role": "user", "content": [{"text": "send it"}]},
		{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "send", "input": {}}}]}],
		"openTurn": {"results": [], "answered": [], "pending": [{"toolUseId": "t1", "name": "send", "input": {}}]}}`), 0o600))
	srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Sent.")))
	out := runDetached(t, "", "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "-session", session, "-yes", "-v")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Sent.\n", out.stdout)
	assert.Equal(t, 1, runs(t, marks))
	var lines []string
	for _, line := range strings.Split(out.stderr, "\n") {
		if strings.HasPrefix(line, "· resuming") || strings.HasPrefix(line, "· send") || strings.HasPrefix(line, "→ send") {
			lines = append(lines, line)
		}
	}
	assert.Equal(t, []string{"· resuming the session: 2 messages, 1 decision", "· send t1 approved", "→ send t1 {}"}, lines, out.stderr)
}

// TestSessionWithoutPrompt: -session with no prompt and nothing to resume
// is a usage error saying why: the file is not there, or its conversation
// is finished.
func TestSessionWithoutPrompt(t *testing.T) {
	t.Parallel()
	finished := filepath.Join(t.TempDir(), "finished.json")
	require.NoError(t, os.WriteFile(finished, []byte(`{"version": 1, "modelId": "`+defaultModel+`", "messages": [
		{"role": "user", "content": [{"text": "hi"}]}, {"role": "assistant", "content": [{"text": "Hello."}]}]}`), 0o600))
	missing := filepath.Join(t.TempDir(), "missing.json")
	srv := newServer(t, bedrocktest.Script())
	for _, tc := range []struct{ session, want string }{
		{missing, "converse: -session " + missing + " does not exist yet: give a prompt to start the conversation"},
		{finished, "converse: -session " + finished + " is finished: give a prompt to continue it"},
	} {
		out := runDetached(t, "", "-endpoint", srv.URL, "-session", tc.session)
		assert.Equal(t, 2, out.code, out.stderr)
		assert.Contains(t, out.stderr, tc.want)
		assert.NoFileExists(t, missing)
	}
	assert.Empty(t, srv.Requests())
}

// TestSessionTwoProcesses runs converse on a session while another converse
// holds it (its tool hangs). The second fails at once (exit 1), naming the
// session and the first's process, and runs no tool and asks no model. After
// the first is killed the session resumes, each call having run once.
func TestSessionTwoProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marks, session := filepath.Join(dir, "marks"), filepath.Join(dir, "session.json")
	manifest, pipe := hangManifest(t, marks)
	first := newServer(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "h1", Name: "hang"})))
	cmd := startUntilHang(t, pipe, first.URL, manifest, session)

	second := newServer(t, bedrocktest.Script(bedrocktest.Text("Recovered.")))
	for _, args := range [][]string{{"another prompt"}, {}} {
		out := runDetached(t, "", append([]string{"-endpoint", second.URL, "-tools", manifest, "-no-builtins", "-session", session}, args...)...)
		assert.Equal(t, exitConflict, out.code, out.stderr)
		assert.Contains(t, out.stderr, fmt.Sprintf(`session in use: "session.json" is held by process %d`, cmd.Process.Pid))
	}
	assert.Empty(t, second.Requests())
	assert.Equal(t, 1, runs(t, marks))

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	out := runDetached(t, "", "-endpoint", second.URL, "-tools", manifest, "-no-builtins", "-session", session)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Recovered.\n", out.stdout)
	assert.Equal(t, 1, runs(t, marks), "no call ran twice")
}

// startUntilHang runs converse with prompt "go" on session, with the
// manifest whose hang tool writes its pid to pipe, and returns once that
// tool runs (the tool is killed at the test's end).
func startUntilHang(t *testing.T, pipe *os.File, url, manifest, session string) *exec.Cmd {
	t.Helper()
	cmd, _, _ := startHang(t, testEnv(t), pipe, "-endpoint", url, "-tools", manifest, "-no-builtins", "-session", session, "go")
	return cmd
}

// hangManifest writes a manifest of the tool "hang", which marks marks,
// writes its pid to pipe and hangs.
func hangManifest(t *testing.T, marks string) (manifest string, pipe *os.File) {
	t.Helper()
	pidPipe, pipe := pidPipe(t)
	return writeManifest(t, `{"tools": [{"name": "hang", "description": "Marks and hangs.", "timeout": "1h",
		"command": [`+quote(os.Args[0])+`, "helper-tool", "mark-hang", `+quote(marks)+`, `+quote(pidPipe)+`]}]}`), pipe
}

// startHang runs converse with env and args, whose hang tool (see
// hangManifest) writes its pid to pipe, and returns once that tool runs:
// the process, its stderr, and the tool's pid (killed at the test's end).
func startHang(t *testing.T, env []string, pipe *os.File, args ...string) (cmd *exec.Cmd, stderr *strings.Builder, tool int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cmd = binaryCommand(ctx, env, args...)
	stderr = &strings.Builder{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	line := make([]byte, 32)
	n, err := pipe.Read(line) // the hanging tool runs
	require.NoError(t, err)
	tool, err = strconv.Atoi(strings.TrimSpace(string(line[:n])))
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Kill(tool, syscall.SIGKILL) })
	return cmd, stderr, tool
}

// TestSessionRemovedDuringTheRun: a session file removed while a tool runs
// fails the run's next save, exit 7 as for a conflict. The error says the
// session was removed rather than that another process wrote it. Nothing is
// written again.
func TestSessionRemovedDuringTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manifest, pipe := hangManifest(t, filepath.Join(dir, "marks"))
	session := filepath.Join(dir, "session.json")
	srv := newServer(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "h1", Name: "hang"}), bedrocktest.Text("Done.")))
	cmd, stderr, tool := startHang(t, testEnv(t), pipe, "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "-session", session, "go")

	require.NoError(t, os.Remove(session))
	require.NoError(t, syscall.Kill(tool, syscall.SIGKILL)) // the call ends; its result is saved next
	err := cmd.Wait()
	checkRace(t, cmd.ProcessState.ExitCode(), stderr.String())
	require.Error(t, err)
	assert.Equal(t, exitConflict, cmd.ProcessState.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "-session "+session+": the session was removed during the run, so this run stopped without writing it again")
	assert.NoFileExists(t, session)
}

// TestSessionNotASessionFile: a -session file that is not JSON, or JSON
// that is not a conversation's state, is a usage error saying so and what
// to do, and is left as it was.
func TestSessionNotASessionFile(t *testing.T) {
	t.Parallel()
	srv := newServer(t, bedrocktest.Script())
	for name, content := range map[string]string{
		"text":   "notes about the project\n",
		"array":  `[1, 2, 3]`,
		"object": `{"name": "not a state"}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notes.json")
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-session", path, "hi")
			assert.Equal(t, 2, out.code, out.stderr)
			assert.Contains(t, out.stderr, "converse: -session "+path+" is not a session file (")
			assert.Contains(t, out.stderr, "): move it aside, or give another -session\n")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, content, string(b))
		})
	}
	assert.Empty(t, srv.Requests())
}
