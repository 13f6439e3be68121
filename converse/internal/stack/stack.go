// Package stack grows a goroutine's stack ahead of deep work.
//
// A tool call runs on a goroutine of its own, whose stack starts small.
// Validating the call's input with jsonschema-go (4 KiB frames, one per level
// of the input) and decoding it with encoding/json take that stack through
// several doublings, each copying the whole deeper stack: a third of the CPU
// of a call goroutine in BenchmarkConversation's profile (BENCHMARKS.md).
// Growing it first, while it is shallow, costs one cheap copy.
// (CockroachDB's util/growstack does the same.)
//
// On amd64 and arm64 the frame is declared in assembly and never written;
// elsewhere, and with the purego build tag (which `make stack` uses to test
// it on any machine), it is a Go array that the compiler zeroes.
package stack

// Size is the stack Grow leaves a goroutine with, at least. It holds a
// call of BenchmarkConversation's tools, and it is the largest stack the
// runtime keeps in its per-P caches (on Linux, macOS and the BSDs). A larger
// stack comes from the heap, under the heap's lock, and goes back to it when
// the goroutine ends, where its memory must be zeroed again before objects
// reuse it: at 32 KiB a conversation ran 60 K estimated cycles more
// (BENCHMARKS.md).
const Size = 16 << 10

// Grow grows the calling goroutine's stack to at least Size bytes in one
// step. On amd64 and arm64 it does so without writing to the stack: an
// assembly function declares a frame of half of Size that it never touches,
// so that only its prologue's stack check runs, and the runtime doubles the
// stack until the frame fits. Elsewhere a Go function does the same with an
// array, which Go zeroes: 8 KiB written at each call.
func Grow() { grow() }
