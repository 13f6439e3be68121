package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
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
	pidPipe, pipe := pidPipe(t)
	manifest := writeManifest(t, `{"tools": [{"name": "spawn", "description": "Spawns.",
		"command": [`+quote(os.Args[0])+`, "helper-tool", "spawn", `+quote(pidPipe)+`], "timeout": "1h"}]}`)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "spawn"}),
		bedrocktest.Text("unreached"),
	))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t), "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "go")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	pids := readPids(t, pipe, exited)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := <-exited
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr:\n%s", stderr.String())
	checkRace(t, exit.ExitCode(), stderr.String())
	assert.Equal(t, exitInterrupted, exit.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "converse: interrupted")
	for _, pid := range pids {
		assert.True(t, gone(pid), "process %d of the tool survived converse", pid)
	}
}

// readPids waits for the spawn helper to write its pid and its child's to
// pipe, which says both run; it fails the test if converse exits first.
func readPids(t *testing.T, pipe *os.File, exited <-chan error) []int {
	t.Helper()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(pipe).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		var pids []int
		for _, f := range strings.Fields(s) {
			pid, err := strconv.Atoi(f)
			require.NoError(t, err)
			pids = append(pids, pid)
		}
		require.Len(t, pids, 2, "the spawn helper wrote %q", s)
		return pids
	case err := <-exited:
		pipe.Close() // ends the read
		require.FailNow(t, "converse exited before the tool started", "%v", err)
		return nil
	}
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
