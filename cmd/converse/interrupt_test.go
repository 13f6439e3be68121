package main

import (
	"bytes"
	"errors"
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

// TestInterruptKillsTools: Ctrl-C during a tool call exits 130 only after
// the tool's whole process group, the child it started included, is gone.
func TestInterruptKillsTools(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	manifest := writeManifest(t, `{"tools": [{"name": "spawn", "description": "Spawns.",
		"command": [`+quote(os.Args[0])+`, "helper-tool", "spawn", `+quote(pidFile)+`], "timeout": "1h"}]}`)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "spawn"}),
		bedrocktest.Text("unreached"),
	))
	cmd := exec.Command(binary, "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "go")
	cmd.Env = testEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })

	pids := waitForPids(t, pidFile)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "converse ended with %v; stderr:\n%s", err, stderr.String())
	assert.Equal(t, exitInterrupted, exit.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "converse: interrupted")
	for _, pid := range pids {
		assert.True(t, gone(pid), "process %d of the tool survived converse", pid)
	}
}

// waitForPids waits for the spawn helper to say it and its child run.
func waitForPids(t *testing.T, file string) []int {
	t.Helper()
	for range 1000 {
		if data, err := os.ReadFile(file); err == nil {
			var pids []int
			for _, f := range strings.Fields(string(data)) {
				pid, err := strconv.Atoi(f)
				require.NoError(t, err)
				pids = append(pids, pid)
			}
			return pids
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the tool did not start")
	return nil
}

// gone reports whether process pid has ended: it no longer exists, or is a
// zombie waiting for its new parent to reap it. A killed process takes a
// moment to die, so gone gives it a few seconds, which only a survivor uses
// up.
func gone(pid int) bool {
	for range 250 {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
		}
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
