package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestProgramsDieWithConverse kills converse with SIGKILL, which it cannot
// catch, while a command tool's program runs. It does so again while an MCP
// server that ignores the end of its standard input and SIGTERM starts. Either
// program is killed with it, by its parent-death signal.
func TestProgramsDieWithConverse(t *testing.T) {
	t.Parallel()
	self := quote(os.Args[0])
	for _, tc := range []struct {
		name string
		args func(marks, pidPipe string) []string
	}{
		{"command tool", func(marks, pidPipe string) []string {
			manifest := writeManifest(t, `{"tools": [{"name": "hang", "description": "Marks and hangs.", "timeout": "1h",
				"command": [`+self+`, "helper-tool", "mark-hang", `+quote(marks)+`, `+quote(pidPipe)+`]}]}`)
			srv := newServer(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "h1", Name: "hang"})))
			return []string{"-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "go"}
		}},
		{"MCP server", func(marks, pidPipe string) []string {
			config := filepath.Join(t.TempDir(), "mcp.json")
			require.NoError(t, os.WriteFile(config, []byte(`{"mcpServers": {"stubborn": {"command": `+self+`,
				"args": ["helper-tool", "mark-hang", `+quote(marks)+`, `+quote(pidPipe)+`]}}}`), 0o600))
			srv := newServer(t, bedrocktest.Script())
			return []string{"-endpoint", srv.URL, "-mcp", config, "go"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			marks := filepath.Join(t.TempDir(), "marks")
			pidPipe, pipe := pidPipe(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := binaryCommand(ctx, testEnv(t), tc.args(marks, pidPipe)...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			line := make([]byte, 32)
			n, err := pipe.Read(line) // the program runs
			require.NoError(t, err)
			pid, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
			require.NoError(t, err)
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // should the test fail
			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()
			checkRace(t, 0, stderr.String())
			requireGone(t, pid)
		})
	}
}

// requireGone waits for the process pid to end: to have no /proc entry, or
// to be a zombie no one reaped. The kernel sent the parent-death signal
// before converse's exit was reported; this waits for its delivery, and
// fails the test if the process still runs after a minute.
func requireGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		// The state follows the command's name, in parentheses.
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			return
		}
		require.True(t, time.Now().Before(deadline), "process %d outlived converse: %s", pid, stat)
		time.Sleep(10 * time.Millisecond)
	}
}
