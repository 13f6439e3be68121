package converse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/tools"
)

// Defaults used where an Executor or Options field is zero.
const (
	DefaultConcurrency = 8
	DefaultToolTimeout = time.Minute
)

// Executor runs the tool calls of one assistant turn and answers each of
// them with a toolResult block. The zero value is ready to use, but with no
// tools every call is answered as an unknown tool.
//
// Every failure of a call (unknown tool, input that is not an object or fails
// the tool's schema, the tool's own error, a panic, a timeout, cancellation,
// output that cannot be encoded as JSON) becomes an error result for that
// call only; the other calls still run. Failures are data for the model, not
// Go errors.
type Executor struct {
	// Tools is the registry the calls are looked up in.
	Tools *tools.Registry
	// Concurrency bounds how many calls of one turn run at once;
	// 0 means DefaultConcurrency and 1 runs the calls one after another.
	Concurrency int
	// Timeout bounds each call, unless the tool sets its own
	// (tools.WithTimeout); 0 means DefaultToolTimeout. Calls of inline tools
	// (tools.WithInline) are bounded by their own timeout only.
	Timeout time.Duration
	// OmitStatus leaves the status field out of the results, for model
	// families that reject it. Error results still start with "Error:".
	OmitStatus bool
	// JSONContent answers with json content blocks instead of text blocks.
	// A json block must hold an object, so other values are wrapped as
	// {"result": value}. Error results are always text.
	JSONContent bool
	// Logger receives the stacks of recovered panics; nil discards them.
	Logger *slog.Logger
	// OnEvent, if set, receives a ToolStart and a ToolEnd event for every
	// call. Calls to it are serialized.
	OnEvent func(Event)

	eventMu sync.Mutex
}

// Execute answers every toolUse block in content, the content of an
// assistant message, and returns the toolResult blocks for the next user
// message: one per toolUse, with the same toolUseId, in the order of the
// toolUse blocks. Other blocks are ignored; no toolUse blocks gives no
// results. When ctx is cancelled, calls not yet finished are answered with
// error results.
func (e *Executor) Execute(ctx context.Context, content []types.ContentBlock) []types.ContentBlock {
	return e.execute(ctx, 0, toolCalls(content), nil)
}

// toolCall is one toolUse block, decoded.
type toolCall struct {
	id, name string
	input    json.RawMessage
	inputErr error // the input document could not be read
}

// outcome is what running a call produced.
type outcome struct {
	output   json.RawMessage
	err      error
	duration time.Duration
}

// toolCalls picks the toolUse blocks out of an assistant message.
func toolCalls(content []types.ContentBlock) []toolCall {
	calls := make([]toolCall, 0, len(content))
	for _, b := range content {
		tu, ok := b.(*types.ContentBlockMemberToolUse)
		if !ok {
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
func (e *Executor) execute(ctx context.Context, turn int, calls []toolCall, started map[string]*pending) []types.ContentBlock {
	results := make([]types.ContentBlock, len(calls))
	e.collect(ctx, turn, calls, started, func(i int, out outcome) {
		results[i] = e.finish(turn, calls[i], out)
	})
	return results
}

// pending is a call started ahead of the end of its turn.
type pending struct {
	done chan struct{}
	out  outcome
}

// start runs c in the background and returns its pending outcome.
func (e *Executor) start(ctx context.Context, turn int, c toolCall) *pending {
	p := &pending{done: make(chan struct{})}
	go e.collect(ctx, turn, []toolCall{c}, nil, func(_ int, out outcome) {
		p.out = out
		close(p.done)
	})
	return p
}

// report is what a call's goroutine, or the end of its context, tells
// collect.
type report struct {
	i     int
	out   outcome
	ended bool // the call's context ended before the call did
}

// running is a call collect has started.
type running struct {
	ctx     context.Context
	cancel  context.CancelFunc
	stop    func() bool // stops the context.AfterFunc that reports the context's end; nil inline
	begin   time.Time   // zero unless e.OnEvent is set
	timeout time.Duration
	decided bool
}

// elapsed is the call's duration so far, for its ToolEnd event.
func (st *running) elapsed() time.Duration {
	if st.begin.IsZero() {
		return 0
	}
	return time.Since(st.begin)
}

// collect runs calls, at most e.concurrency() at a time, each on its own
// goroutine and with its timeout, and hands decided the outcome of each as
// soon as it is known, on the caller's goroutine. A call that outlives its
// timeout, or ctx, is answered as timed out or cancelled and left behind: its
// goroutine's report, when it comes, finds no one waiting for it. The calls
// of inline tools (tools.WithInline) run on the caller's goroutine, within
// the same bound. (Helper goroutines for them cost more than they saved: see
// BENCHMARKS.md.)
func (e *Executor) collect(ctx context.Context, turn int, calls []toolCall, started map[string]*pending, decided func(int, outcome)) {
	// Every call reports at most twice (its outcome, its context's end), so
	// no goroutine ever blocks on reports, even after collect returns. A turn
	// of inline calls only makes none.
	var reports chan report
	state := make([]running, len(calls))
	repeated := repeatedIDs(calls)
	limit := e.concurrency()
	inFlight, next := 0, 0
	for next < len(calls) || inFlight > 0 {
		for ; next < len(calls) && inFlight < limit; next++ {
			c, st := calls[next], &state[next]
			if repeated != nil && repeated[next] {
				st.decided = true
				decided(next, outcome{err: fmt.Errorf("%w: %q was already answered in this turn", ErrDuplicateID, c.id)})
				continue
			}
			if p := started[c.id]; p != nil {
				if reports == nil {
					reports = make(chan report, 2*len(calls))
				}
				i := next
				go func() {
					<-p.done
					reports <- report{i: i, out: p.out}
				}()
				inFlight++
				continue
			}
			tool, out, ok := e.prepare(ctx, turn, c, st)
			switch {
			case !ok:
				st.decided = true
				decided(next, out)
			case tool.Inline():
				st.decided = true
				decided(next, e.settle(c, st, report{i: next, out: e.invoke(st.ctx, tool, c.input)}))
			default:
				if reports == nil {
					reports = make(chan report, 2*len(calls))
				}
				e.spawn(next, c, st, tool, reports)
				inFlight++
			}
		}
		if inFlight == 0 {
			continue
		}
		r := <-reports
		st := &state[r.i]
		if st.decided {
			continue // the late outcome of a call answered at its context's end
		}
		st.decided = true
		inFlight--
		decided(r.i, e.settle(calls[r.i], st, r))
	}
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

// prepare reports the call's ToolStart, looks its tool up and gives it a
// context: the turn's, bounded by the call's timeout. It returns false, with
// the call's outcome, when the call cannot start: its input could not be
// read, its tool is unknown, or ctx has ended. The calls of inline tools are
// bounded by the tool's own timeout only: no one could abandon them anyway.
func (e *Executor) prepare(ctx context.Context, turn int, c toolCall, st *running) (*tools.Tool, outcome, bool) {
	if e.OnEvent != nil { // building the event, and timing the call, is for listeners only
		e.emit(ToolStart{Turn: turn, ID: c.id, Name: c.name, Input: c.input})
		st.begin = time.Now()
	}
	var err error
	tool, ok := e.lookup(c.name)
	switch {
	case c.inputErr != nil:
		err = c.inputErr
	case !ok:
		err = fmt.Errorf("%w %q; available tools: %s", ErrUnknownTool, c.name, e.available())
	case ctx.Err() != nil:
		err = fmt.Errorf("tool %q was cancelled: %w", c.name, ctx.Err())
	}
	if err != nil {
		return nil, outcome{err: err, duration: st.elapsed()}, false
	}
	st.timeout = tool.Timeout()
	if st.timeout <= 0 && !tool.Inline() {
		st.timeout = e.timeout()
	}
	st.ctx, st.cancel = ctx, func() {}
	if st.timeout > 0 {
		st.ctx, st.cancel = context.WithTimeout(ctx, st.timeout)
	}
	return tool, outcome{}, true
}

// spawn runs the call on its own goroutine, which reports its outcome, as
// does the end of its context, whichever comes first.
func (e *Executor) spawn(i int, c toolCall, st *running, tool *tools.Tool, reports chan<- report) {
	st.stop = context.AfterFunc(st.ctx, func() { reports <- report{i: i, ended: true} })
	ctx := st.ctx
	go func() {
		growStack(stackDepth)
		reports <- report{i: i, out: e.invoke(ctx, tool, c.input)}
	}()
}

// settle makes a call's outcome from its report. A call whose context ended
// first, or that failed once it had, is answered in our words: timed out or
// cancelled.
func (e *Executor) settle(c toolCall, st *running, r report) outcome {
	if st.cancel == nil {
		return r.out // started early: its own collect settled it
	}
	out := r.out
	if err := st.ctx.Err(); r.ended || out.err != nil && err != nil {
		if errors.Is(err, context.DeadlineExceeded) && st.timeout > 0 {
			out = outcome{err: fmt.Errorf("tool %q timed out after %v: %w", c.name, st.timeout, err)}
		} else {
			out = outcome{err: fmt.Errorf("tool %q was cancelled: %w", c.name, err)}
		}
	}
	if st.stop != nil {
		st.stop()
	}
	st.cancel()
	out.duration = st.elapsed()
	return out
}

// invoke calls the tool, recovering a panic, and encodes its output.
func (e *Executor) invoke(ctx context.Context, tool *tools.Tool, input json.RawMessage) (out outcome) {
	defer func() {
		if v := recover(); v != nil {
			e.logger().Error("converse: tool panicked", "tool", tool.Name(), "panic", v, "stack", string(debug.Stack()))
			out = outcome{err: fmt.Errorf("%w: tool %q: %v", ErrToolPanic, tool.Name(), v)}
		}
	}()
	v, err := tool.Call(ctx, input)
	if err != nil {
		return outcome{err: err}
	}
	b, err := encodeOutput(v)
	if err != nil {
		return outcome{err: fmt.Errorf("%w: tool %q: %v", ErrToolOutput, tool.Name(), err)}
	}
	return outcome{output: b}
}

// encodeOutput is json.Marshal, with the common scalar results written
// without reflection.
func encodeOutput(v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return appendString(nil, v), nil
	case bool:
		return strconv.AppendBool(nil, v), nil
	case int:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(nil, v, 10), nil
	}
	return json.Marshal(v)
}

// finish turns an outcome into a toolResult block and reports it.
func (e *Executor) finish(turn int, c toolCall, out outcome) types.ContentBlock {
	status := types.ToolResultStatusSuccess
	var content types.ToolResultContentBlock
	switch {
	case out.err != nil:
		status = types.ToolResultStatusError
		content = &types.ToolResultContentBlockMemberText{Value: errorText(out.err)}
	case e.JSONContent:
		content = &types.ToolResultContentBlockMemberJson{Value: jsonObject(out.output)}
	default:
		content = &types.ToolResultContentBlockMemberText{Value: string(out.output)}
	}
	if e.OnEvent != nil {
		e.emit(ToolEnd{Turn: turn, ID: c.id, Name: c.name, Input: c.input, Output: out.output,
			Err: out.err, Status: status, Duration: out.duration})
	}
	block := types.ToolResultBlock{ToolUseId: aws.String(c.id), Content: []types.ToolResultContentBlock{content}}
	if !e.OmitStatus {
		block.Status = status
	}
	return &types.ContentBlockMemberToolResult{Value: block}
}

// errorText is the text of an error result: never empty, always starting
// with "Error:", as Bedrock rejects error results without content.
func errorText(err error) string {
	msg := strings.TrimSpace(err.Error())
	if msg == "" {
		msg = "the tool failed without saying why"
	}
	return "Error: " + msg
}

// jsonObject makes a document of a JSON value, wrapping a non-object as
// {"result": value} because a json content block must be an object.
func jsonObject(raw json.RawMessage) document.Interface {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		v = string(raw)
	}
	if m, ok := v.(map[string]any); ok {
		return document.NewLazyDocument(m)
	}
	return document.NewLazyDocument(map[string]any{"result": v})
}

func (e *Executor) lookup(name string) (*tools.Tool, bool) {
	if e.Tools == nil {
		return nil, false
	}
	return e.Tools.Lookup(name)
}

func (e *Executor) available() string {
	if e.Tools == nil || e.Tools.Len() == 0 {
		return "(none)"
	}
	return strings.Join(e.Tools.Names(), ", ")
}

func (e *Executor) concurrency() int {
	if e.Concurrency <= 0 {
		return DefaultConcurrency
	}
	return e.Concurrency
}

func (e *Executor) timeout() time.Duration {
	if e.Timeout <= 0 {
		return DefaultToolTimeout
	}
	return e.Timeout
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

// stackDepth is a variable so that the compiler keeps growStack's frame.
var stackDepth = 1

// growStack makes the calling goroutine's stack 16 KiB in one step. A tool
// call decodes and validates JSON, which takes a new goroutine's 2 KiB stack
// through three doublings, each copying the whole deeper stack; growing it
// first, while it is shallow, costs one cheap copy. (CockroachDB's
// util/growstack does the same.) BenchmarkExecute shows the gain.
//
//go:noinline
func growStack(i int) byte {
	var frame [8 << 10]byte
	frame[i] = 1
	return frame[len(frame)-1-i]
}
