//go:build race

package quota_test

// raceDetector is whether the tests run under -race, for a test to skip
// what the race detector cannot run. Goroutines of a testing/synctest
// bubble that wait on timers of 0 crash Go 1.26.8's race runtime. The
// SDK's adaptive retry mode waits so while its bucket is short (see
// waitsTakeTime). The crash is "ThreadSanitizer: CHECK failed:
// tsan_rtl.cpp:346", a SIGSEGV in runtime.(*timer).maybeRunChan, or an
// allocator CHECK. The same loop outside a bubble does not crash.
// TestZeroTimersInABubble reproduces it.
const raceDetector = true
