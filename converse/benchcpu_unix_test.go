//go:build unix

package converse_test

import (
	"syscall"
	"testing"
	"time"
)

// benchCPU returns the CPU time (user and system) the process has used.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchReportCPU reports the CPU time used since start, per op, as
// cpu-ns/op.
func benchReportCPU(b *testing.B, start time.Duration) {
	if now := benchCPU(); start >= 0 && now >= 0 {
		b.ReportMetric(float64(now-start)/float64(b.N), "cpu-ns/op")
	}
}
