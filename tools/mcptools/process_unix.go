//go:build unix

package mcptools

import (
	"errors"
	"os/exec"
	"syscall"
)

// ownGroup makes the program start in a process group of its own, whose id
// is its pid.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills every process left in the group pgid. A process group
// keeps its id from being reused while it has members, so the signal
// reaches the server's children even though the server was reaped.
func killGroup(pgid int) error {
	// A negative pid names the process group.
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) { // nothing left
		return nil
	}
	return err
}
