//go:build race

package quota_test

// raceDetector is whether the tests run under -race, for a test to skip
// what the race detector cannot run: goroutines of a testing/synctest
// bubble that wait on timers of 0, as the SDK's adaptive retry mode does
// while its bucket is short (see waitsTakeTime), crash Go 1.26.8's race
// runtime ("ThreadSanitizer: CHECK failed: tsan_rtl.cpp:346", a SIGSEGV
// in runtime.(*timer).maybeRunChan, or an allocator CHECK); the same loop
// outside a bubble does not. TestZeroTimersInABubble reproduces it.
const raceDetector = true
