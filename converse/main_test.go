package converse_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind. The SDK's shared
// HTTP transport keeps idle keep-alive connections, each with a read and a
// write loop, which are ignored by their stack. Anything else parked on the
// network, such as a stream left undrained, is a leak. Started by
// BenchmarkConversationProcess as a client process, the binary runs no test.
func TestMain(m *testing.M) {
	if spec := os.Getenv(benchClientEnv); spec != "" {
		os.Exit(benchClient(spec))
	}
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	)
}
