//go:build racerepro

package quota_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestZeroTimersInABubble reproduces the crash of the race runtime that
// makes TestLimiterUnderQuota skip the adaptive mode without a limiter
// under -race (see raceDetector): two goroutines of a synctest bubble
// receiving from timers of 0. Run it with
//
//	go test -race -tags racerepro -count=1 -run TestZeroTimersInABubble ./converse/quota/
//
// With Go 1.26.8 it crashed the test binary in 12 runs of 14, and one
// more spun for 10 minutes until killed. Once it passes every time on a
// Go release, the skip can go.
func TestZeroTimersInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for range 100000 {
					<-time.NewTimer(0).C
				}
			})
		}
		wg.Wait()
	})
}
