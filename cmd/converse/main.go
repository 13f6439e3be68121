package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/recording"
)

// The exit statuses: 0 for no error, 2 for a usage error, the others by
// the converse.Outcome of the error (converse help exit).
const (
	exitFailure     = 1   // converse.OutcomeInternal, and the CLI's own failures
	exitUsage       = 2   // a usageError
	exitRetry       = 3   // converse.OutcomeRetry
	exitCaller      = 4   // converse.OutcomeCaller
	exitLimit       = 5   // converse.OutcomeLimit
	exitPaused      = 6   // converse.OutcomePaused
	exitConflict    = 7   // converse.OutcomeConflict
	exitInterrupted = 130 // converse.OutcomeStopped: 128 + SIGINT, as shells report a command killed by Ctrl-C
)

// main runs converse with the process's signals. An interrupt during a chat's
// turn cancels that turn only. Otherwise the first interrupt (or SIGTERM)
// cancels the conversation, and run returns once the programs of running tools
// are killed and reaped. A second one exits at once.
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

// report prints err, if any, as one line on w and returns the exit status
// (see exitStatus). The line is redacted: an AWS error can echo the signed
// request.
func report(w io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(w, "converse: %s\n", recording.Redact(err.Error()))
	return exitStatus(err)
}

// exitStatus is the exit status of err: exitUsage for a usage error, else
// that of its converse.Outcome, or of the outcome a failure sets.
func exitStatus(err error) int {
	if isUsage(err) {
		return exitUsage
	}
	outcome := converse.Classify(err)
	if f := (*failure)(nil); errors.As(err, &f) && f.outcome != "" {
		outcome = f.outcome
	}
	switch outcome {
	case converse.OutcomeRetry:
		return exitRetry
	case converse.OutcomeCaller:
		return exitCaller
	case converse.OutcomeLimit:
		return exitLimit
	case converse.OutcomePaused:
		return exitPaused
	case converse.OutcomeConflict:
		return exitConflict
	case converse.OutcomeStopped:
		return exitInterrupted
	}
	return exitFailure
}

// usageError is a mistake in how converse was called: a bad flag, a
// manifest or recording that cannot be used. It exits with exitUsage.
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
