//go:build (!amd64 && !arm64) || purego

package stack

// grow has, in growFrame, a frame of Size/2 bytes, which Go zeroes.
func grow() { growFrame(0) }

// growFrame reads and writes frame at an index the compiler cannot know, so
// that the array stays.
//
//go:noinline
func growFrame(i int) byte {
	var frame [Size / 2]byte
	frame[i] = 1
	return frame[len(frame)-1-i]
}
