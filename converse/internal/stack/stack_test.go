package stack

import (
	"runtime/debug"
	"testing"
	"unsafe"
)

// descend uses about depth KiB of stack and reports whether the stack moved
// meanwhile: whether the address of a variable of the caller's frame changed.
//
//go:noinline
func descend(depth int, top *byte, was uintptr) bool {
	var frame [1000]byte
	frame[depth%len(frame)] = byte(depth)
	if depth == 0 {
		return uintptr(unsafe.Pointer(top)) != was
	}
	return descend(depth-1, top, was) || frame[0] == 255
}

// moves reports whether about kib KiB of frames move the stack of a new
// goroutine that first calls grow, if set.
func moves(kib int, grow func()) bool {
	done := make(chan bool)
	go func() {
		if grow != nil {
			grow()
		}
		var top byte
		done <- descend(kib, &top, uintptr(unsafe.Pointer(&top)))
	}()
	return <-done
}

func TestGrow(t *testing.T) {
	// A collection could shrink the grown stack back before it is used.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const kib = Size >> 10 * 3 / 4 // less than Size, more than a new goroutine's stack
	if !moves(kib, nil) {
		t.Skipf("a new goroutine's stack already holds %d KiB: nothing to show", kib)
	}
	if moves(kib, Grow) {
		t.Errorf("after Grow, %d KiB of frames moved the stack: it was not grown to %d KiB", kib, Size>>10)
	}
}

func BenchmarkGrow(b *testing.B) {
	for b.Loop() {
		moves(0, Grow)
	}
}
