//go:build !unix

package mcptools

import "os/exec"

// ownGroup keeps exec's default: there are no process groups here, and Close
// stops only the server process.
func ownGroup(*exec.Cmd) {}

func killGroup(int) error { return nil }
