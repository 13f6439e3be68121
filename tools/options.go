package tools

import (
	"maps"
	"slices"
	"time"
)

// Options configure a tool. [New], [NewRaw] and [Command] take functions
// that set them, applied in order, as the AWS SDK's constructors do:
//
//	tools.New("get_weather", "Reports the weather.", weather, func(o *tools.Options) {
//		o.Timeout = 5 * time.Second
//		o.Speculative = true
//	})
//
// The zero value is the defaults.
type Options struct {
	// Timeout is the time a call may take. For New and NewRaw tools it is
	// advice to the executor, which applies it; Command tools apply it
	// themselves, 30 seconds if it is zero. Zero means the executor's
	// default; a negative timeout is an error.
	Timeout time.Duration
	// Speculative marks a tool as safe to start before the model's turn is
	// complete: it has no side effects, so a call that turns out to be
	// unwanted costs only the work.
	Speculative bool
	// RequireApproval makes every call of the tool wait for a decision before it
	// runs: the conversation asks its approver, or pauses until it is
	// resumed with one (see converse.Options.Approver). A tool that needs
	// approval cannot be Speculative.
	RequireApproval bool
	// Resumable marks a tool that keeps the progress of each call by its
	// ID (see CallID). A call cut off by a crash is run again, with the
	// same ID, when its conversation is resumed. It is not answered as cut
	// off. The tool must go on with its work, not start it over.
	Resumable bool
	// MaxOutput is the bytes of output a call may send to the model: the
	// executor truncates a longer result, with a marker saying so. Zero
	// means the executor's default; a negative limit is an error. A Command
	// tool's program may write up to 1 MiB of standard output, or MaxOutput
	// bytes if larger, before it is killed.
	MaxOutput int
	// Strict asks the model to keep the tool's calls to its input schema
	// (Bedrock's toolSpec "strict", for the models with structured output):
	// the model's decoding is constrained, and the schema must be one the
	// model accepts for strict use. Calls are validated either way.
	Strict bool
	// Env sets variables in the environment of a Command tool's program, in
	// addition to those passed through from the current process (see
	// InheritEnv), and overriding them. A variable named here is set
	// whatever its name, AWS_* included: an explicit choice wins. Names must
	// be non-empty, without "=" or NUL; values without NUL. Other
	// constructors reject it.
	Env map[string]string
	// InheritEnv names variables passed from the current process to a
	// Command tool's program, if they are set when it starts. They come in
	// addition to the few it gets by default: PATH, HOME, USER, LOGNAME,
	// LANG, LC_ALL, LC_CTYPE, TZ, TMPDIR, and on Windows SYSTEMROOT, TEMP,
	// TMP, USERPROFILE, PATHEXT. A variable named here is passed whatever its
	// name, AWS_* included: an explicit choice wins. Other constructors
	// reject it.
	InheritEnv []string
}

// collectPlain collects the options of a tool that runs a Go function, which
// has no environment to set.
func collectPlain(name string, opts []func(*Options)) (Options, error) {
	o := collect(opts)
	if o.Env != nil || o.InheritEnv != nil {
		return o, invalid(name, "Env and InheritEnv are for Command tools only")
	}
	return o, nil
}

// collect applies opts to the zero Options. The tool keeps its own copy of
// Env and InheritEnv, which the caller may change afterwards.
func collect(opts []func(*Options)) Options {
	var o Options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	o.Env, o.InheritEnv = maps.Clone(o.Env), slices.Clone(o.InheritEnv)
	return o
}
