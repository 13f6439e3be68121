package quota

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limiterModel is the model of the Limiter tests' calls, whose output
// tokens count 1:1 against the quota.
const limiterModel = "anthropic.claude-3-haiku-20240307-v1:0"

// TestLimiterSettles: a reservation settled with less than it reserved
// gives the rest back at once. One settled with more takes it, so the
// next call waits for it. Time is virtual: nothing else moves the clock.
func TestLimiterSettles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLimiter(0, 20000) // a burst of 1000 tokens
		require.Equal(t, 1000, l.tokens.Burst())
		start := time.Now()
		r, err := l.reserve(context.Background(), limiterModel, 1000)
		require.NoError(t, err)
		r.settle(&types.TokenUsage{InputTokens: aws.Int32(50), OutputTokens: aws.Int32(50)}, nil)
		_, err = l.reserve(context.Background(), limiterModel, 900)
		require.NoError(t, err)
		assert.Equal(t, start, time.Now(), "the 900 tokens given back were there at once")

		r, err = l.reserve(context.Background(), limiterModel, 0)
		require.NoError(t, err)
		r.settle(&types.TokenUsage{InputTokens: aws.Int32(190)}, nil) // 190 more than reserved
		_, err = l.reserve(context.Background(), limiterModel, 1)
		require.NoError(t, err)
		assert.InDelta(t, 191*60.0/19000, time.Since(start).Seconds(), 1e-6,
			"the debt of 190 tokens and the one asked, at 19,000 a minute")
	})
}

// TestLimiterWaitCancelled: a call waiting for the limiter ends with its
// context, and what it reserved is given back.
func TestLimiterWaitCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLimiter(20, 0) // a burst of one request, then one every 3.16 s
		_, err := l.reserve(context.Background(), limiterModel, 0)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		_, err = l.reserve(ctx, limiterModel, 0)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start), "it waited for the context, not the limiter")
		start = time.Now()
		_, err = l.reserve(context.Background(), limiterModel, 0)
		require.NoError(t, err)
		assert.InDelta(t, 60.0/19-1, time.Since(start).Seconds(), 1e-6,
			"the cancelled reservation was given back: the next waits only for the rest of one request's interval")
	})
}

// TestLimiterAIMD: a burst of throttles, each within 15 s of the one
// before (here over 30 s), halves the rates once. A throttle after a
// longer quiet halves them again. Successes raise nothing. Time raises
// them by a tenth of the quota a minute, up to the quota (virtual time).
func TestLimiterAIMD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLimiter(600, 60000)
		full, fullTokens := float64(l.requests.Limit()), float64(l.tokens.Limit())
		throttle := &types.ThrottlingException{}
		for range 4 {
			l.throttle(throttle)
			time.Sleep(burstGap * 2 / 3)
		}
		assert.InDelta(t, full/2, float64(l.requests.Limit()), 1e-9, "one burst")
		assert.InDelta(t, fullTokens/2, float64(l.tokens.Limit()), 1e-9, "one burst")
		assert.Equal(t, 4, l.Throttles())
		time.Sleep(burstGap) // more than burstGap since the last
		l.throttle(throttle)
		lowered := time.Now()
		assert.InDelta(t, full/4, float64(l.requests.Limit()), 1e-9, "a second burst")

		for range 50 {
			r, err := l.reserve(context.Background(), limiterModel, 0)
			require.NoError(t, err)
			r.settle(&types.TokenUsage{InputTokens: aws.Int32(1)}, nil)
		}
		l.grow()
		elapsed := time.Since(lowered)
		assert.InDelta(t, full*(1.0/4+growth*elapsed.Minutes()), float64(l.requests.Limit()), 1e-9,
			"50 successes in %v raised nothing, the time did", elapsed)
		time.Sleep(10 * time.Minute)
		l.grow()
		assert.InDelta(t, full, float64(l.requests.Limit()), 1e-9, "back to the quota, never past it")
	})
}

// TestLimiterCountsLargeCallsInFull: a call larger than the burst waits
// for a whole burst and is counted in full, whether it reserved that much
// or settled to it. So no minute admits more than the quota. The calls
// still take most of it (one after another, in virtual time).
func TestLimiterCountsLargeCallsInFull(t *testing.T) {
	const quota = 200000 // a burst of 10,000 tokens
	tests := []struct {
		name          string
		reserve       int
		input, output int32
	}{
		{"ten bursts reserved and used", 100000, 96000, 4000},
		{"one burst reserved, ten used", 10000, 96000, 4000},
		{"a burst reserved and used", 10000, 9000, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := NewLimiter(0, quota)
				require.Equal(t, 10000, l.tokens.Burst())
				start := time.Now()
				admitted := 0
				for {
					r, err := l.reserve(context.Background(), limiterModel, tt.reserve)
					require.NoError(t, err)
					if time.Since(start) >= time.Minute {
						break
					}
					r.settle(&types.TokenUsage{InputTokens: aws.Int32(tt.input), OutputTokens: aws.Int32(tt.output)}, nil)
					admitted += int(tt.input + tt.output)
				}
				assert.LessOrEqual(t, admitted, quota, "tokens admitted in the first minute")
				assert.Greater(t, admitted, quota/2, "tokens admitted in the first minute")
			})
		})
	}
}

// TestLimiterSettlesAsBedrockCounts: a call is settled to its input, its
// cache writes and its output at the model's burndown rate. The rate is 5
// for Claude Sonnet 4, 1 for Claude 3 Haiku. Its cache reads count for
// nothing. The next call waits for exactly that debt (virtual time).
func TestLimiterSettlesAsBedrockCounts(t *testing.T) {
	u := &types.TokenUsage{InputTokens: aws.Int32(100), CacheReadInputTokens: aws.Int32(5000),
		CacheWriteInputTokens: aws.Int32(50), OutputTokens: aws.Int32(100)}
	tests := []struct {
		model string
		used  int
	}{
		{"us.anthropic.claude-sonnet-4-20250514-v1:0", 100 + 50 + 5*100},
		{limiterModel, 100 + 50 + 100},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := NewLimiter(0, 20000) // a burst of 1000 tokens, then 19,000 a minute
				start := time.Now()
				r, err := l.reserve(context.Background(), tt.model, 1000) // the whole burst
				require.NoError(t, err)
				r.settle(u, nil)
				_, err = l.reserve(context.Background(), tt.model, 1000)
				require.NoError(t, err)
				assert.InDelta(t, float64(tt.used)*60/19000, time.Since(start).Seconds(), 1e-6,
					"the next call waited for the tokens used, at 19,000 a minute")
			})
		})
	}
}

// TestLimiterCancelledWaitersLeaveTheLine: waiters whose contexts end
// give their places back. 500 calls wait for a Limiter whose burst is
// spent. One in ten waits to the end; the others wait until 10 s, before
// the first is due. Each of the 50 that stay is admitted when it would
// have been had the others never come: the k-th after k intervals of the
// quota. Time is virtual, so the bound is a thousandth of an interval.
func TestLimiterCancelledWaitersLeaveTheLine(t *testing.T) {
	const rpm = 6                   // a burst of 1, then one request every 60/5.7 s
	interval := 60 / (rpm * spread) // seconds
	admitted := func(t *testing.T, waiters int, stays func(i int) bool) []time.Duration {
		l := NewLimiter(rpm, 0)
		_, err := l.reserve(context.Background(), limiterModel, 0) // the burst
		require.NoError(t, err)
		start := time.Now()
		cancelled, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var got []time.Duration
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range waiters {
			ctx := cancelled
			if stays(i) {
				ctx = context.Background()
			}
			wg.Go(func() {
				if _, err := l.reserve(ctx, limiterModel, 0); err == nil {
					mu.Lock()
					got = append(got, time.Since(start))
					mu.Unlock()
				}
			})
			synctest.Wait() // in line in the order of i
		}
		wg.Wait()
		return got
	}
	synctest.Test(t, func(t *testing.T) {
		alone := admitted(t, 50, func(int) bool { return true })
		withOthers := admitted(t, 500, func(i int) bool { return i%10 == 9 })
		require.Len(t, alone, 50)
		require.Len(t, withOthers, 50, "only those that stay are admitted")
		for k := range alone {
			assert.InDelta(t, float64(k+1)*interval, alone[k].Seconds(), interval/1000, "alone, call %d", k+1)
			assert.InDelta(t, alone[k].Seconds(), withOthers[k].Seconds(), interval/1000, "call %d with 450 cancelled", k+1)
		}
	})
}

// TestLimiterCancelledBeforeItsTurnChargesNothing: a call whose context
// has ended is not admitted even when the Limiter has room, and what it
// would have taken stays for the next.
func TestLimiterCancelledBeforeItsTurnChargesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLimiter(20, 20000) // a burst of one request and 1000 tokens
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := l.reserve(ctx, limiterModel, 1000)
		require.ErrorIs(t, err, context.Canceled)
		start := time.Now()
		_, err = l.reserve(context.Background(), limiterModel, 1000)
		require.NoError(t, err)
		assert.Equal(t, start, time.Now(), "the burst was still there")
	})
}
