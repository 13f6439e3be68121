//go:build !amd64 && !arm64

package stack

// grow has a frame of Size/2 bytes, which Go zeroes.
//
//go:noinline
func grow() { sink = growFrame(0) }

// growFrame reads and writes frame at an index the compiler cannot know, so
// that the array stays.
//
//go:noinline
func growFrame(i int) byte {
	var frame [Size / 2]byte
	frame[i] = 1
	return frame[len(frame)-1-i]
}

var sink byte
