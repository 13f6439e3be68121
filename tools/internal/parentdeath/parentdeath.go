// Package parentdeath starts the programs of command tools and MCP stdio
// servers so that they do not outlive the process that started them. This
// holds even when it is killed with SIGKILL and has no chance to kill them
// itself.
//
// On Linux the program gets a parent-death signal, SIGKILL
// (PR_SET_PDEATHSIG). The kernel sends it when the thread that started the
// program exits, not the process (https://go.dev/issue/27505). Go ends a
// thread when a goroutine locked to it returns. So the program is started
// from a goroutine locked to its OS thread. The goroutine stays locked,
// and so the thread alive, until the caller releases it once the program
// has been reaped.
// Only the program itself gets the signal, not the processes it starts;
// those die with it only if they watch it (its pipes, say).
//
// Elsewhere there is no such signal: the program is started as usual and
// outlives a SIGKILL of its parent.
package parentdeath

import "os/exec"

// Start starts cmd by calling start, which must start cmd's process (such
// as cmd.Start, or a transport that calls it), so that the process is
// killed when the caller's process dies. cmd.SysProcAttr, if set, is kept
// and added to. Call release once the process has been waited for; until
// then, on Linux, an OS thread is kept for it. When start fails, there is
// nothing to release.
func Start(cmd *exec.Cmd, start func() error) (release func(), err error) {
	return startDying(cmd, start)
}
