//go:build !linux

package main

import (
	"os"
	"testing"
)

// openTerminal skips the test: pseudo-terminals are opened on Linux only.
func openTerminal(t *testing.T) (tty, keyboard *os.File) {
	t.Skip("the terminal tests open a pseudo-terminal on Linux only")
	return nil, nil
}

// setSize is never reached: openTerminal skipped the test.
func setSize(t *testing.T, tty *os.File, cols, rows int) {}
