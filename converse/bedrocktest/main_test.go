package bedrocktest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: servers closed,
// streams drained or closed, client connections shut.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
