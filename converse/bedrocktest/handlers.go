package bedrocktest

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Script returns a Handler that answers the calls with replies, in order.
// A call after the last reply gets a 400 ValidationException, which the
// SDK does not retry, with a message starting "bedrocktest: script
// exhausted:".
func Script(replies ...*Reply) Handler {
	var (
		mu   sync.Mutex
		next int
	)
	return HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			return nil, setupErrorf("script exhausted: call %d (%s %s) but only %d replies", next+1, req.Operation, aws.ToString(req.ModelId), len(replies))
		}
		next++
		return replies[next-1], nil
	})
}

// Fail returns a Handler whose first n calls fail with e; later calls go to h.
func Fail(n int, e *Error, h Handler) Handler {
	var (
		mu    sync.Mutex
		calls int
	)
	return HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) {
		mu.Lock()
		calls++
		fail := calls <= n
		mu.Unlock()
		if fail {
			return nil, e
		}
		return h.ServeConverse(ctx, req)
	})
}

// Throttle returns a Handler whose first n calls fail with Throttling().
func Throttle(n int, h Handler) Handler {
	return Fail(n, Throttling(), h)
}

// Delay returns a Handler that waits d before passing each call to h. If
// the call's context ends first (the client gave up), it returns the
// context's error.
func Delay(d time.Duration, h Handler) Handler {
	return HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return h.ServeConverse(ctx, req)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}
