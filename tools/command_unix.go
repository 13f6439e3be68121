//go:build unix

package tools

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// killGroupOnCancel starts the program in a process group of its own and
// makes cancellation kill the whole group, so that the children it started
// die with it instead of holding its pipes open.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills (SIGKILL) every process of the program's process group,
// reporting os.ErrProcessDone when none is left. After Wait it kills what
// the program left running: the group's id stays its own while the group
// has members.
func killGroup(cmd *exec.Cmd) error {
	// A negative pid names the process group whose id is the pid.
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
