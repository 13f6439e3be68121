// Package modelerr words the errors of tool calls for the model, which
// reads them in a tool result, while Go callers still find what they wrap
// with errors.Is and errors.As. The tools package and its integrations
// (mcptools, lambdatool) share it, so that their texts carry no Go package
// prefix.
package modelerr

import "fmt"

type modelError struct {
	text string
	err  error
}

// Errorf returns an error whose text is format's, with args, for the model,
// and which wraps err, whose own text it leaves out.
func Errorf(err error, format string, args ...any) error {
	return &modelError{text: fmt.Sprintf(format, args...), err: err}
}

func (e *modelError) Error() string { return e.text }

func (e *modelError) Unwrap() error { return e.err }
