//go:build linux

package mcptools_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// failsafe bounds the waits for a process to report or to end; a passing
// test never waits that long.
const failsafe = 30 * time.Second

// family is a server process and the child it started.
type family struct{ server, child int }

// parentServer describes the test binary as a server in the role asParent
// or asMute, and returns a function that reads its report.
func parentServer(t *testing.T, role string) (mcptools.Server, func() family) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	s := stdio(t, "proc")
	s.Env[serverEnv] = role
	s.Stderr = w // a file: the server writes to it with no copying in between
	lines := bufio.NewReader(r)
	return s, func() family {
		t.Helper()
		require.NoError(t, r.SetReadDeadline(time.Now().Add(failsafe)))
		line, err := lines.ReadString('\n')
		require.NoError(t, err, "the server's report")
		var f family
		_, err = fmt.Sscanf(line, "server %d child %d", &f.server, &f.child)
		require.NoError(t, err, "the server's report %q", line)
		return f
	}
}

func TestServerProcessGroupIsEnded(t *testing.T) {
	cases := []struct {
		name string
		role string
		// end starts the server with s and ends it, returning its report
		end func(t *testing.T, s mcptools.Server, report func() family) family
	}{
		{"by Close", asParent, func(t *testing.T, s mcptools.Server, report func() family) family {
			b, err := mcptools.Connect(t.Context(), new(tools.Registry), s)
			require.NoError(t, err)
			f := report()
			require.NoError(t, b.Close())
			return f
		}},
		{"when the server dies", asParent, func(t *testing.T, s mcptools.Server, report func() family) family {
			_, reg := connect(t, s)
			f := report()
			_, err := call(t, reg, "proc__die", `{}`)
			require.ErrorIs(t, err, mcptools.ErrUnavailable)
			return f
		}},
		{"when the start is given up", asMute, func(t *testing.T, s mcptools.Server, report func() family) family {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := mcptools.Connect(ctx, new(tools.Registry), s)
				done <- err
			}()
			f := report()
			cancel() // as the startup timeout does: the SDK closes the connection of the handshake
			require.ErrorIs(t, <-done, context.Canceled)
			return f
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, report := parentServer(t, tc.role)
			var groups []int
			f := tc.end(t, s, func() family {
				f := report()
				for _, pid := range []int{f.server, f.child} {
					_, pgrp, ok := procStat(t, pid)
					require.True(t, ok, "process %d", pid)
					groups = append(groups, pgrp)
				}
				return f
			})
			assert.Equal(t, []int{f.server, f.server}, groups, "the server leads a group of its own, with its child")
			assert.False(t, running(f.server), "the server is reaped")
			waitEnded(t, f.child)
		})
	}
}

// procStat reads a process's state and process group from /proc; ok is
// false when there is no such process.
func procStat(t *testing.T, pid int) (state string, pgrp int, ok bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return "", 0, false
	}
	require.NoError(t, err)
	// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	require.GreaterOrEqual(t, len(fields), 3, "%s", b)
	pgrp, err = strconv.Atoi(fields[2])
	require.NoError(t, err)
	return fields[0], pgrp, true
}

// waitEnded waits for a process to end, failing the test after the failsafe
// deadline. A zombie has ended: reaping an orphan is init's business.
func waitEnded(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(failsafe); ; time.Sleep(10 * time.Millisecond) {
		state, _, ok := procStat(t, pid)
		if !ok || state == "Z" {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // not to leave it behind
			t.Fatalf("process %d is still there (state %s)", pid, state)
		}
	}
}
