package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/tools"
)

// running counts the calls of command tools that have not returned, so
// that an interrupted converse exits only once their programs are killed
// and reaped. A conversation's Send returns as soon as every call is
// answered, and a call answered as cancelled may still be killing its
// program's process group: exiting then would leave the group running.
type running struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil when no one waits
}

// track returns t as a tool that counts its calls in r. The call itself,
// input validation and limits included, is t's.
func (r *running) track(t *tools.Tool) (*tools.Tool, error) {
	return tools.NewRaw(t.Name(), t.Description(), t.InputSchema(), func(ctx context.Context, in json.RawMessage) (any, error) {
		r.add(1)
		defer r.add(-1)
		return t.Call(ctx, in)
	}, func(o *tools.Options) {
		o.Timeout, o.MaxOutput, o.RequireApproval = t.Timeout(), t.MaxOutput(), t.RequiresApproval()
	})
}

func (r *running) add(d int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n += d
	if r.n == 0 && r.idle != nil {
		close(r.idle)
		r.idle = nil
	}
}

// wait returns when no call runs. A tools.Command call returns once its
// program has exited and its group has been killed.
func (r *running) wait() {
	r.mu.Lock()
	if r.n == 0 {
		r.mu.Unlock()
		return
	}
	if r.idle == nil {
		r.idle = make(chan struct{})
	}
	idle := r.idle
	r.mu.Unlock()
	<-idle
}

// turns hands the process's interrupts to the chat while a turn runs:
// Ctrl-C then cancels that turn only, and the chat returns to its prompt.
// Outside a turn an interrupt is main's: it ends the run.
type turns struct {
	mu     sync.Mutex
	cancel context.CancelCauseFunc // the running turn's, nil between turns
}

// errCtrlCStop is the cause of a turn Ctrl-C cancels: the user stopped the
// task, as the calls it cuts off then say.
var errCtrlCStop = fmt.Errorf("%w by the user (Ctrl-C)", converse.ErrStopped)

type turnsKey struct{}

// withTurns returns ctx carrying t, for the chat to find.
func withTurns(ctx context.Context, t *turns) context.Context {
	return context.WithValue(ctx, turnsKey{}, t)
}

// turnContext returns the context of a chat turn, cancelled by an
// interrupt that main hands to the chat while the turn runs, and end,
// which ends the turn for cause (nil when it ran its course). Without
// main's signals (a test running run) only ctx ends it.
func turnContext(ctx context.Context) (turn context.Context, end context.CancelCauseFunc) {
	turn, cancel := context.WithCancelCause(ctx)
	t, _ := ctx.Value(turnsKey{}).(*turns)
	if t == nil {
		return turn, cancel
	}
	t.mu.Lock()
	t.cancel = cancel
	t.mu.Unlock()
	return turn, func(cause error) {
		t.mu.Lock()
		t.cancel = nil
		t.mu.Unlock()
		cancel(cause)
	}
}

// interrupt cancels the running turn, if any, and reports whether there
// was one.
func (t *turns) interrupt() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel == nil {
		return false
	}
	t.cancel(errCtrlCStop)
	return true
}
