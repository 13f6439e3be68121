//go:build unix

package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
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

	"github.com/tooluse/bedrock/tools"
)

var objectSchema = json.RawMessage(`{"type":"object"}`)

// shell returns a Command tool running script with /bin/sh: the script is
// the test's program, not a way to run the tool's input.
func shell(t *testing.T, script string, opts ...func(*tools.Options)) *tools.Tool {
	t.Helper()
	return command(t, []string{"/bin/sh", "-c", script, "sh"}, opts...)
}

func command(t *testing.T, argv []string, opts ...func(*tools.Options)) *tools.Tool {
	t.Helper()
	tool, err := tools.Command("cmd", "Runs a program.", objectSchema, argv, opts...)
	require.NoError(t, err)
	return tool
}

func TestCommandResult(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   any
	}{
		{"JSON object", `echo '{"ok": true}'`, json.RawMessage(`{"ok": true}`)},
		{"JSON number", `echo ' 42 '`, json.RawMessage(`42`)},
		{"text", `printf '  hello world \n\n'`, "hello world"},
		{"text that starts like JSON", `echo '{not json'`, "{not json"},
		{"nothing", `true`, ""},
		{"JSON with bytes that are not UTF-8", `printf '{"a":"\377x"}'`, json.RawMessage("{\"a\":\"\uFFFDx\"}")},
		{"text with bytes that are not UTF-8", `printf 'caf\303 \377'`, "caf\uFFFD \uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := shell(t, tt.script).Call(context.Background(), json.RawMessage(`{}`))
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
		})
	}
}

func TestCommandReceivesInputOnStdin(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"unit":{"type":"string","default":"kg"}}}`)
	tool, err := tools.Command("weigh", "Weighs.", schema, []string{"cat"})
	require.NoError(t, err)
	out, err := tool.Call(context.Background(), json.RawMessage(`{"n": 3}`))
	require.NoError(t, err)
	require.IsType(t, json.RawMessage{}, out)
	assert.JSONEq(t, `{"n":3,"unit":"kg"}`, string(out.(json.RawMessage)))
}

func TestCommandValidatesBeforeRunning(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	schema := json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`)
	tool, err := tools.Command("touch", "Touches.", schema, []string{"touch", marker})
	require.NoError(t, err)
	_, err = tool.Call(context.Background(), json.RawMessage(`{"y":1}`))
	require.ErrorIs(t, err, tools.ErrInvalidInput)
	assert.NoFileExists(t, marker)
}

func TestCommandArgvIsLiteral(t *testing.T) {
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	args := []string{"a b", "$(touch " + pwned + ")", "; touch " + pwned, "`touch " + pwned + "`", "*", "> out", "$HOME"}
	tool := command(t, append([]string{"printf", `%s\n`}, args...))
	out, err := tool.Call(context.Background(), json.RawMessage(`{"cmd":"; touch `+pwned+`"}`))
	require.NoError(t, err)
	assert.Equal(t, strings.Join(args, "\n"), out)
	assert.NoFileExists(t, pwned)
}

func TestCommandInputStaysOutOfEnvironment(t *testing.T) {
	out, err := command(t, []string{"env"}).Call(context.Background(), json.RawMessage(`{"secret":"zz-marker"}`))
	require.NoError(t, err)
	assert.NotContains(t, out, "zz-marker")
}

// environ runs /usr/bin/env, which prints its environment, and returns the
// variables it printed.
func environ(t *testing.T, opts ...func(*tools.Options)) map[string]string {
	t.Helper()
	return environOf(t, command(t, []string{"/usr/bin/env"}, opts...))
}

// environOf calls tool, a command running /usr/bin/env, and returns the
// variables it printed.
func environOf(t *testing.T, tool *tools.Tool) map[string]string {
	t.Helper()
	out, err := tool.Call(context.Background(), nil)
	require.NoError(t, err)
	vars := map[string]string{}
	for _, line := range strings.Split(out.(string), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vars[k] = v
		}
	}
	return vars
}

func TestCommandEnvironment(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAZZMARKER")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret-marker")
	t.Setenv("AWS_SESSION_TOKEN", "token-marker")
	t.Setenv("GITHUB_TOKEN", "gh-marker")
	t.Setenv("TOOL_SETTING", "from-parent")
	t.Setenv("TZ", "Europe/Paris")
	t.Setenv("LANG", "C.UTF-8")

	t.Run("minimal by default", func(t *testing.T) {
		vars := environ(t)
		assert.Equal(t, os.Getenv("PATH"), vars["PATH"])
		assert.Equal(t, "Europe/Paris", vars["TZ"])
		assert.Equal(t, "C.UTF-8", vars["LANG"])
		for k, v := range vars {
			assert.NotContains(t, []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "TOOL_SETTING"}, k)
			assert.NotContains(t, v, "marker")
		}
	})
	t.Run("inherited and set variables", func(t *testing.T) {
		env := map[string]string{"MODE": "test", "TZ": "UTC", "AWS_REGION": "eu-west-3"}
		tool := command(t, []string{"/usr/bin/env"}, func(o *tools.Options) {
			o.InheritEnv = []string{"TOOL_SETTING", "AWS_SESSION_TOKEN", "UNSET_VARIABLE"}
			o.Env = env
		})
		env["MODE"] = "changed after the tool was made"
		vars := environOf(t, tool)
		assert.Equal(t, "from-parent", vars["TOOL_SETTING"])
		assert.Equal(t, "token-marker", vars["AWS_SESSION_TOKEN"], "an AWS_* variable named explicitly is passed")
		assert.Equal(t, "test", vars["MODE"], "the tool keeps its own copy of Env")
		assert.Equal(t, "UTC", vars["TZ"], "a set variable wins over the inherited one")
		assert.Equal(t, "eu-west-3", vars["AWS_REGION"], "an AWS_* variable set explicitly is set")
		assert.NotContains(t, vars, "UNSET_VARIABLE")
		assert.NotContains(t, vars, "AWS_ACCESS_KEY_ID")
		assert.NotContains(t, vars, "AWS_SECRET_ACCESS_KEY")
	})
	t.Run("read when the program starts", func(t *testing.T) {
		tool := command(t, []string{"/usr/bin/env"}, func(o *tools.Options) { o.InheritEnv = []string{"LATE"} })
		t.Setenv("LATE", "now")
		out, err := tool.Call(context.Background(), nil)
		require.NoError(t, err)
		assert.Contains(t, strings.Split(out.(string), "\n"), "LATE=now")
	})
}

func TestCommandIgnoresUnreadInput(t *testing.T) {
	big := `{"pad":"` + strings.Repeat("x", 1<<20) + `"}` // more than a pipe holds
	out, err := command(t, []string{"true"}).Call(context.Background(), json.RawMessage(big))
	require.NoError(t, err)
	assert.Equal(t, "", out)
}

func TestCommandExitError(t *testing.T) {
	_, err := shell(t, `echo partial; echo "  something broke  " >&2; exit 3`).Call(context.Background(), nil)
	var exitErr *tools.ExitError
	require.ErrorAs(t, err, &exitErr)
	assert.Equal(t, 3, exitErr.Code)
	assert.Equal(t, "something broke", exitErr.Stderr)
	assert.EqualError(t, err, "exit status 3: something broke")

	_, err = shell(t, `exit 1`).Call(context.Background(), nil)
	assert.EqualError(t, err, "exit status 1")
}

func TestCommandStderrTail(t *testing.T) {
	_, err := shell(t, `head -c 5000 /dev/zero | tr '\0' x >&2; echo END >&2; exit 1`).Call(context.Background(), nil)
	var exitErr *tools.ExitError
	require.ErrorAs(t, err, &exitErr)
	assert.True(t, strings.HasPrefix(exitErr.Stderr, "...xxx"), exitErr.Stderr[:10])
	assert.True(t, strings.HasSuffix(exitErr.Stderr, "xxxEND"))
	assert.LessOrEqual(t, len(exitErr.Stderr), 2<<10+3)
}

func TestCommandOutputTooLarge(t *testing.T) {
	start := time.Now()
	_, err := command(t, []string{"yes", "flood"}).Call(context.Background(), nil)
	require.ErrorIs(t, err, tools.ErrOutputTooLarge)
	assert.EqualError(t, err, "output too large: the program wrote more than 1048576 bytes to standard output and was killed")
	assert.Less(t, time.Since(start), 5*time.Second, "the endless writer was killed")

	out, err := shell(t, `head -c 1048576 /dev/zero | tr '\0' y`).Call(context.Background(), nil)
	require.NoError(t, err, "exactly 1 MiB is allowed")
	assert.Len(t, out, 1<<20)

	const two = 2 << 20
	bigger := shell(t, `head -c 2097152 /dev/zero | tr '\0' y`, func(o *tools.Options) { o.MaxOutput = two })
	assert.Equal(t, two, bigger.MaxOutput())
	out, err = bigger.Call(context.Background(), nil)
	require.NoError(t, err, "a larger WithMaxOutput raises the program's limit")
	assert.Len(t, out, two)
}

// TestCommandTimeoutKillsProcessGroup runs a script that starts a grandchild
// holding the output pipe, and checks that both die at the timeout.
func TestCommandTimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	tool := command(t, []string{"/bin/sh", "-c", grandchild + "wait", pidFile}, func(o *tools.Options) { o.Timeout = 200 * time.Millisecond })

	_, err := tool.Call(context.Background(), nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "the program was killed: it ran longer than the tool's timeout of 200ms")
	// The grandchild held the output pipe: it dies with the group, so the
	// call does not wait out WaitDelay for it.
	assertDies(t, readPid(t, pidFile))
}

func TestCommandCancelKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	tool := command(t, []string{"/bin/sh", "-c", grandchild + "wait", pidFile})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := tool.Call(ctx, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.EqualError(t, err, "the program was killed: the call was canceled")
	assertDies(t, readPid(t, pidFile))
}

func TestCommandCallerDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := command(t, []string{"sleep", "10"}).Call(ctx, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "the program was killed: the call timed out")
}

// TestCommandEscapedGrandchild checks that a process that left the program's
// process group and holds its output cannot hang the call.
func TestCommandEscapedGrandchild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	tool := command(t, []string{"/bin/sh", "-c", "setsid " + grandchild + "echo done", pidFile})
	start := time.Now()
	_, err := tool.Call(context.Background(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kept its output open")
	assert.Less(t, time.Since(start), 10*time.Second)
	if pid := readPid(t, pidFile); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL) // beyond the tool's reach: clean up
	}
}

// TestCommandLeavesNothingRunning: what the program started and left in its
// process group dies when the program has exited, whether it holds the
// program's output (the call then fails after WaitDelay) or not.
func TestCommandLeavesNothingRunning(t *testing.T) {
	for _, tt := range []struct {
		name, script string
		fails        bool
	}{
		{"a background child", `sleep 30 >/dev/null 2>&1 & echo $! > "$0.tmp"; mv "$0.tmp" "$0"; echo done`, false},
		{"a child holding the output", grandchild + "echo done", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			out, err := command(t, []string{"/bin/sh", "-c", tt.script, pidFile}).Call(context.Background(), nil)
			if tt.fails {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "kept its output open")
			} else {
				require.NoError(t, err)
				assert.Equal(t, "done", out)
			}
			assertDies(t, readPid(t, pidFile))
		})
	}
}

func TestCommandProgramNotFound(t *testing.T) {
	_, err := command(t, []string{"/nonexistent/program"}).Call(context.Background(), nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.EqualError(t, err, `the program "/nonexistent/program" could not be started: no such file or directory`)

	_, err = command(t, []string{"no-such-program-anywhere"}).Call(context.Background(), nil)
	require.ErrorIs(t, err, exec.ErrNotFound)
	assert.EqualError(t, err, `the program "no-such-program-anywhere" was not found`)

	dir := t.TempDir()
	_, err = command(t, []string{dir}).Call(context.Background(), nil)
	assert.EqualError(t, err, `the program "`+dir+`" could not be started: permission denied`)
	var exitErr *tools.ExitError
	assert.False(t, errors.As(err, &exitErr))
}

func TestCommandTimeout(t *testing.T) {
	assert.Equal(t, 30*time.Second, command(t, []string{"true"}).Timeout())
	assert.Equal(t, 30*time.Second, command(t, []string{"true"}, func(o *tools.Options) { o.Timeout = 0 }).Timeout())
	assert.Equal(t, 5*time.Second, command(t, []string{"true"}, func(o *tools.Options) { o.Timeout = 5 * time.Second }).Timeout())
	_, err := tools.Command("cmd", "Runs.", objectSchema, []string{"true"}, func(o *tools.Options) { o.Timeout = -1 })
	assert.ErrorIs(t, err, tools.ErrInvalidTool)
	_, err = tools.Command("cmd", "Runs.", json.RawMessage(`{"type":"string"}`), []string{"true"})
	assert.ErrorIs(t, err, tools.ErrInvalidTool)
}

func TestCommandCopiesArgv(t *testing.T) {
	argv := []string{"echo", "original"}
	tool := command(t, argv)
	argv[1] = "changed"
	out, err := tool.Call(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, "original", out)
}

// grandchild starts "sleep 30" in the background, holding the script's
// output, and writes its pid to the file named by $0 (atomically, by rename).
const grandchild = `sleep 30 & echo $! > "$0.tmp"; mv "$0.tmp" "$0"; `

// assertDies waits for pid to be gone or a zombie (dead, but not yet reaped
// by its new parent).
func assertDies(t *testing.T, pid int) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to inspect processes")
	}
	assert.Eventually(t, func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		_, state, _ := strings.Cut(string(stat), ") ")
		return strings.HasPrefix(state, "Z")
	}, 2*time.Second, 10*time.Millisecond, "grandchild %d survived", pid)
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	var data []byte
	require.Eventually(t, func() bool {
		var err error
		data, err = os.ReadFile(path)
		return err == nil
	}, 2*time.Second, 10*time.Millisecond, "the script wrote no pid")
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	return pid
}
