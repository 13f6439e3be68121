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
	cmd.Cancel = func() error {
		// A negative pid names the process group whose id is the pid.
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}
