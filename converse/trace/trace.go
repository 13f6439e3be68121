// Package trace writes what happens in a conversation as a trace a person
// reads, one line a thing, the trace `converse -v` prints:
//
//	· turn 1: tool_use; tokens 412 in, 61 out
//	→ calculator t1 {"a":6,"b":7,"operation":"multiply"}
//	← calculator t1 success in 1.2ms: 42
//	· risky c3 denied by the user: not approved at the terminal
//
// [Trace.Event] is an Options.OnEvent and [Trace.Handler] an Options.Logger
// handler, so that a service gets the same lines with no type switch of its
// own:
//
//	tr := trace.New(os.Stderr)
//	c := converse.New(client, modelID, reg, func(o *converse.Options) {
//		o.OnEvent = tr.Event
//		o.Logger = slog.New(tr.Handler())
//	})
//
// What models, tools and servers control (names, ids, inputs, outputs,
// reasons) is shown on one line, capped at 300 characters. It is quoted as
// strconv.Quote does when it holds a character that does not print. So no
// escape sequence reaches a terminal through the trace. Assistant
// text is not part of the trace. Credentials are never in an event; a
// writer that must also redact what a tool or server echoes (as the CLI's
// does) is the caller's to pass in.
package trace

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/modelinfo"
)

// Trace writes the trace of one or more conversations to a writer, each
// line in one Write. It is safe for concurrent use: the library logs from
// tools' goroutines beside the events.
type Trace struct {
	mu sync.Mutex
	w  io.Writer
}

// New returns a Trace writing to w.
func New(w io.Writer) *Trace {
	return &Trace{w: w}
}

// Printf writes a line of the caller's own to the trace, in order with the
// events' lines; format should end with a newline. The caller makes what
// it did not write itself printable.
func (t *Trace) Printf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, format, args...)
}

// Result writes the line of what a Send or Resume used: its model calls,
// tokens and, when the prices are known (Result.CostUSD), cost, as "·
// total: 2 model calls, tokens 20 in, 10 out; $0.000210".
func (t *Trace) Result(res *converse.Result) {
	cost := ""
	if res.CostUSD != nil {
		cost = "; " + usd(*res.CostUSD)
	}
	t.Printf("· total: %s, tokens %d in, %d out%s%s\n", count(res.Turns, "model call"), res.Usage.InputTokens, res.Usage.OutputTokens, cacheNote(res.Usage), cost)
}

// Event writes the line of ev, if it has one. Tool calls have a line as
// they start ("→ NAME ID INPUT") and one as they end ("← NAME ID STATUS in
// DURATION: OUTPUT"). The end's line lists the media returned and those
// left out, and why. Each model call's line has its stop reason, tokens
// and cost, at modelinfo.PricesOf's prices for the model that answered.
// Trims of the history, rejected answers, streaming and model fallbacks,
// approval decisions and resumes have lines too. Text, ToolStart's twin
// ApprovalRequested and StateSaved have none.
func (t *Trace) Event(ev converse.Event) {
	switch e := ev.(type) {
	case converse.TurnEnd:
		t.Printf("· turn %d: %s; tokens %d in, %d out%s%s\n", e.Turn, Printable(string(e.StopReason)), e.Usage.InputTokens, e.Usage.OutputTokens, cacheNote(e.Usage), costNote(e.Model, e.Usage))
	case converse.Trimmed:
		t.Printf("· turn %d: %s: %d messages dropped, %d tool results shortened; about %d tokens, now %d\n",
			e.Turn, trimReason(e), e.DroppedMessages, e.ShortenedResults, e.TokensBefore, e.TokensAfter)
	case converse.ToolStart:
		t.Printf("→ %s %s %s\n", Printable(e.Name), Printable(e.ID), Short(string(e.Input)))
	case converse.ToolEnd:
		t.toolEnd(e)
	case converse.AnswerRejected:
		t.Printf("· turn %d: answer rejected and sent back (%s): %s\n", e.Turn, Short(e.Reason), Short(e.Answer))
	case converse.StreamFallback:
		t.Printf("· turn %d: %s\n", e.Turn, Short(e.Reason))
	case converse.ModelFallback:
		t.Printf("· turn %d: model %s failed (%s); trying %s\n", e.Turn, Printable(e.From), Short(e.Err.Error()), Printable(e.To))
	case converse.ApprovalDecided:
		t.Printf("· %s %s %s\n", Printable(e.Call.Tool), Printable(e.Call.ID), decided(e.Decision))
	case converse.Resumed:
		t.Printf("· resuming the session: %s, %s\n", count(e.Messages, "message"), count(e.Decisions, "decision"))
	}
}

func (t *Trace) toolEnd(e converse.ToolEnd) {
	result := string(e.Output)
	if e.Err != nil {
		result = e.Err.Error()
	}
	if errors.Is(e.Err, converse.ErrCallInterrupted) { // it ran in a process that died: no duration
		t.Printf("← %s %s %s: %s\n", Printable(e.Name), Printable(e.ID), e.Status, Short(result))
		return
	}
	if e.Abandoned {
		result += " (answered before the tool returned; it is being stopped)"
	}
	t.Printf("← %s %s %s in %v: %s\n", Printable(e.Name), Printable(e.ID), e.Status, duration(e.Duration), withMedia(Short(result), e.Media))
}

// decided is a decision as the trace shows it: "approved", "denied by the
// user: not approved at the terminal".
func decided(d converse.Decision) string {
	s := string(d.Verdict)
	if d.By != "" {
		s += " by " + Short(d.By)
	}
	if d.Reason != "" {
		s += ": " + Short(d.Reason)
	}
	return s
}

// withMedia adds the images and documents of a tool's result to its line,
// as "[image/png, 12 KiB]" or "[image/png, 12 KiB: left out, why]", never
// their bytes.
func withMedia(result string, media []converse.MediaInfo) string {
	for _, m := range media {
		if result != "" {
			result += " "
		}
		result += Printable(m.String())
	}
	return result
}

// cacheNote is the prompt cache's part of a turn's usage, if any.
func cacheNote(u converse.Usage) string {
	if u.CacheReadInputTokens == 0 && u.CacheWriteInputTokens == 0 {
		return ""
	}
	return fmt.Sprintf(", %d read from the cache, %d written to it", u.CacheReadInputTokens, u.CacheWriteInputTokens)
}

// costNote is the cost of u at the prices of model, the model that
// answered the turn (a fallback's, maybe), as "; $0.000123", or nothing
// when the price table does not know them.
func costNote(model string, u converse.Usage) string {
	prices, ok := modelinfo.PricesOf(model)
	if !ok {
		return ""
	}
	return "; " + usd(u.Cost(prices))
}

// usd is an amount in US dollars as the trace shows it: to the millionth,
// as a turn of a small model costs less than a cent.
func usd(v float64) string { return fmt.Sprintf("$%.6f", v) }

// trimReason says why a history was trimmed.
func trimReason(e converse.Trimmed) string {
	if e.Overflow {
		return "the input was too long for the model; trimmed the history and retried"
	}
	return "trimmed the history to fit the context window"
}
