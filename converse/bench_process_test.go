package converse_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

// benchClientEnv, set in the environment of this test binary, makes it a
// client process of BenchmarkConversationProcess instead of running tests:
// "impl stream conversations url" (see TestMain).
const benchClientEnv = "CONVERSE_BENCH_CLIENT"

// benchProcessConversations is how many conversations a client process of
// BenchmarkConversationProcess has: enough that its start is under 1% of
// its time.
const benchProcessConversations = 500

// BenchmarkConversationProcess is BenchmarkConversation with the client in
// a process of its own, as a service embedding the library runs. Each op
// starts this test binary again as a client that has
// benchProcessConversations conversations, one after another. bedrocktest is
// served by the benchmark's process. Its metrics are the client process's
// alone, per conversation: wall-ns/conv and cpu-ns/conv (user and system time,
// the garbage collector and the runtime's threads included). So the server's
// work, which both sides share, does not dilute the difference as it does in
// BenchmarkConversation's cpu-ns/op.
func BenchmarkConversationProcess(b *testing.B) {
	srv := bedrocktest.NewServer(benchModel(2), func(o *bedrocktest.Options) { o.MaxRequests = 0 })
	defer srv.Close()
	for _, stream := range []bool{false, true} {
		for _, impl := range benchConversationImpls {
			b.Run(fmt.Sprintf("turns=3/stream=%t/impl=%s", stream, impl), func(b *testing.B) {
				var wall, cpu time.Duration
				for b.Loop() {
					cmd := exec.Command(os.Args[0], "-test.run=^$")
					cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %t %d %s", benchClientEnv, impl, stream, benchProcessConversations, srv.URL))
					began := time.Now()
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("client process: %v\n%s", err, out)
					}
					wall += time.Since(began)
					cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				}
				n := float64(b.N * benchProcessConversations)
				b.ReportMetric(float64(wall.Nanoseconds())/n, "wall-ns/conv")
				b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/conv")
			})
		}
	}
}

// benchClient is a client process of BenchmarkConversationProcess: it has
// the conversations spec asks for ("impl stream conversations url") through
// a client of its own, and returns the process's exit code.
func benchClient(spec string) int {
	if err := runBenchClient(spec); err != nil {
		fmt.Fprintln(os.Stderr, "bench client:", err)
		return 1
	}
	return 0
}

func runBenchClient(spec string) error {
	f := strings.Fields(spec)
	if len(f) != 4 {
		return fmt.Errorf("%s=%q: want impl, stream, conversations and URL", benchClientEnv, spec)
	}
	impl, url := f[0], f[3]
	stream, err := strconv.ParseBool(f[1])
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return err
	}
	client := bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDBEDROCKTEST", "bedrocktest-secret", ""),
		BaseEndpoint: aws.String(url),
		HTTPClient:   recording.PlainBodies(nil),
	})
	reg, err := newBenchRegistry()
	if err != nil {
		return err
	}
	ctx := context.Background()
	for range n {
		chat, err := benchChatFor(impl, stream, client, reg)
		if err != nil {
			return err
		}
		if err := chat.Send(ctx, "Add things."); err != nil {
			return err
		}
	}
	return nil
}
