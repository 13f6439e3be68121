package converse_test

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

var quotaReport = flag.Bool("quota-report", false, "TestLimiterUnderQuota: print the table of BENCHMARKS.md")

// fourTurns answers every conversation by its length: three tool rounds,
// then the answer, whatever the order the conversations' calls arrive in.
var fourTurns = bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
	if n := len(req.Messages); n < 7 {
		return bedrocktest.ToolUse("", bedrocktest.Call{ID: fmt.Sprintf("c%d", n), Name: "step", Input: map[string]any{"n": n}}), nil
	}
	return bedrocktest.Text("done"), nil
})

// quotaRun is the outcome of many conversations at once against a quota.
type quotaRun struct {
	failed, calls, throttles int
	minutes                  float64 // virtual
}

// runUnderQuota runs n conversations of four turns at once through one
// client, against a server with quota whose model takes latency a call,
// in virtual time.
func runUnderQuota(t *testing.T, n int, quota bedrocktest.Quota, retryer func() aws.Retryer, lim *converse.Limiter) quotaRun {
	t.Helper()
	var out quotaRun
	srv := bedrocktest.NewServer(bedrocktest.Delay(2*time.Second, fourTurns), func(o *bedrocktest.Options) {
		o.Accounting, o.Quota, o.MaxRequests = true, quota, -1
	})
	defer srv.Close()
	synctest.Test(t, func(t *testing.T) {
		step, err := tools.New("step", "Does a step.", func(ctx context.Context, in stepIn) (int, error) { return in.N, nil })
		require.NoError(t, err)
		reg, err := tools.NewRegistry(step)
		require.NoError(t, err)
		client := inMemoryClient(srv, func(o *bedrockruntime.Options) { o.Retryer = retryer() })
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range n {
			wg.Go(func() {
				c := converse.New(client, "anthropic.claude-3-haiku-20240307-v1:0", reg, func(o *converse.Options) {
					o.Limiter = lim
					o.Request.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(100)}
				})
				_, err := c.Send(context.Background(), "go")
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					out.failed++
				}
			})
		}
		wg.Wait()
		out.minutes = time.Since(start).Minutes()
	})
	out.throttles = srv.Throttles()
	for _, r := range srv.Requests() {
		if r.Operation == "Converse" {
			out.calls++
		}
	}
	out.calls -= out.throttles
	return out
}

// TestLimiterUnderQuota runs 500 conversations of 4 turns at once through
// one client against a quota of 400 requests and 200,000 tokens a minute,
// in virtual time: with the SDK's standard retries alone many fail after
// their retries (the adaptive mode is not run: its client-side bucket
// sleeps for 0 in a loop, which never lets virtual time move on); with a Limiter set to the quota none fails,
// under 1% of the calls are throttled, and the calls go at the quota's
// pace, within 10%. A Limiter set at twice the quota (a quota unknown, or
// shared) lowers itself: none fails. -quota-report prints the table of
// BENCHMARKS.md.
func TestLimiterUnderQuota(t *testing.T) {
	if testing.Short() {
		t.Skip("500 conversations: not in -short")
	}
	const n, rpm = 500, 400
	quota := bedrocktest.Quota{RequestsPerMinute: rpm, TokensPerMinute: 200000}
	standard := func() aws.Retryer { return retry.NewStandard() }
	rows := []struct {
		name    string
		retryer func() aws.Retryer
		lim     func() *converse.Limiter
	}{
		{"standard retries, no limiter", standard, func() *converse.Limiter { return nil }},
		{"standard retries, Limiter at the quota", standard, func() *converse.Limiter { return converse.NewLimiter(rpm, 200000) }},
		{"standard retries, Limiter at twice the quota", standard, func() *converse.Limiter { return converse.NewLimiter(2*rpm, 400000) }},
	}
	report := "| run | failed Sends | throttles answered | calls answered | throttled share | calls a minute (quota 400) |\n|---|---|---|---|---|---|\n"
	for i, row := range rows {
		got := runUnderQuota(t, n, quota, row.retryer, row.lim())
		pace := float64(got.calls) / got.minutes
		share := float64(got.throttles) / float64(got.calls+got.throttles)
		report += fmt.Sprintf("| %s | %d of %d | %d | %d | %.1f%% | %.0f |\n", row.name, got.failed, n, got.throttles, got.calls, 100*share, pace)
		switch i {
		case 0:
			assert.Positive(t, got.failed, "%s: without a limiter some Sends fail", row.name)
		case 1:
			assert.Zero(t, got.failed, row.name)
			assert.Less(t, share, 0.01, row.name)
			assert.InDelta(t, rpm, pace, 0.1*rpm, row.name)
		case 2:
			assert.Zero(t, got.failed, row.name)
		}
	}
	if *quotaReport {
		t.Log("\n" + report)
	}
}

// TestLimiterWaitEndsWithTheContext: a Send waiting for a Limiter whose
// quota is spent ends with its context, before any model call.
func TestLimiterWaitEndsWithTheContext(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("one"), bedrocktest.Text("two")))
	defer srv.Close()
	synctest.Test(t, func(t *testing.T) {
		lim := converse.NewLimiter(1, 0) // one request, then one a minute and more
		client := inMemoryClient(srv)
		_, err := converse.Run(context.Background(), client, "anthropic.claude-3-haiku-20240307-v1:0", nil, "first",
			func(o *converse.Options) { o.Limiter = lim })
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = converse.Run(ctx, client, "anthropic.claude-3-haiku-20240307-v1:0", nil, "second",
			func(o *converse.Options) { o.Limiter = lim })
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Len(t, srv.Requests(), 1, "the second call was never made")
	})
}
