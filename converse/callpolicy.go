package converse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// CallPolicy is how Options.ModelCalls makes a turn's model calls: the
// deadlines that find a stalled call, the retries of a call that stalled or
// whose stream was cut, hedging, and the fallback models. A nil policy, the
// default, sets no deadline, retries nothing, never hedges and has no
// fallback: a call waits for the SDK's own timeout, if any. The deadlines
// also apply to Conversation.Converse and ConverseStream, an engine's calls
// (see Step); the retries and hedging are Send's and Resume's, as an engine
// retries by Classify. A policy may be shared by conversations, which then
// share its first-token times (see Hedge); it must not be copied after
// first use.
type CallPolicy struct {
	// FirstToken bounds the wait for a call's first content: for a stream,
	// its first event after messageStart; for Converse, the whole answer.
	// A call past it is cancelled and fails with ErrStalled. 0 means no
	// deadline.
	FirstToken time.Duration
	// Idle bounds the silence between two events of a stream, from its first
	// content on (from the call's start, without FirstToken). A stream
	// silent longer is cancelled and fails with ErrStalled. 0 means no
	// deadline.
	Idle time.Duration
	// Retries bounds how many times a turn's call is made again after it
	// stalled (ErrStalled) or its stream was cut (a transport error, or
	// ErrStreamTruncated). It applies while nothing of its turn has taken
	// effect: no tool of the turn started (see StreamPolicy.EarlyToolStart).
	// Text already shown is superseded (see ModelRetry). A call that stalled
	// once its retries are spent goes to the next of Fallback. 0 means 2; a
	// negative value, none.
	Retries int
	// Backoff is the wait before the first retry, doubled at each retry up
	// to 10 s, of which a random half is waited (jitter), so that calls
	// that stalled together do not retry together. 0 means 200 ms.
	Backoff time.Duration
	// Hedge, between 0 and 1, is the quantile of recent first-token times
	// (0.95, say) past which a call without its first content is sent a second
	// time, identically. The first of the two to get its first content is the
	// call's, and the other is cancelled. A Hedged event reports the second
	// request. The times are those of the last 100 calls made with the policy;
	// with fewer than 20, no call is hedged. 0 means no hedging. Usage and
	// cost count what Bedrock reports: a request cancelled before its stream's
	// metadata event reports nothing, so the loser's tokens, billed or not,
	// are not counted.
	Hedge float64
	// Fallback are the model IDs to try, in order, when a turn's model call
	// fails with a *types.ThrottlingException (after the SDK's retries),
	// *types.ModelNotReadyException, *types.ServiceUnavailableException,
	// *types.ModelTimeoutException or ErrStalled (after Retries). They are
	// never tried on another error, such as a validation error, nor once a
	// tool of the turn started. Each turn starts with its own model (New's, or
	// PrepareTurn's). After a fallback answered, though, the turns of the next
	// minute (by Clock) start with that fallback. So a throttled model is not
	// asked again at every turn. The history is sent as the family of the
	// model called takes it: the status field of tool results, tool result
	// media, reasoning blocks (those of another provider are dropped, and not
	// kept from its replies). Result.Model, TurnEnd.Model and the chat spans
	// say which model answered; a ModelFallback event reports each switch.
	Fallback []string

	mu     sync.Mutex
	firsts []time.Duration // the last first-token times, a ring of firstTimes
	next   int             // where the next time goes in firsts
}

// The bounds of CallPolicy's defaults and of its hedging.
const (
	defaultRetries = 2
	defaultBackoff = 200 * time.Millisecond
	maxBackoff     = 10 * time.Second
	firstTimes     = 100 // first-token times kept for Hedge
	minFirstTimes  = 20  // first-token times needed to hedge
)

// ErrStalled means a model call went past a deadline of
// Options.ModelCalls (CallPolicy's FirstToken or Idle) and was cancelled.
// Classify takes it for OutcomeRetry; its chat span's error.type is
// "stalled".
var ErrStalled = errors.New("model call stalled")

// errHedgeLost ends the request of a hedged call that did not get its
// first content first.
var errHedgeLost = errors.New("converse: the other request of a hedged call answered first")

// fallback is the policy's fallback models; none without a policy.
func (p *CallPolicy) fallback() []string {
	if p == nil {
		return nil
	}
	return p.Fallback
}

// firstToken is the FirstToken deadline; 0 without a policy.
func (p *CallPolicy) firstToken() time.Duration {
	if p == nil {
		return 0
	}
	return p.FirstToken
}

// retryWait is how long to wait before retry number n (from 0) of a call
// of req that failed as a says, and whether to retry at all.
func (p *CallPolicy) retryWait(ctx context.Context, req *ModelCall, n int, a attempt) (time.Duration, bool) {
	if p == nil || a.started || ctx.Err() != nil || n >= p.retries() {
		return 0, false
	}
	if !errors.Is(a.err, ErrStalled) && !(req.stream && cut(a.err)) {
		return 0, false
	}
	d := p.Backoff
	if d <= 0 {
		d = defaultBackoff
	}
	d = min(d<<n, maxBackoff)
	return d/2 + rand.N(d/2+1), true
}

func (p *CallPolicy) retries() int {
	switch {
	case p.Retries < 0:
		return 0
	case p.Retries == 0:
		return defaultRetries
	}
	return p.Retries
}

// cut reports whether err is a stream cut by its transport: ended before
// messageStop, or broken by a network error.
func cut(err error) bool {
	var send *smithyhttp.RequestSendError
	var netErr net.Error
	return errors.Is(err, ErrStreamTruncated) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &send) || errors.As(err, &netErr)
}

// hedgeDelay is how long a call waits for its first content before it is
// hedged; ok is false when it is not.
func (p *CallPolicy) hedgeDelay() (d time.Duration, ok bool) {
	if p == nil || p.Hedge <= 0 || p.Hedge >= 1 {
		return 0, false
	}
	p.mu.Lock()
	times := slices.Clone(p.firsts)
	p.mu.Unlock()
	if len(times) < minFirstTimes {
		return 0, false
	}
	slices.Sort(times)
	return times[int(p.Hedge*float64(len(times)-1))], true
}

// recordFirst keeps d, a call's first-token time, for Hedge.
func (p *CallPolicy) recordFirst(d time.Duration) {
	if p == nil || p.Hedge <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.firsts) < firstTimes {
		p.firsts = append(p.firsts, d)
		return
	}
	p.firsts[p.next] = d
	p.next = (p.next + 1) % firstTimes
}

// stallTimer cancels a call with an ErrStalled cause when it fires.
func stallTimer(d time.Duration, cancel context.CancelCauseFunc, what string) *time.Timer {
	if d <= 0 {
		return nil
	}
	cause := fmt.Errorf("%w: %s for %v", ErrStalled, what, d)
	return time.AfterFunc(d, func() { cancel(cause) })
}

// watchdog holds a stream's deadlines: FirstToken until its first content,
// then Idle between its events.
type watchdog struct {
	cancel context.CancelCauseFunc
	idle   time.Duration
	first  *time.Timer // nil without FirstToken, and once the first content came
	silent *time.Timer // the Idle timer, once armed
}

// watch arms p's deadlines on a stream that cancel cancels; nil without
// deadlines.
func (p *CallPolicy) watch(cancel context.CancelCauseFunc) *watchdog {
	if p == nil || p.FirstToken <= 0 && p.Idle <= 0 {
		return nil
	}
	w := &watchdog{cancel: cancel, idle: p.Idle}
	w.first = stallTimer(p.FirstToken, cancel, "no first token")
	if w.first == nil {
		w.silent = stallTimer(p.Idle, cancel, "no event")
	}
	return w
}

// event notes an event of the stream; content says whether it is content
// (not messageStart).
func (w *watchdog) event(content bool) {
	switch {
	case w == nil:
	case w.first != nil && content:
		w.first.Stop()
		w.first = nil
		w.silent = stallTimer(w.idle, w.cancel, "no event")
	case w.silent != nil:
		w.silent.Reset(w.idle)
	}
}

// stop disarms the deadlines.
func (w *watchdog) stop() {
	if w == nil {
		return
	}
	for _, t := range []*time.Timer{w.first, w.silent} {
		if t != nil {
			t.Stop()
		}
	}
}

// ownEnd is the error of a call whose context ctx was cancelled by the
// call's own machinery, a deadline of CallPolicy or a hedge's other
// request, in place of err, the client's: otherwise err.
func ownEnd(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrStalled) || errors.Is(cause, errHedgeLost) {
		return cause
	}
	return err
}
