package main

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// openTerminal opens a pseudo-terminal for the test and returns its
// terminal end, what standard input is when converse runs in a terminal,
// and its controlling end, where the test types.
func openTerminal(t *testing.T) (tty, keyboard *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var unlock, n int32
	if err := ioctl(ptmx, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Skip("unlocking the pseudo-terminal:", err)
	}
	if err := ioctl(ptmx, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Skip("naming the pseudo-terminal:", err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("opening the pseudo-terminal:", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty, ptmx
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// setSize sets the size of the pseudo-terminal tty, as a terminal emulator
// does when its window is resized.
func setSize(t *testing.T, tty *os.File, cols, rows int) {
	t.Helper()
	ws := struct{ row, col, x, y uint16 }{uint16(rows), uint16(cols), 0, 0}
	if err := ioctl(tty, syscall.TIOCSWINSZ, unsafe.Pointer(&ws)); err != nil {
		t.Fatal("setting the size of the pseudo-terminal:", err)
	}
}
