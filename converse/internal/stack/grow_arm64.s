//go:build !purego

#include "textflag.h"

// func grow()
// A frame of 8 KiB (stack.Size/2) that is never written: the prologue's
// stack check makes the runtime grow the stack until the frame fits.
TEXT ·grow(SB), 0, $8192-0
	RET
