package converse_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// The scale of BenchmarkStall: the field's figures (first tokens in about 2 s,
// stalls of 60 s) divided by 10. A run then takes seconds, and a first token
// is still far longer than a busy machine's hiccups.
const (
	stallRate          = 0.02                   // of model calls
	stallFirstToken    = 200 * time.Millisecond // a call's usual first-token time, ±20 ms
	stallLength        = 6 * time.Second        // a stall's: 60 s scaled
	stallDeadline      = 600 * time.Millisecond // FirstToken and Idle: 6 s scaled
	stallConversations = 400
	stallConcurrency   = 20
)

// stallingModel answers a two-turn tool conversation (a call, then the
// answer), its first token after about stallFirstToken, or, for stallRate
// of the calls, after stallLength. It counts the calls in n.
func stallingModel(seed uint64, n *atomic.Int64) bedrocktest.Handler {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed))
	return bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		n.Add(1)
		reply := bedrocktest.ToolUse("", bedrocktest.Call{ID: "tooluse_1", Name: "add", Input: map[string]any{"a": 2, "b": 3}})
		last := req.Messages[len(req.Messages)-1]
		if slices.ContainsFunc(last.Content, func(b types.ContentBlock) bool {
			_, ok := b.(*types.ContentBlockMemberToolResult)
			return ok
		}) {
			reply = bedrocktest.Text("The sum is 5.")
		}
		mu.Lock()
		stalls, jitter := rng.Float64() < stallRate, time.Duration(rng.Int64N(int64(40*time.Millisecond)))
		mu.Unlock()
		reply.Latency = stallFirstToken - 20*time.Millisecond + jitter
		if stalls {
			reply.Latency = stallLength
		}
		return reply, nil
	})
}

// BenchmarkStall runs stallConversations streamed tool conversations,
// stallConcurrency at a time, against a model of which 2% of the calls stall
// (scaled: see stallLength). It reports the conversations' p50, p99 and max
// times in ms, and the model requests per conversation. It runs without
// Options.ModelCalls, with its deadlines (and retries), and with hedging at
// the 0.9 quantile too. Run it with -benchtime=1x: one iteration is the whole
// measure.
func BenchmarkStall(b *testing.B) {
	deadlines := func() *converse.CallPolicy {
		return &converse.CallPolicy{FirstToken: stallDeadline, Idle: stallDeadline, Backoff: 50 * time.Millisecond}
	}
	hedged := func() *converse.CallPolicy {
		p := deadlines()
		p.Hedge = 0.9
		return p
	}
	for _, v := range []struct {
		name   string
		policy func() *converse.CallPolicy
	}{
		{"none", func() *converse.CallPolicy { return nil }},
		{"deadlines", deadlines},
		{"deadlines+hedge", hedged},
	} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				times, requests, failed := stallRun(b, v.policy())
				slices.Sort(times)
				ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
				p50, p99 := times[len(times)/2], times[len(times)*99/100]
				b.ReportMetric(ms(p50), "p50-ms")
				b.ReportMetric(ms(p99), "p99-ms")
				b.ReportMetric(ms(times[len(times)-1]), "max-ms")
				b.ReportMetric(float64(p99)/float64(p50), "p99/p50")
				b.ReportMetric(float64(requests)/float64(len(times)), "requests/conv")
				b.ReportMetric(float64(failed), "failed")
			}
		})
	}
}

// stallRun runs the conversations of BenchmarkStall with policy p, and
// returns their times, the requests they made and how many failed: a
// conversation whose calls all stalled, past the retries, fails with
// ErrStalled.
func stallRun(b *testing.B, p *converse.CallPolicy) (times []time.Duration, requests, failed int) {
	var calls, failures atomic.Int64
	srv := bedrocktest.NewServer(stallingModel(1, &calls), func(o *bedrocktest.Options) { o.MaxRequests = 0 })
	defer srv.Close()
	client, reg := srv.Client(), benchRegistry(b)
	times = make([]time.Duration, stallConversations)
	var wg sync.WaitGroup
	sem := make(chan struct{}, stallConcurrency)
	for i := range times {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			start := time.Now()
			_, err := converse.New(client, benchModelID, reg, streaming,
				func(o *converse.Options) { o.ModelCalls = p }).Send(context.Background(), "Add 2 and 3.")

			times[i] = time.Since(start)
			if err != nil {
				failures.Add(1)
				b.Log(err)
			}
		})
	}
	wg.Wait()
	return times, int(calls.Load()), int(failures.Load())
}
