package converse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/tooluse/bedrock/tools"
)

// report is what a call's goroutine, or the end of its context, tells
// collect: which call, and how. The goroutine leaves the outcome in the
// call's running, so that the channel's buffer stays small.
type report struct {
	i     int  // the call, or allCalls
	ended bool // the call's context ended before the call did
}

// allCalls is the call of the report of the end of collect's context,
// which ends the context of every call.
const allCalls = -1

// running is a call collect has started.
type running struct {
	ctx     context.Context
	cancel  context.CancelFunc
	stop    func() bool   // stops the timer that reports the call's deadline; nil until spawned
	tool    *tools.Tool   // nil until prepared
	input   tools.Checked // the input, checked when prepared; zero with ToolOptions.Middleware, which sees it first
	slot    *slot         // nil until it has one
	begin   time.Time     // zero unless e.OnEvent is set
	timeout time.Duration
	decided bool
	span    toolSpan // zero for a call answered by its early start
	// out and finished (when the tool returned) are written by the
	// call's goroutine before it reports, and read only after.
	out      outcome
	finished time.Time
}

// elapsed is the call's duration so far, for its ToolEnd event.
func (st *running) elapsed() time.Duration {
	if st.begin.IsZero() {
		return 0
	}
	return time.Since(st.begin)
}

// prepare reports the call's ToolStart, looks its tool up and gives it a
// context: the turn's, bounded by the call's timeout. It returns false, with
// the call's outcome, when the call cannot start: its input could not be
// read, its tool is unknown, or ctx has ended.
func (e *Executor) prepare(ctx context.Context, turn int, c toolCall, st *running) (*tools.Tool, outcome, bool) {
	// The call's span is in the tool's context: the tool's own spans nest under it.
	ctx, st.span = e.startTool(ctx, c)
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
	if len(e.Middleware) == 0 {
		if st.input, err = checkInput(tool, c.input); err != nil {
			return nil, outcome{err: err, duration: st.elapsed()}, false
		}
	}
	st.timeout = tool.Timeout()
	if st.timeout <= 0 {
		st.timeout = e.timeout()
	}
	ctx = tools.WithCallID(ctx, c.id) // the tool may pass it on, as lambdatool does
	if c.answer != nil {
		ctx = tools.WithAnswer(ctx, *c.answer)
	}
	if c.decided != nil {
		ctx = context.WithValue(ctx, decisionsKey{}, c.decided)
	}
	st.ctx, st.cancel = context.WithTimeout(ctx, st.timeout)
	return tool, outcome{}, true
}

// checkInput checks a call's input for its tool on the goroutine that
// starts the calls, so a refused input costs no goroutine. A panic of the
// check is the call's error, as one of the tool is.
func checkInput(tool *tools.Tool, input json.RawMessage) (in tools.Checked, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: tool %q while its input was checked: %s", ErrToolPanic, tool.Name(), describe(v))
		}
	}()
	return tool.CheckInput(input)
}

// spawn runs the call on its own goroutine, which reports its outcome, as
// does a timer at the call's deadline, whichever comes first. The end of
// the batch's context, the other end of the call's, is reported by collect's
// watch.
func (e *Executor) spawn(i int, c *toolCall, st *running, reports chan<- report) {
	deadline, _ := st.ctx.Deadline()
	st.stop = time.AfterFunc(time.Until(deadline), func() { reports <- report{i: i, ended: true} }).Stop
	go func() {
		presize(i)
		e.run(c, st)
		reports <- report{i: i}
	}()
}

// presizeFrame is presize's frame: with the two frames under it, it fits
// in no stack smaller than 8 KiB.
const presizeFrame = 4 << 10

// presize grows the stack of a tool call's goroutine to 8 KiB before the
// tool runs. A goroutine starts with 2 KiB, and decoding a typed tool's
// input takes more. Grown there, the stack is copied with every frame
// above it, one by one, which was a quarter of a call's overhead
// (BenchmarkExecute, BENCHMARKS.md section 1); grown here, with two. It
// returns a byte of its frame, which i picks, so the compiler keeps the
// frame.
//
//go:noinline
func presize(i int) byte {
	var frame [presizeFrame]byte
	frame[i%presizeFrame] = 1
	return frame[(i+1)%presizeFrame]
}

// run calls the tool, notes its outcome and when it returned in st, and
// gives its slot back. Of st it writes only out and finished.
func (e *Executor) run(c *toolCall, st *running) {
	ctx, in, sl := st.ctx, st.input, st.slot
	e.invoke(ctx, st.tool, in, c, &st.out)
	st.finished = time.Now()
	e.giveBack(sl, c)
}

// giveBack gives a call's slot back, and logs the return of a call that was
// abandoned. It keeps the log's arguments off the stack of run, which holds
// the tool's own frames (BENCHMARKS.md, section 1).
func (e *Executor) giveBack(sl *slot, c *toolCall) {
	if e.slots.give(sl) {
		e.logger().Info("converse: an abandoned tool call returned", "tool", c.name, "toolUseId", c.id)
	}
}

// settle makes a call's outcome from its report. A call whose context ended
// first, or whose tool returned after its deadline, or failed once its
// context was cancelled, is answered in our words: timed out or cancelled.
func (e *Executor) settle(c toolCall, st *running, r report) outcome {
	if st.cancel == nil {
		return st.out // started early: its own collect settled it
	}
	var out outcome
	if !r.ended {
		out = st.out
	}
	if err := st.endErr(r); err != nil {
		out = ended(c, st, err, "")
	}
	if r.ended && e.slots.abandon(st.slot) {
		out.abandoned = true
		e.logger().Warn("converse: tool call answered as timed out or cancelled; the tool has not returned yet and keeps its concurrency slot",
			"tool", c.name, "toolUseId", c.id, "abandoned", e.Abandoned())
	}
	return st.close(out)
}

// endErr says how the call's context ended, if that decides its outcome. It
// goes by the clock: a tool that returned at or after its deadline timed
// out, though the context's timer may not have fired yet (a stalled process
// runs both late). A success before the deadline stands, even if the context
// was cancelled meanwhile.
func (st *running) endErr(r report) error {
	if r.ended {
		// The context ends with the batch's or at the deadline: its own
		// timer is due, if it has not fired yet.
		<-st.ctx.Done()
		return st.ctx.Err()
	}
	err := st.ctx.Err()
	if d, ok := st.ctx.Deadline(); ok && !st.finished.Before(d) {
		return context.DeadlineExceeded
	}
	if st.out.err != nil && errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// noSlot answers a call whose context ended while it waited for a slot.
func (e *Executor) noSlot(c toolCall, st *running) outcome {
	return st.close(ended(c, st, st.ctx.Err(), " waiting for a free slot, all held by "+e.slots.holders()))
}

// ended is the outcome of a call whose context ended; where says what it was
// doing, if not running.
func ended(c toolCall, st *running, err error, where string) outcome {
	if errors.Is(err, context.DeadlineExceeded) {
		return outcome{err: fmt.Errorf("tool %q timed out after %v%s: %w", c.name, st.timeout, where, err)}
	}
	if cause := context.Cause(st.ctx); errors.Is(cause, ErrStopped) {
		return outcome{err: fmt.Errorf("%w while tool %q ran%s; it may or may not have taken effect", cause, c.name, where)}
	}
	return outcome{err: fmt.Errorf("tool %q was cancelled%s: %w", c.name, where, err)}
}

// close releases the call's context and timer and times its outcome.
func (st *running) close(out outcome) outcome {
	if st.stop != nil {
		st.stop()
	}
	st.cancel()
	out.duration = st.elapsed()
	return out
}

// invoke calls the tool, through ToolOptions.Middleware if set, and
// encodes its output into *out, recovering a panic of the tool, of the
// middleware, of its error's Error method and of its output's MarshalJSON.
// A returned outcome, or the locals of the middleware's call and of the
// encoding, would widen the frames under the tool's. The tool's stack would
// then grow, a copy a call, in the input's decoding (BENCHMARKS.md, section 1).
func (e *Executor) invoke(ctx context.Context, tool *tools.Tool, in tools.Checked, c *toolCall, out *outcome) {
	*out = outcome{limit: tool.MaxOutput()}
	while := "" // what of the tool's was running, if not the tool
	defer func() {
		if v := recover(); v != nil {
			msg := describe(v)
			e.logger().Error("converse: tool panicked", "tool", tool.Name(), "while", while, "panic", msg, "stack", string(debug.Stack()))
			*out = outcome{err: fmt.Errorf("%w: tool %q%s: %s", ErrToolPanic, tool.Name(), while, msg), limit: out.limit}
		}
	}()
	var v any
	var err error
	if len(e.Middleware) == 0 {
		v, err = in.Call(ctx)
	} else {
		v, err = e.callThrough(ctx, tool, c, &while)
	}
	out.fill(tool, v, err, &while)
}

// callThrough calls the tool through ToolOptions.Middleware.
func (e *Executor) callThrough(ctx context.Context, tool *tools.Tool, c *toolCall, while *string) (any, error) {
	return e.handler(tool, while)(ctx, Call{ID: c.id, Tool: c.name, Input: c.input})
}

// fill sets out from what a call's tool returned, encoding the output. It
// notes in while what of the tool's it runs, for invoke's recover.
func (out *outcome) fill(tool *tools.Tool, v any, err error, while *string) {
	if err != nil {
		*while = " while its error was read"
		out.err, out.text = err, errorText(err)
		return
	}
	*while = " while its output was encoded"
	v, media, encode := resultParts(v)
	if encode {
		b, err := json.Marshal(v)
		if err != nil {
			out.err = fmt.Errorf("%w: tool %q: %s", ErrToolOutput, tool.Name(), outputProblem(err))
			return
		}
		out.output = b
	}
	out.media = media
}
