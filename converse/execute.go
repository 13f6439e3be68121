package converse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/media"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/tools"
)

// Executor runs the tool calls of one assistant turn and answers each of
// them with a toolResult block. The zero value is ready to use, but with no
// tools every call is answered as an unknown tool. An Executor must not be
// copied after first use.
//
// Every failure of a call becomes an error result for that call only, and
// the other calls still run. Failures include an unknown tool, input that
// is not an object or fails the tool's schema, the tool's own error, a
// panic, a timeout, cancellation, and output that cannot be encoded as
// JSON. Failures are data for the model, not
// Go errors. What a tool returns is untrusted: a panic of its error's Error
// method or of its output's MarshalJSON is recovered like a panic of the tool.
type Executor struct {
	// Registry is the registry the calls are looked up in.
	Registry *tools.Registry
	// ToolOptions set the concurrency, the timeout and the output limit of
	// the calls, and the form of the results. Concurrent Executes share the
	// Concurrency bound.
	ToolOptions
	// Logger receives the stacks of recovered panics and a line for each
	// call abandoned while its tool still runs; nil discards them.
	Logger *slog.Logger
	// OnEvent, if set, receives a ToolStart and a ToolEnd event for every
	// call. Calls to it are serialized.
	OnEvent func(Event)

	eventMu sync.Mutex
	slots   slots
	tel     *telemetry   // the Conversation's; see telemetry
	media   *media.Rules // the Conversation's model's; nil sends every kind
	telOnce sync.Once
}

// Execute answers every toolUse block in content, the content of an
// assistant message, and returns the toolResult blocks for the next user
// message: one per toolUse, with the same toolUseId, in the order of the
// toolUse blocks. Other blocks are ignored, and so are the calls of
// server-side system tools (type server_tool_use), which Bedrock ran and
// answered in the same message; no toolUse blocks gives no results. When
// ctx is cancelled, calls not yet finished are answered with error results.
// The results' documents have names distinct from each other (see
// MediaInfo), but not from those of documents earlier in a history the
// caller keeps, which a Conversation also avoids.
func (e *Executor) Execute(ctx context.Context, content []types.ContentBlock) []types.ContentBlock {
	return e.execute(ctx, 0, toolCalls(content), nil)
}

// Abandoned returns the number of calls answered already (timed out or
// cancelled) whose tools have not returned yet. They still hold their slots
// of Concurrency.
func (e *Executor) Abandoned() int {
	return e.slots.abandoned()
}

// toolCall is one toolUse block, decoded.
type toolCall struct {
	id, name string
	input    json.RawMessage
	inputErr error         // the input document could not be read
	answer   *tools.Answer // the answer to the question an earlier run asked
	decided  []Decision    // the decisions for the calls its nested conversation paused (see Caller.Decisions)
}

// outcome is what running a call produced.
type outcome struct {
	output    json.RawMessage
	media     []tools.Media // of a tools.Result, sent beside output
	err       error
	text      string // the error result's text when err came from the tool; made where a panic is recovered
	limit     int    // the tool's output limit; 0 means the executor's
	duration  time.Duration
	abandoned bool // answered while the tool still runs
}

// toolCalls picks the client's toolUse blocks out of an assistant message;
// calls of server-side system tools, which Bedrock ran, are left out.
func toolCalls(content []types.ContentBlock) []toolCall {
	calls := make([]toolCall, 0, len(content))
	for _, b := range content {
		tu, ok := b.(*types.ContentBlockMemberToolUse)
		if !ok || !message.ClientCall(b) {
			continue
		}
		c := toolCall{id: aws.ToString(tu.Value.ToolUseId), name: aws.ToString(tu.Value.Name)}
		c.input, c.inputErr = documentJSON(tu.Value.Input)
		calls = append(calls, c)
	}
	return calls
}

// execute runs calls and answers each of them. started holds calls already
// running (streaming's early start), keyed by toolUseId.
func (e *Executor) execute(ctx context.Context, turn int, calls []toolCall, started map[string]*earlyCall) []types.ContentBlock {
	results := make([]types.ContentBlock, len(calls))
	e.collect(ctx, turn, calls, started, func(i int, out outcome) {
		results[i] = e.finish(turn, calls[i], out)
	})
	return media.Fit(nil, results)
}

// executeAsking is execute for a Conversation, which can pause a call
// whose tool asks the user a question (a *tools.InputRequiredError), or
// whose nested conversation paused (a *PausedError): such a call gets
// that error, by call, and no result. Its run ends all the same, with a
// ToolEnd event whose Err holds it.
func (e *Executor) executeAsking(ctx context.Context, turn int, calls []toolCall, started map[string]*earlyCall) ([]types.ContentBlock, []error) {
	results := make([]types.ContentBlock, len(calls))
	pauses := make([]error, len(calls))
	e.collect(ctx, turn, calls, started, func(i int, out outcome) {
		results[i] = e.finish(turn, calls[i], out)
		var asks *tools.InputRequiredError
		var inner *PausedError
		if errors.As(out.err, &asks) || errors.As(out.err, &inner) && len(inner.Pending) > 0 {
			results[i], pauses[i] = nil, out.err
		}
	})
	return media.Fit(nil, results), pauses
}

// earlyCall is a call started ahead of the end of its turn.
type earlyCall struct {
	call toolCall
	done chan struct{}
	out  outcome
}

// start runs c in the background and returns its pending outcome.
func (e *Executor) start(ctx context.Context, turn int, c toolCall) *earlyCall {
	p := &earlyCall{call: c, done: make(chan struct{})}
	go e.collect(ctx, turn, []toolCall{c}, nil, func(_ int, out outcome) {
		p.out = out
		close(p.done)
	})
	return p
}

// answers reports whether p is the call c: the same tool with the same
// input. A repeated toolUseId must never get another call's outcome.
func (p *earlyCall) answers(c toolCall) bool {
	return p != nil && p.call.name == c.name && bytes.Equal(p.call.input, c.input)
}

// collect runs calls, each on its own goroutine and with its timeout, and
// hands decided the outcome of each as soon as it is known, on the caller's
// goroutine. At most e.concurrency() calls of the turn are started at once,
// and each takes a slot of the executor's (see slots) before its tool runs,
// waiting for one until its deadline. A call that outlives its timeout, or
// ctx, is answered as timed out or cancelled and left behind, holding its
// slot: its goroutine's report, when it comes, finds no one waiting for it.
// The goroutines read their calls in place, so calls must not change after.
func (e *Executor) collect(ctx context.Context, turn int, calls []toolCall, started map[string]*earlyCall, decided func(int, outcome)) {
	b := &batch{e: e, ctx: ctx, turn: turn, calls: calls, started: started, decided: decided,
		// Every call reports at most twice (its outcome, its deadline),
		// and ctx's end once, so no goroutine ever blocks on reports,
		// even after collect returns.
		reports: make(chan report, 2*len(calls)+1), state: make([]running, len(calls)),
		repeated: repeatedIDs(calls), limit: e.concurrency()}
	defer b.abortUndecided()
	// One watch of ctx for all the calls: a context.AfterFunc of each
	// call's context cost 0.5 KB a call.
	defer context.AfterFunc(ctx, func() { b.reports <- report{i: allCalls, ended: true} })()
	for b.next < len(calls) || b.inFlight > 0 {
		freed := b.startMore()
		if freed == nil && b.inFlight == 0 {
			continue
		}
		b.receive(freed)
	}
}

// batch is the state of collect: the calls, started in order, at most
// limit in flight.
type batch struct {
	e        *Executor
	ctx      context.Context
	turn     int
	calls    []toolCall
	started  map[string]*earlyCall
	decided  func(int, outcome)
	reports  chan report
	state    []running
	repeated []bool
	limit    int
	inFlight int
	next     int // the first call not started
}

// decide hands out the outcome of call i.
func (b *batch) decide(i int, out outcome) {
	b.state[i].decided = true
	b.state[i].span.end(out, b.e.maxOutput())
	b.decided(i, out)
}

// abortUndecided cuts off the calls not decided: a panic of OnEvent or
// decided ends collect.
func (b *batch) abortUndecided() {
	for i := range b.state {
		if !b.state[i].decided {
			abort(b.state[i].span.span)
		}
	}
}

// startMore starts the calls that may start now: answered at once
// (a repeated ID, a call refused before it runs), waited for (a call
// started early), or spawned. It returns a channel closed when a slot is
// given back, if calls[next] waits for one.
func (b *batch) startMore() (freed <-chan struct{}) {
	for ; b.next < len(b.calls) && b.inFlight < b.limit; b.next++ {
		c, st := b.calls[b.next], &b.state[b.next]
		if st.tool == nil {
			if b.repeated != nil && b.repeated[b.next] {
				_, st.span = b.e.startTool(b.ctx, c)
				b.decide(b.next, outcome{err: duplicateID(c.id)})
				continue
			}
			if p := b.started[c.id]; c.answer == nil && p.answers(c) {
				i := b.next
				go func() {
					<-p.done
					b.state[i].out = p.out
					b.reports <- report{i: i}
				}()
				b.inFlight++
				continue
			}
			tool, out, ok := b.e.prepare(b.ctx, b.turn, c, st)
			if !ok {
				b.decide(b.next, out)
				continue
			}
			st.tool = tool
		}
		if st.slot, freed = b.e.slots.take(b.limit, c); freed != nil {
			return freed
		}
		b.e.spawn(b.next, &b.calls[b.next], st, b.reports)
		b.inFlight++
	}
	return nil
}

// receive takes the next report and decides its call, or, when freed is
// not nil, wakes when a slot is given back, or answers calls[next] when
// its context ends before it got one.
func (b *batch) receive(freed <-chan struct{}) {
	var waiting context.Context // of calls[next], while it waits for a slot
	if freed != nil {
		waiting = b.state[b.next].ctx
	}
	r, ok := wait(b.reports, freed, waiting)
	switch {
	case ok && r.i == allCalls:
		b.endRunning()
	case ok && b.state[r.i].decided:
		// the late outcome of a call answered at its context's end
	case ok:
		b.inFlight--
		b.decide(r.i, b.e.settle(b.calls[r.i], &b.state[r.i], r))
	case waiting != nil && waiting.Err() != nil:
		b.decide(b.next, b.e.noSlot(b.calls[b.next], &b.state[b.next]))
		b.next++
	}
}

// endRunning answers the running calls as cancelled or timed out when
// ctx, and so each call's context, has ended. Calls started early are
// answered by their own collect.
func (b *batch) endRunning() {
	for i := range b.next {
		if st := &b.state[i]; !st.decided && st.cancel != nil {
			b.inFlight--
			b.decide(i, b.e.settle(b.calls[i], st, report{i: i, ended: true}))
		}
	}
}

// wait returns the next report, or false when a slot was freed or the
// context of the call waiting for one, waiting, ended first. With no call
// waiting for a slot (freed is nil), it only receives: runtime.selectgo,
// whose code is large, had the most instruction-cache misses of the code a
// conversation runs beyond the naive loop's (BENCHMARKS.md).
func wait(reports <-chan report, freed <-chan struct{}, waiting context.Context) (report, bool) {
	if freed == nil {
		return <-reports, true
	}
	select {
	case r := <-reports:
		return r, true
	case <-freed:
	case <-waiting.Done():
	}
	return report{}, false
}

// duplicateID is the failure of a call repeating the toolUseId id of an
// earlier call of its turn.
func duplicateID(id string) error {
	return fmt.Errorf("%w: %q was already answered in this turn", ErrDuplicateID, id)
}

// repeatedIDs marks the calls whose toolUseId an earlier call has: only the
// first is run. It returns nil when every id is distinct.
func repeatedIDs(calls []toolCall) []bool {
	var repeated []bool
	seen := make(map[string]bool, len(calls))
	for i, c := range calls {
		if seen[c.id] {
			if repeated == nil {
				repeated = make([]bool, len(calls))
			}
			repeated[i] = true
		}
		seen[c.id] = true
	}
	return repeated
}

func (e *Executor) lookup(name string) (*tools.Tool, bool) {
	if e.Registry == nil {
		return nil, false
	}
	return e.Registry.Lookup(name)
}

// resumes reports whether tc's tool goes on with a call cut off by a
// crash (tools.Options.Resumable), so that Resume runs it again.
func (e *Executor) resumes(tc toolCall) bool {
	tool, ok := e.lookup(tc.name)
	return ok && tool.Resumable()
}

func (e *Executor) available() string {
	if e.Registry == nil || e.Registry.Len() == 0 {
		return "(none)"
	}
	return strings.Join(e.Registry.Names(), ", ")
}

func (e *Executor) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

// emit hands an event to OnEvent; calls are serialized by eventMu.
func (e *Executor) emit(ev Event) {
	if e.OnEvent != nil {
		e.eventMu.Lock()
		defer e.eventMu.Unlock()
		e.OnEvent(ev)
	}
}
