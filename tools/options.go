package tools

import (
	"maps"
	"time"
)

// Option configures a tool made by [New], [NewRaw] or [Command]. Options
// apply in order; a later one overrides an earlier one of the same kind,
// except [WithEnv] and [WithInheritEnv], which add up.
type Option func(*options)

type options struct {
	timeout     time.Duration
	speculative bool
	maxOutput   int
	env         map[string]string // for Command only, as is inheritEnv
	inheritEnv  []string
	envSet      bool // WithEnv or WithInheritEnv was given
}

// collectPlain collects the options of a tool that runs a Go function, which
// has no environment to set.
func collectPlain(name string, opts []Option) (options, error) {
	o := collect(opts)
	if o.envSet {
		return o, invalid(name, "WithEnv and WithInheritEnv are for Command tools only")
	}
	return o, nil
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

// WithMaxOutput sets the bytes of output a call may send to the model: the
// executor truncates a longer result, with a marker saying so, instead of
// sending it whole. Zero means the executor's default; a negative limit is an
// error. A [Command] tool's program may write up to 1 MiB of standard output,
// or n bytes if n is larger, before it is killed.
func WithMaxOutput(n int) Option {
	return func(o *options) { o.maxOutput = n }
}

// WithEnv sets variables in the environment of a [Command] tool's program,
// in addition to those passed through from the current process (see
// [WithInheritEnv]), and overriding them. A variable named here is set
// whatever its name, AWS_* included: an explicit choice wins. Names must be
// non-empty, without "=" or NUL; values without NUL. Other constructors
// reject this option.
func WithEnv(vars map[string]string) Option {
	return func(o *options) {
		o.envSet = true
		if o.env == nil {
			o.env = make(map[string]string, len(vars))
		}
		maps.Copy(o.env, vars)
	}
}

// WithInheritEnv passes the named variables from the current process to a
// [Command] tool's program, if they are set when it starts, in addition to
// the few it gets by default (PATH, HOME, USER, LOGNAME, LANG, LC_ALL,
// LC_CTYPE, TZ, TMPDIR, and on Windows SYSTEMROOT, TEMP, TMP, USERPROFILE,
// PATHEXT). A variable named here is passed whatever its name, AWS_*
// included: an explicit choice wins. Other constructors reject this option.
func WithInheritEnv(names ...string) Option {
	return func(o *options) {
		o.envSet = true
		o.inheritEnv = append(o.inheritEnv, names...)
	}
}
