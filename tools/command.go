package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tooluse/bedrock/tools/internal/modelerr"
	"github.com/tooluse/bedrock/tools/internal/parentdeath"
)

const (
	defaultCommandTimeout = 30 * time.Second
	maxStdout             = 1 << 20 // bytes of standard output a command may write, unless Options.MaxOutput allows more
	stderrTail            = 2 << 10 // bytes of standard error kept for an ExitError
	// waitDelay bounds the wait for the pipes to close once the program has
	// exited or been killed: a process that left the program's process
	// group may still hold them.
	waitDelay = 2 * time.Second
)

// Command makes a tool that runs an external program for each call. argv[0]
// is the program (looked up in PATH if it has no slash) and argv[1:] its
// arguments, passed exactly as given: no shell is involved, and the model's
// input never reaches the arguments or the environment. The program runs in
// the working directory of the current process. Its environment is minimal:
// PATH, HOME, USER, LOGNAME, LANG, LC_ALL, LC_CTYPE, TZ and TMPDIR from the
// current process, if set (on Windows also SYSTEMROOT, TEMP, TMP, USERPROFILE
// and PATHEXT). Nothing else passes: no AWS_* credentials, no tokens.
// [Options].InheritEnv passes more variables through by name and
// [Options].Env sets variables; either wins over the defaults, whatever the name.
//
// The input, a JSON object validated against schema (see [NewRaw]), is
// written to the program's standard input, followed by a newline. If the
// program exits with status 0, its standard output is the result. Valid JSON
// becomes a [json.RawMessage], other text a string, both trimmed of
// surrounding white space. A media envelope (see the package doc) becomes a
// [Result] with images or documents. A non-zero exit is an [*ExitError]. If
// standard output exceeds 1 MiB (or [Options].MaxOutput, if larger), the
// program is killed and the error wraps [ErrOutputTooLarge].
//
// Each call has a timeout, 30 seconds unless [Options].Timeout sets another.
// When it expires or ctx ends, the program is killed (on Unix, with every
// process in its process group) and the error wraps ctx.Err() or
// [context.DeadlineExceeded]. On Unix a call leaves nothing running: when the
// program has exited, the processes it started that are still in its process
// group are killed too. A program that must leave a process behind has to
// start it in a session of its own (setsid). On Linux the program is also
// killed (SIGKILL) when the process that called the tool dies, even by
// SIGKILL, though the processes it started are not. On other systems it
// outlives a process killed that way.
func Command(name, description string, schema json.RawMessage, argv []string, opts ...func(*Options)) (*Tool, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, invalid(name, "empty command")
	}
	if err := checkIdentity(name, description); err != nil {
		return nil, err
	}
	o := collect(opts)
	env, err := newCommandEnv(name, o)
	if err != nil {
		return nil, err
	}
	if o.Timeout == 0 {
		o.Timeout = defaultCommandTimeout
	}
	c := &command{name: name, argv: slices.Clone(argv), timeout: o.Timeout, maxStdout: max(maxStdout, o.MaxOutput), env: env}
	return newRaw(name, description, schema, c.run, o)
}

type command struct {
	name      string
	argv      []string
	timeout   time.Duration
	maxStdout int
	env       commandEnv
}

func (c *command) run(parent context.Context, input json.RawMessage) (any, error) {
	ctx, cancel := context.WithTimeout(parent, c.timeout)
	defer cancel()
	// runCtx also ends when standard output overflows, which kills the program.
	runCtx, abort := context.WithCancelCause(ctx)
	defer abort(nil)

	cmd := exec.CommandContext(runCtx, c.argv[0], c.argv[1:]...)
	cmd.Env = c.env.environ()
	cmd.Stdin = bytes.NewReader(slices.Concat(input, []byte("\n")))
	stdout := &cappedBuffer{limit: c.maxStdout, overflow: func() { abort(ErrOutputTooLarge) }}
	stderr := &tailBuffer{size: stderrTail}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay
	killGroupOnCancel(cmd)

	release, err := parentdeath.Start(cmd, cmd.Start)
	if err == nil {
		err = cmd.Wait()
		release()
		_ = killGroup(cmd) // what the program started and left in its group
	}
	switch {
	case stdout.overflowed():
		return nil, modelerr.Errorf(ErrOutputTooLarge, "output too large: the program wrote more than %d bytes to standard output and was killed", c.maxStdout)
	case err == nil:
		return commandResult(stdout.bytes())
	case ctx.Err() != nil:
		return nil, c.killed(parent, ctx.Err())
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return nil, &ExitError{Code: exitErr.ExitCode(), Stderr: stderr.String()}
	}
	return nil, c.notRun(err)
}

// killed words why the program was killed. The model's tool results are no
// place for "context deadline exceeded".
func (c *command) killed(parent context.Context, err error) error {
	switch {
	case parent.Err() == nil: // the tool's own timeout
		return modelerr.Errorf(err, "the program was killed: it ran longer than the tool's timeout of %v", c.timeout)
	case errors.Is(err, context.DeadlineExceeded):
		return modelerr.Errorf(err, "the program was killed: the call timed out")
	}
	return modelerr.Errorf(err, "the program was killed: the call was canceled")
}

// notRun words why the program could not be run, without exec's Go prefixes.
func (c *command) notRun(err error) error {
	var pathErr *fs.PathError
	switch {
	case errors.Is(err, exec.ErrWaitDelay):
		return modelerr.Errorf(err, "the program exited but a process it started kept its output open")
	case errors.Is(err, exec.ErrNotFound):
		return modelerr.Errorf(err, "the program %q was not found", c.argv[0])
	case errors.As(err, &pathErr):
		return modelerr.Errorf(err, "the program %q could not be started: %v", c.argv[0], pathErr.Err)
	}
	return modelerr.Errorf(err, "the program %q could not be run", c.argv[0])
}

// commandResult returns a media envelope as a [Result], other valid JSON as it
// is, so that a program can return structured results, and anything else as
// text. Bytes that are not UTF-8 become U+FFFD, as standard error's do.
func commandResult(stdout []byte) (any, error) {
	out := bytes.TrimSpace(stdout)
	if !utf8.Valid(out) {
		out = bytes.ToValidUTF8(out, []byte("\uFFFD"))
	}
	if res, ok, err := mediaEnvelope(out); ok {
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	if json.Valid(out) {
		return json.RawMessage(out), nil
	}
	return string(out), nil
}

// cappedBuffer collects up to limit bytes. The write that would exceed the
// limit fails, which stops exec's copying, and calls overflow once.
type cappedBuffer struct {
	limit    int
	overflow func()

	mu   sync.Mutex
	buf  bytes.Buffer
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over || b.buf.Len()+len(p) > b.limit {
		if !b.over {
			b.over = true
			b.overflow()
		}
		return 0, ErrOutputTooLarge
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) overflowed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.over
}

func (b *cappedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}

// tailBuffer keeps the last size bytes written to it.
type tailBuffer struct {
	size int

	mu        sync.Mutex
	buf       []byte
	truncated bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.size; over > 0 {
		b.buf = b.buf[:copy(b.buf, b.buf[over:])]
		b.truncated = true
	}
	return len(p), nil
}

// String returns the tail as text, marked with "..." if the start was cut.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail, mark := b.buf, ""
	if b.truncated {
		mark = "..."
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) { // the cut may split a character
			tail = tail[1:]
		}
	}
	return mark + strings.TrimSpace(strings.ToValidUTF8(string(tail), "\uFFFD"))
}
