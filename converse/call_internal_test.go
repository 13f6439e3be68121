package converse

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// stalled is a context whose deadline has passed but whose timer has not
// fired yet, as in a process stopped and resumed (SIGSTOP, a busy CI
// runner): its Err is still nil.
type stalled struct {
	context.Context
	deadline time.Time
}

func (s stalled) Deadline() (time.Time, bool) { return s.deadline, true }

// TestSettleByTheClock: a result that arrives after its call's deadline is a
// timeout, whether or not the context has noticed; one from before the
// deadline stands.
func TestSettleByTheClock(t *testing.T) {
	deadline := time.Now().Add(-time.Second)
	late := `Error: tool "stubborn" timed out after 50ms: context deadline exceeded`
	tests := []struct {
		name     string
		finished time.Time
		out      outcome
		want     string
	}{
		{"success after the deadline", deadline.Add(250 * time.Millisecond), outcome{output: json.RawMessage(`"late"`)}, late},
		{"success at the deadline", deadline, outcome{output: json.RawMessage(`"late"`)}, late},
		{"failure after the deadline", deadline.Add(time.Millisecond), outcome{err: assert.AnError}, late},
		{"success before the deadline", deadline.Add(-time.Millisecond), outcome{output: json.RawMessage(`"in time"`)}, `"in time"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Executor{}
			c := toolCall{id: "h", name: "stubborn"}
			st := &running{ctx: stalled{context.Background(), deadline}, cancel: func() {}, timeout: 50 * time.Millisecond, out: tt.out, finished: tt.finished}
			out := e.settle(c, st, report{})
			got := string(out.output)
			if out.err != nil {
				got = errorText(out.err)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
