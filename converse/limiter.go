package converse

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"golang.org/x/time/rate"
)

// Limiter paces the model calls of every conversation that holds it
// (Options.Limiter) by one quota of requests and tokens per minute: make
// one per model and region whose quota they share, never one for the
// process. Before each model call it reserves the call's tokens (its
// estimated input plus its maxTokens, or the input alone without one)
// and waits, as long as the context allows, until they fit; after the call
// it settles the reservation with the real usage (input, cache reads and
// writes, output), giving back what was not used or taking what was
// used beyond it. In any minute it admits at most the quota: a burst of a
// twentieth of it, the rest spread evenly (for a quota of fewer than 20,
// a burst of 1).
//
// Each ThrottlingException Bedrock answers (each attempt, as the SDK's
// retryer sees them, when the client is a *bedrockruntime.Client) halves
// the rates, at most once every 15 seconds, and each call that succeeds raises
// them by a fiftieth of the quota, back up to it (additive increase,
// multiplicative decrease): a Limiter set above a quota that is unknown,
// or shared with other processes, settles below it. A call throttled
// after the SDK's retries is made again by Send, through the Limiter, up
// to 10 times. It is built on
// golang.org/x/time/rate, and safe for concurrent use.
type Limiter struct {
	requests, tokens *rate.Limiter
	rpm, tpm         float64 // the quota

	mu       sync.Mutex
	factor   float64   // the share of the quota in use, in (0, 1]
	lowered  time.Time // the last decrease
	throttle int       // ThrottlingExceptions seen
}

// decreaseEvery is the least time between two decreases: the calls in
// flight when a quota runs out are throttled together, and a quota by
// the minute takes seconds to have room again.
const decreaseEvery = 15 * time.Second

// minFactor is the lowest share of the quota a Limiter goes down to.
const minFactor = 1.0 / 64

// NewLimiter returns a Limiter of requestsPerMinute requests and
// tokensPerMinute tokens; 0 leaves that one unlimited.
func NewLimiter(requestsPerMinute, tokensPerMinute int) *Limiter {
	l := &Limiter{rpm: float64(requestsPerMinute), tpm: float64(tokensPerMinute), factor: 1}
	l.requests = bucket(l.rpm)
	l.tokens = bucket(l.tpm)
	return l
}

// spread is the share of a quota a Limiter spreads evenly over the
// minute; the rest is its burst.
const spread = 19.0 / 20

// bucket is a rate.Limiter admitting perMinute in any minute: a burst of
// a twentieth (at least 1), the rest at an even rate.
func bucket(perMinute float64) *rate.Limiter {
	if perMinute <= 0 {
		return rate.NewLimiter(rate.Inf, 0)
	}
	return rate.NewLimiter(rate.Limit(perMinute*spread/60), max(1, int(perMinute*(1-spread))))
}

// Throttles counts the ThrottlingExceptions the Limiter was told of.
func (l *Limiter) Throttles() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.throttle
}

// reservation is what a model call reserved, to be settled after it.
type reservation struct {
	l      *Limiter
	tokens int
}

// reserve waits until a call of tokens fits, or ctx ends (its error,
// wrapped). A call larger than the burst waits for a whole burst.
func (l *Limiter) reserve(ctx context.Context, tokens int) (*reservation, error) {
	if l == nil {
		return nil, nil
	}
	if l.tokens.Limit() != rate.Inf {
		tokens = min(tokens, l.tokens.Burst())
	}
	now := time.Now()
	rr, tr := l.requests.ReserveN(now, 1), l.tokens.ReserveN(now, tokens)
	if delay := max(rr.DelayFrom(now), tr.DelayFrom(now)); delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			rr.Cancel()
			tr.Cancel()
			return nil, fmt.Errorf("waiting for the limiter: %w", ctx.Err())
		}
	}
	return &reservation{l: l, tokens: tokens}, nil
}

// settle counts the real usage of the call, and its error: a
// ThrottlingException lowers the rates, a success raises them.
func (r *reservation) settle(u Usage, err error) {
	if r == nil {
		return
	}
	l := r.l
	if used := billedInput(u) + u.OutputTokens; used != r.tokens && l.tokens.Limit() != rate.Inf {
		// A negative reservation gives tokens back: x/time/rate subtracts
		// n from the bucket, and TestLimiterSettles pins that. A failed
		// call used none.
		l.tokens.ReserveN(time.Now(), min(used-r.tokens, l.tokens.Burst()))
	}
	if err == nil {
		l.adjust(false)
	}
}

// adjust raises the rates after a success, or halves them after a
// throttle (at most once every decreaseEvery).
func (l *Limiter) adjust(throttled bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	switch {
	case throttled:
		l.throttle++
		if now.Sub(l.lowered) < decreaseEvery {
			return
		}
		l.factor, l.lowered = max(minFactor, l.factor/2), now
	case l.factor < 1:
		l.factor = min(1, l.factor+1.0/50)
	default:
		return
	}
	if l.rpm > 0 {
		l.requests.SetLimitAt(now, rate.Limit(l.factor*l.rpm*spread/60))
	}
	if l.tpm > 0 {
		l.tokens.SetLimitAt(now, rate.Limit(l.factor*l.tpm*spread/60))
	}
}

// limiterAttempts bounds the calls a Send makes of one request that
// Bedrock throttles after the SDK's own retries, with a Limiter.
const limiterAttempts = 10

// callLimited makes the model call of req; with a Limiter, a call
// throttled after the SDK's retries is made again, up to limiterAttempts
// times, each time waiting for the Limiter, which lowered its rates.
func (c *Conversation) callLimited(ctx context.Context, req *Request) (*turnResult, error) {
	for attempt := 1; ; attempt++ {
		t, err := c.callModel(ctx, req)
		var throttled *types.ThrottlingException
		if c.opts.Limiter == nil || attempt == limiterAttempts || !errors.As(err, &throttled) {
			return t, err
		}
	}
}

// options are opts of a model call with, if l is not nil, observe.
func (l *Limiter) options(opts []func(*bedrockruntime.Options)) []func(*bedrockruntime.Options) {
	if l == nil {
		return opts
	}
	return append(opts, l.observe)
}

// observe is an option of a model call that tells l of each throttled
// attempt the client's retryer sees.
func (l *Limiter) observe(o *bedrockruntime.Options) {
	if o.Retryer != nil {
		o.Retryer = &throttleObserver{Retryer: o.Retryer, l: l}
	}
}

// throttleObserver is a retryer that tells its Limiter of each
// ThrottlingException, and otherwise retries as the one it wraps.
type throttleObserver struct {
	aws.Retryer
	l *Limiter
}

func (t *throttleObserver) IsErrorRetryable(err error) bool {
	var throttled *types.ThrottlingException
	if errors.As(err, &throttled) {
		t.l.adjust(true)
	}
	return t.Retryer.IsErrorRetryable(err)
}

// GetAttemptToken is that of the wrapped retryer (aws.RetryerV2), or its
// initial token.
func (t *throttleObserver) GetAttemptToken(ctx context.Context) (func(error) error, error) {
	if v2, ok := t.Retryer.(aws.RetryerV2); ok {
		return v2.GetAttemptToken(ctx)
	}
	return t.GetInitialToken(), nil
}
