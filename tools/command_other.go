//go:build !unix

package tools

import (
	"os"
	"os/exec"
)

// killGroupOnCancel keeps exec's default, which kills only the program: there
// are no process groups to kill here. WaitDelay still keeps a child that
// holds the pipes from hanging the call.
func killGroupOnCancel(*exec.Cmd) {}

// killGroup does nothing: there are no process groups to kill here.
func killGroup(*exec.Cmd) error { return os.ErrProcessDone }
