//go:build unix

package mcptools_test

import (
	"errors"
	"syscall"
)

// running reports whether a process exists, a zombie included: a process
// that was reaped does not.
func running(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
