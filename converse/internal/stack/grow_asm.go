//go:build (amd64 || arm64) && !purego

package stack

// grow has a frame of Size/2 bytes and does nothing (grow_$GOARCH.s).
func grow()
