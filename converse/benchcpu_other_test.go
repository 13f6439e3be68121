//go:build !unix

package converse_test

import (
	"testing"
	"time"
)

// benchCPU reports that the process's CPU time is not known here.
func benchCPU() time.Duration { return -1 }

// benchReportCPU reports nothing where the CPU time is not known.
func benchReportCPU(*testing.B, time.Duration) {}
