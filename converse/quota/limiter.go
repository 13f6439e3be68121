package quota

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// Limiter paces model calls by one quota of requests and tokens per
// minute. Make one per model and region whose quota they share, never one
// for the process. The calls it paces are those of the clients it makes
// (Limiter.Client).
//
// Before each call it reserves the call's tokens: its estimated input plus
// its maxTokens, or the input alone without one. It then waits, in line
// with the other calls, until they fit. A call whose context ends first
// leaves the line and takes nothing. After the call it settles the
// reservation with the real usage as Bedrock counts it against its quotas.
// That is input, cache writes, and output at the model's burndown rate;
// cache reads count for nothing. The rate is 5 tokens an output token for
// Claude 3.7 Sonnet and Claude 4 to 4.6. What was not used is given back;
// what was used beyond it is taken.
//
// In any minute it admits at most the quota: a burst of a twentieth of it,
// the rest spread evenly. For a quota of fewer than 20, the burst is 1. A
// call larger than the burst waits for a whole burst and is counted in
// full. What the burst did not hold is a debt the calls after it wait for.
//
// A burst of ThrottlingExceptions halves the rates once. In a burst, each
// comes within 15 s of the one before: the SDK's retries of a call, the
// calls throttled together. The rates then grow back by a tenth of the
// quota a minute, up to it (additive increase, multiplicative decrease).
// Each throttle also
// empties the Limiter, down to a burst short, so that no call goes while
// the quota is spent. It sees each attempt the SDK's retryer makes, when
// the client is a *bedrockruntime.Client, and each throttle a
// ConverseStream sends among its events, which no retryer sees. So a
// Limiter set above a quota that is unknown, or shared with other
// processes, settles below it. It is built on
// golang.org/x/time/rate, and safe for concurrent use.
type Limiter struct {
	requests, tokens *rate.Limiter
	rpm, tpm         float64 // the quota

	// line is held by the one call that has reserved and waits for its
	// turn; the others wait for it in order, and leave the line when
	// their contexts end. x/time/rate gives a cancelled reservation back
	// only when none was made after it. So a line of reservations would
	// keep the places of the calls cancelled in it. The rates a decrease
	// sets would then reach no call already waiting.
	line *semaphore.Weighted

	mu        sync.Mutex
	factor    float64   // the share of the quota in use, in [minFactor, 1]
	grown     time.Time // when factor last grew
	throttled time.Time // the last throttle
	throttles int       // ThrottlingExceptions seen
}

// burstGap is the longest time between two throttles of one burst, which
// lowers the rates once. A burst is the SDK's retries of a call, and the
// calls in flight when a quota by the minute runs out. Such a quota takes
// seconds to have room again.
const burstGap = 15 * time.Second

// growth is how much of the quota a Limiter takes back a minute after a
// burst of throttles.
const growth = 1.0 / 10

// minFactor is the lowest share of the quota a Limiter goes down to.
const minFactor = 1.0 / 64

// NewLimiter returns a Limiter of requestsPerMinute requests and
// tokensPerMinute tokens; 0 leaves that one unlimited.
func NewLimiter(requestsPerMinute, tokensPerMinute int) *Limiter {
	l := &Limiter{rpm: float64(requestsPerMinute), tpm: float64(tokensPerMinute), factor: 1, line: semaphore.NewWeighted(1)}
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
	return l.throttles
}

// reservation is what a model call reserved, to be settled after it.
type reservation struct {
	l      *Limiter
	model  models.Model // whose burndown rate counts the usage
	tokens int
}

// reserve waits until a call of modelID of tokens fits, or ctx ends (its
// error, wrapped, and nothing taken). The calls wait in line, and only
// the first reserves. A call larger than the burst waits for a whole
// burst, and the rest is charged as a debt.
func (l *Limiter) reserve(ctx context.Context, modelID string, tokens int) (*reservation, error) {
	if err := l.line.Acquire(ctx, 1); err != nil {
		return nil, fmt.Errorf("waiting for the limiter: %w", err)
	}
	defer l.line.Release(1)
	l.grow()
	first := tokens
	if l.tokens.Limit() != rate.Inf {
		first = min(tokens, l.tokens.Burst()) // x/time/rate refuses more
	}
	now := time.Now()
	rr, tr := l.requests.ReserveN(now, 1), l.tokens.ReserveN(now, first)
	if delay := max(rr.DelayFrom(now), tr.DelayFrom(now)); delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	if err := ctx.Err(); err != nil {
		now := time.Now()
		rr.CancelAt(now)
		tr.CancelAt(now)
		return nil, fmt.Errorf("waiting for the limiter: %w", err)
	}
	charge(l.tokens, time.Now(), tokens-first)
	return &reservation{l: l, model: models.Parse(modelID), tokens: tokens}, nil
}

// charge takes n tokens from b now without waiting, in pieces of at most
// its burst, as x/time/rate refuses a larger one. What b does not hold is
// a debt that the reservations after it wait for. A negative n gives tokens
// back (x/time/rate adds them, up to the burst, and TestLimiterSettles
// pins that).
func charge(b *rate.Limiter, now time.Time, n int) {
	if b.Limit() == rate.Inf {
		return
	}
	for n > 0 {
		piece := min(n, b.Burst())
		b.ReserveN(now, piece)
		n -= piece
	}
	if n < 0 {
		b.ReserveN(now, n)
	}
}

// settle counts the real usage u of the call as Bedrock's quotas count it.
// A failed call used none.
func (r *reservation) settle(u *types.TokenUsage, err error) {
	used := 0
	if u != nil && err == nil {
		used = r.model.QuotaTokens(int(aws.ToInt32(u.InputTokens)), int(aws.ToInt32(u.CacheWriteInputTokens)),
			int(aws.ToInt32(u.OutputTokens)))
	}
	charge(r.l.tokens, time.Now(), used-r.tokens)
}

// throttle tells l of err if it is a ThrottlingException. The first of a
// burst halves the rates. Each empties l down to a burst short, so that
// no call goes while the quota is spent. The next call waits for a burst
// and more at the lowered rates.
func (l *Limiter) throttle(err error) {
	if !throttled(err) {
		return
	}
	l.lower()
	now := time.Now()
	for _, b := range []*rate.Limiter{l.requests, l.tokens} {
		if n := int(math.Ceil(b.TokensAt(now))) + b.Burst(); b.Limit() != rate.Inf && n > 0 {
			charge(b, now, n) // never a give-back: a debt past a burst stays
		}
	}
}

// lower counts a throttle, and halves the rates at the first of a burst.
func (l *Limiter) lower() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.throttles++
	l.grown = now
	if !l.throttled.IsZero() && now.Sub(l.throttled) <= burstGap {
		l.throttled = now
		return
	}
	l.throttled = now
	l.setFactor(now, max(minFactor, l.factor/2))
}

// grow raises the rates by growth a minute since they last grew or l
// was last throttled, back up to the quota.
func (l *Limiter) grow() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.factor < 1 {
		l.setFactor(now, min(1, l.factor+growth*now.Sub(l.grown).Minutes()))
	}
	l.grown = now
}

// setFactor sets the rates to factor of the quota, l.mu held.
func (l *Limiter) setFactor(now time.Time, factor float64) {
	l.factor = factor
	if l.rpm > 0 {
		l.requests.SetLimitAt(now, rate.Limit(factor*l.rpm*spread/60))
	}
	if l.tpm > 0 {
		l.tokens.SetLimitAt(now, rate.Limit(factor*l.tpm*spread/60))
	}
}

// options are opts of a model call with observe.
func (l *Limiter) options(opts []func(*bedrockruntime.Options)) []func(*bedrockruntime.Options) {
	return append(slices.Clip(opts), l.observe)
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

// IsErrorRetryable is that of the wrapped retryer, after it tells the
// Limiter of a ThrottlingException.
func (t *throttleObserver) IsErrorRetryable(err error) bool {
	t.l.throttle(err)
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

// throttled is whether err is a ThrottlingException.
func throttled(err error) bool {
	var t *types.ThrottlingException
	return errors.As(err, &t)
}
