package tools

import "time"

// Option configures a tool made by [New], [NewRaw] or [Command].
type Option func(*options)

type options struct {
	timeout     time.Duration
	speculative bool
	inline      bool
	maxOutput   int
}

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithTimeout sets the time a call may take. For [New] and [NewRaw] tools it
// is advice to the executor, which applies it; [Command] tools apply it
// themselves. Zero means the default; a negative timeout is an error.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithSpeculative marks a tool as safe to start before the model's turn is
// complete: it has no side effects, so a call that turns out to be unwanted
// costs only the work.
func WithSpeculative() Option {
	return func(o *options) { o.speculative = true }
}

// WithInline marks a tool as a quick computation that never blocks, such as
// arithmetic or formatting. An executor runs the calls of an inline tool on
// its own goroutine instead of giving each call a goroutine of its own, which
// saves a goroutine handoff per call: several microseconds, more than such a
// call costs (see BENCHMARKS.md). A panic is still recovered. The call gets
// the turn's context, bounded by the tool's own [WithTimeout] if set, but a
// call that ignores its context and blocks cannot be abandoned: it holds up
// its turn until it returns. Leave it out for anything that does I/O or
// waits. [Command] rejects it.
func WithInline() Option {
	return func(o *options) { o.inline = true }
}

// WithMaxOutput sets the bytes of output a call may send to the model: the
// executor truncates a longer result, with a marker saying so, instead of
// sending it whole. Zero means the executor's default; a negative limit is an
// error. A [Command] tool's program may write up to 1 MiB of standard output,
// or n bytes if n is larger, before it is killed.
func WithMaxOutput(n int) Option {
	return func(o *options) { o.maxOutput = n }
}
