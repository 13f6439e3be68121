package converse

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// attempt is one request of a model call: its reply, or why it failed,
// with the text it showed and whether a tool of its turn started.
type attempt struct {
	t       *turnResult
	err     error
	shown   string // the text reported in Text events
	started bool   // a call of the turn started early, while it streamed
}

// hedge is the race of a hedged call's two requests to their first
// content.
type hedge struct {
	mu      sync.Mutex
	winner  int // the request that got its first content first; -1 before
	cancels [2]context.CancelCauseFunc
}

// claim is the first-content hook of request i, begun at began: the first
// request to call it wins, which cancels the other.
func (h *hedge) claim(i int, began time.Time, p *CallPolicy) func() bool {
	return func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.winner >= 0 {
			return h.winner == i
		}
		h.winner = i
		p.recordFirst(time.Since(began))
		if other := h.cancels[1-i]; other != nil {
			other(errHedgeLost)
		}
		return true
	}
}

// done is a request's attempt, by its index.
type done struct {
	i int
	a attempt
}

// hedged makes req's call. With CallPolicy.Hedge, a call with no first
// content by the hedge's delay is sent a second time, and the first
// request to get its first content is the call's. Events come from one
// request at a time, the winner's, so OnEvent is never called concurrently.
func (m *caller) hedged(ctx context.Context, req *ModelCall) attempt {
	h := &hedge{winner: -1}
	delay, ok := m.policy.hedgeDelay()
	if !ok {
		return m.request(ctx, req, h.claim(0, time.Now(), m.policy))
	}
	results := make(chan done, 2)
	launch := func(i int) {
		rctx, cancel := context.WithCancelCause(ctx)
		h.cancels[i] = cancel
		claim := h.claim(i, time.Now(), m.policy)
		go func() {
			a := m.request(rctx, req, claim)
			results <- done{i, keepUntilDiscarded(a, cancel)}
		}()
	}
	h.mu.Lock()
	launch(0)
	h.mu.Unlock()
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case r := <-results:
		return r.a // answered or failed before the delay
	case <-timer.C:
	}
	// Under the lock, the first request cannot claim, and so emit, while
	// the Hedged event is reported.
	h.mu.Lock()
	if h.winner >= 0 {
		h.mu.Unlock()
		return (<-results).a
	}
	m.emit(Hedged{Turn: req.Turn, Model: aws.ToString(req.Input.ModelId), After: delay})
	launch(1)
	h.mu.Unlock()
	rs := [2]done{<-results, <-results}
	for _, r := range rs {
		if r.i == h.winner {
			return r.a
		}
	}
	if rs[0].i == 0 { // neither got content: the first request's error
		return rs[0].a
	}
	return rs[1].a
}

// keepUntilDiscarded ends a hedged request's context, cancel's, when its
// turn is discarded (see turnResult.discard), so that the calls it started
// early run on; at once if it failed.
func keepUntilDiscarded(a attempt, cancel context.CancelCauseFunc) attempt {
	if a.t == nil {
		cancel(nil)
		return a
	}
	early := a.t.cancel
	a.t.cancel = func() {
		if early != nil {
			early()
		}
		cancel(nil)
	}
	return a
}
