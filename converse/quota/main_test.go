package quota_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind, a stream's
// watch included.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// stepIn is the input of the tests' "step" tool.
type stepIn struct {
	N int `json:"n"`
}
