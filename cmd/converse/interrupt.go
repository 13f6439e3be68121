package main

import (
	"context"
	"encoding/json"
	"sync"

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
