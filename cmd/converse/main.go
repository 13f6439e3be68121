package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tooluse/bedrock/converse/recording"
)

// exitInterrupted is the exit status after an interrupt: 128 + SIGINT, as
// shells report a command killed by Ctrl-C.
const exitInterrupted = 130

// main runs converse with the process's signals: an interrupt during a
// chat's turn cancels that turn only; otherwise the first interrupt (or
// SIGTERM) cancels the conversation, and run returns once the programs of
// running tools are killed and reaped; a second one exits at once.
func main() {
	ctx, cancel := context.WithCancel(context.Background())
	chat := &turns{}
	ctx = withTurns(ctx, chat)
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range signals {
			if sig != os.Interrupt || !chat.interrupt() {
				break
			}
		}
		cancel()
		<-signals
		os.Exit(exitInterrupted)
	}()
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	os.Exit(report(onTerminal(os.Stderr), err))
}

// report prints err, if any, as one line on w and returns the exit status:
// 0 for no error, 2 for a usage error, 130 for an interrupt, 1 for
// anything else. The line is redacted: an AWS error can echo the signed
// request.
func report(w io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(w, "converse: %s\n", recording.Redact(err.Error()))
	switch {
	case isUsage(err):
		return 2
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return 1
}

// usageError is a mistake in how converse was called: a bad flag, a
// manifest or recording that cannot be used. It exits with status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usageError; format may use %w.
func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

func isUsage(err error) bool {
	var ue *usageError
	return errors.As(err, &ue)
}
