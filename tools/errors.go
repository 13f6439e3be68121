package tools

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrInvalidInput is wrapped by every [*InputError]: the model sent an input
// the tool cannot accept.
var ErrInvalidInput = errors.New("invalid input")

// ErrOutputTooLarge is wrapped by the error a [Command] tool returns when the
// program writes more than 1 MiB to standard output (or more than its
// [Options].MaxOutput, if that is larger).
var ErrOutputTooLarge = errors.New("output too large")

// ErrInvalidTool is wrapped by the errors of constructors and [Registry.Add]
// when a tool's name, description, schema or function is not acceptable.
var ErrInvalidTool = errors.New("tools: invalid tool")

// ErrDuplicate is wrapped by the error of [Registry.Add] when a name is
// already taken.
var ErrDuplicate = errors.New("tools: duplicate tool")

// InputError reports an input that is not a JSON object or fails the tool's
// schema. Its text is written for the model, so that it can fix its call.
type InputError struct {
	// Tool is the name of the tool that rejected the input.
	Tool string
	// Reason says which properties are wrong and why.
	Reason string
}

// maxReason bounds an InputError's Reason, in bytes: a reason quotes the
// input, which may be megabytes long.
const maxReason = 2 << 10

// newInputError is the InputError of tool for reason, cut to maxReason.
func newInputError(tool, reason string) *InputError {
	if len(reason) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut] + fmt.Sprintf("… (%d bytes more)", len(reason)-cut)
	}
	return &InputError{Tool: tool, Reason: reason}
}

// Error returns "invalid input: " followed by the reason.
func (e *InputError) Error() string { return ErrInvalidInput.Error() + ": " + e.Reason }

// Unwrap returns [ErrInvalidInput].
func (e *InputError) Unwrap() error { return ErrInvalidInput }

// ExitError reports that a [Command] tool's program exited with a non-zero
// status.
type ExitError struct {
	// Code is the exit status, or -1 if a signal ended the program.
	Code int
	// Stderr is the end (about the last 2 KiB) of the program's standard error,
	// trimmed of surrounding white space.
	Stderr string
}

// Error returns "exit status N" followed by the end of standard error, if any.
func (e *ExitError) Error() string {
	msg := fmt.Sprintf("exit status %d", e.Code)
	if e.Code < 0 {
		msg = "killed by a signal"
	}
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// invalid returns an error wrapping [ErrInvalidTool] that names the tool.
func invalid(name, format string, args ...any) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidTool, name, fmt.Sprintf(format, args...))
}
